"""The README's Python blocks run as written, from the repository root."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import fresh

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def test_the_readme_has_python_blocks():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{k + 1}" for k in range(len(BLOCKS))])
def test_readme_block_runs(block, tmp_path):
    """Each block in a fresh interpreter, from the repository root, on the CPU (what a user
    without a GPU gets)."""
    done = fresh(["-c", block], env={"CUDA_VISIBLE_DEVICES": ""}, cwd=ROOT, timeout=600,
                 capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
