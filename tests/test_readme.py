"""The README's Python blocks run as written, from the repository root, and print what the
README says they print; its console session prints the lines it shows."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import fresh

from wavedp.cli import cli

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)
SESSIONS = re.findall(r"```console\n(.*?)```", README, re.S)
#: a print call and the comment after it: what it prints (a remark in parentheses after two
#: spaces aside)
PRINTED = re.compile(r"^(print\(.*\))\s+# (.+?)(?:  \(.*\))?$")
#: the block run with each print call's output kept by the number of its line
RECORDER = """
import builtins, sys
_lines = {}
def print(*args, sep=" ", end="\\n", file=None):
    line = sys._getframe(1).f_lineno
    _lines[line] = _lines.get(line, "") + sep.join(map(str, args)) + end
    builtins.print(*args, sep=sep, end=end, file=file)
"""


def test_the_readme_has_python_blocks():
    assert len(BLOCKS) >= 3 and len(SESSIONS) >= 1
    assert sum(bool(PRINTED.match(line)) for b in BLOCKS for line in b.splitlines()) >= 7


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{k + 1}" for k in range(len(BLOCKS))])
def test_readme_block_prints_what_it_says(block, tmp_path):
    """Each block in a fresh interpreter, from the repository root, on the CPU (what a user
    without a GPU gets); each print call commented with its output prints that (tabs may be
    shown as spaces)."""
    expected = {k + 1: m.group(2) for k, line in enumerate(block.splitlines())
                if (m := PRINTED.match(line))}
    script = RECORDER + "exec(compile(" + repr(block) + ", 'README', 'exec'))\n" + \
        "builtins.print('@@', repr(_lines), file=sys.stderr)\n"
    done = fresh(["-c", script], env={"CUDA_VISIBLE_DEVICES": ""}, cwd=ROOT, timeout=600,
                 capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    printed = eval(done.stderr.split("@@ ", 1)[1])  # noqa: S307 (the test's own repr)
    for line, want in expected.items():
        got = printed.get(line, "").split()  # tabs shown as spaces
        assert got == want.split(), (line, block.splitlines()[line - 1])


def test_readme_session_prints_its_lines(tmp_path, monkeypatch):
    """The console session's commands print the lines shown (the hits' columns spaced out
    there, tab-separated here; the database in a folder of the test's own)."""
    monkeypatch.chdir(ROOT)
    lines = SESSIONS[0].strip().splitlines()
    runs = [k for k, line in enumerate(lines) if line.startswith("$ ")]
    for k, start in enumerate(runs):
        words = shlex.split(lines[start][2:])
        assert words[0] == "wavedp"
        words = [str(tmp_path / w) if w.endswith(".wdb") else w for w in words[1:]]
        shown = lines[start + 1:runs[k + 1] if k + 1 < len(runs) else len(lines)]
        got = CliRunner().invoke(cli, [*words, "--device", "cpu"] if words[0] == "search"
                                 else words)
        assert got.exit_code == 0, got.output
        text = got.stdout if words[0] == "search" else got.stderr.replace(str(tmp_path) + "/",
                                                                          "")
        assert [line.split() for line in text.strip().splitlines()] == \
            [line.split() for line in shown]
