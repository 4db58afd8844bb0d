"""Standard input as QUERIES or DB, and gzip output by the output's name."""

from __future__ import annotations

import gzip
from pathlib import Path

from helpers import invoke

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
Q, T = EXAMPLES / "query.fa", EXAMPLES / "target.fa"


def test_queries_from_standard_input_equal_the_file():
    want = invoke("search", Q, T, "--device", "cpu")
    got = invoke("search", "-", T, "--device", "cpu", stdin=Q.read_bytes())
    assert got.exit_code == want.exit_code == 0 and got.stdout == want.stdout != ""


def test_a_database_from_standard_input_equals_the_file():
    want = invoke("search", Q, T, "--device", "cpu")
    got = invoke("search", Q, "-", "--device", "cpu", stdin=gzip.compress(T.read_bytes()))
    assert got.exit_code == 0 and got.stdout == want.stdout


def test_a_fault_on_standard_input_names_it():
    got = invoke("search", "-", T, "--device", "cpu", stdin=b">a\nMK\x00T\n")
    assert got.exit_code == 2
    assert got.stderr.startswith("wavedp: error: standard input, record 'a', position 3")


def test_both_from_standard_input_and_resume_from_it_are_refused(tmp_path):
    assert "both be standard input" in invoke("search", "-", "-", stdin=Q.read_bytes()).stderr
    got = invoke("search", "-", T, "-o", tmp_path / "o.tsv", "--resume", stdin=Q.read_bytes())
    assert got.exit_code == 2 and "--resume" in got.stderr
    assert list(tmp_path.iterdir()) == []


def test_gzip_output_decompresses_to_the_same_bytes(tmp_path):
    want = invoke("search", Q, T, "--device", "cpu", "--format", "sam").stdout
    for resume in ([], ["--resume"]):
        out = tmp_path / f"o{len(resume)}.sam.gz"
        assert invoke("search", Q, T, "--device", "cpu", "--format", "sam", "-o", out,
                      *resume).exit_code == 0
        got = gzip.decompress(out.read_bytes()).decode()
        assert [line for line in got.splitlines() if not line.startswith("@PG")] == [
            line for line in want.splitlines() if not line.startswith("@PG")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o0.sam.gz", "o1.sam.gz"]
