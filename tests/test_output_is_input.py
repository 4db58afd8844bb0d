"""An output that is an input by another name (``/dev/fd/0``, standard input read from the
file) is refused before any work, by what the files are (device and inode): one line, exit
status 2, the input untouched."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def _run(args: list[str], stdin: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with open(stdin, "rb") as fh:
        return subprocess.run([sys.executable, "-m", "wavedp.cli", *args], stdin=fh, env=env,
                              capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("command", ["search", "align"])
@pytest.mark.parametrize("case", ["fd0", "stdin"])
def test_output_is_an_input(tmp_path, command, case):
    query = tmp_path / "q.fa"
    query.write_bytes((EXAMPLES / "query.fa").read_bytes())
    before = query.read_bytes()
    if case == "fd0":  # the output is standard input, which reads q.fa
        args = [command, str(query), str(EXAMPLES / "target.fa"), "-o", "/dev/fd/0"]
    else:  # the query is standard input, and the output its file by name
        args = [command, "-", str(EXAMPLES / "target.fa"), "-o", str(query)]
    done = _run([*args, "--device", "cpu"], stdin=query)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "would overwrite the input" in lines[0]
    assert query.read_bytes() == before
