"""benchmarks/pairs_host.py: the command with its aligner replaced still runs, so the host's
own share of ``wavedp align --pairs`` stays measurable as the engines' signature moves."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def test_the_stubbed_command_writes_every_pair(tmp_path):
    """Ten seeded DNA pairs through the stubbed command: a SAM line a pair, each with the
    stub's alignment (score 140, CIGAR 30=1X40=1X30=1X47=)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import pairs_data
    finally:
        sys.path.remove(str(BENCHMARKS))
    reads, read_lengths, windows, window_lengths = pairs_data.dna(10)
    q, t, out = tmp_path / "q.fa", tmp_path / "t.fa", tmp_path / "out.sam"
    pairs_data.write_fasta(str(q), reads, read_lengths, "q")
    pairs_data.write_fasta(str(t), windows, window_lengths, "t")
    subprocess.run([sys.executable, str(BENCHMARKS / "pairs_host.py"), "--child", "align",
                    str(q), str(t), "--pairs", "--device", "cpu", "--format", "sam",
                    "-o", str(out)], check=True, capture_output=True)
    lines = [line.split("\t") for line in out.read_text().splitlines()
             if not line.startswith("@")]
    assert len(lines) == 10
    assert all(fields[5].endswith("30=1X40=1X30=1X47=") for fields in lines)
    assert all("AS:i:140" in fields for fields in lines)
