"""An output that is an input by another name (``/dev/fd/0``, standard input read from the
file) is refused before any work, by what the files are (device and inode): one line, exit
status 2, the input untouched."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import fresh

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


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
    with open(query, "rb") as fh:
        done = fresh(["-m", "wavedp.cli", *args, "--device", "cpu"], stdin=fh,
                     capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "would overwrite the input" in lines[0]
    assert query.read_bytes() == before
