"""Line ends ``\\n``, ``\\r\\n`` and ``\\r`` alone read alike: the same records by the record
reader, the same database and the same search output (the piece parser's, against the record
reader's: test_makedb.py's ``test_line_ends_of_a_carriage_return``)."""

from __future__ import annotations

import gzip

import pytest
from click.testing import CliRunner

from wavedp.cli import cli
from wavedp.seqio import read_records

RECORDS = [("a", "MKV" * 40), ("b", "ACDEFGHIKLMNPQRSTVWY" * 6), ("c", "W")]


def _fasta(end: str, width: int = 60) -> bytes:
    text = ""
    for rid, seq in RECORDS:
        text += f">{rid} some title{end}"
        text += "".join(seq[k:k + width] + end for k in range(0, len(seq), width))
    return text.encode()


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("zipped", [False, True])
def test_readers(tmp_path, end, zipped):
    path = tmp_path / ("a.fa.gz" if zipped else "a.fa")
    data = _fasta(end)
    path.write_bytes(gzip.compress(data) if zipped else data)
    assert read_records(path) == RECORDS


def test_search_and_makedb(tmp_path):
    outputs = []
    for k, end in enumerate(["\n", "\r\n", "\r"]):
        path = tmp_path / f"db{k}.fa"
        path.write_bytes(_fasta(end))
        made = CliRunner().invoke(cli, ["makedb", str(path), "-o", str(tmp_path / f"d{k}.wdb")])
        assert made.exit_code == 0, made.output
        assert "3 sequences" in made.stderr
        query = tmp_path / f"q{k}.fa"
        query.write_bytes(f">q one{end}{'MKVW' * 10}{end}{'ACDEF' * 4}{end}".encode())
        found = CliRunner().invoke(cli, ["search", str(query), str(tmp_path / f"d{k}.wdb"),
                                         "--device", "cpu", "--stats", "none"])
        assert found.exit_code == 0, found.output
        outputs.append(found.stdout)
    assert outputs[0] == outputs[1] == outputs[2] and outputs[0]


def test_one_long_line_is_read_in_linear_time(tmp_path):
    """A record on one long line, read in small blocks: eight times the line takes about
    eight times as long (the buffer was copied and searched again for every block, so it
    took about 64 times as long), and the pieces hold the file."""
    import time

    from wavedp.seqio import fasta_chunks

    def read(size: int) -> float:
        path = tmp_path / f"long{size}.fa"
        path.write_bytes(b">long\n" + b"ACGT" * (size // 4) + b"\n>b\nAC\n")
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            pieces = [(bytes(p), n) for p, n in fasta_chunks(str(path), block=1 << 14)]
            best = min(best, time.perf_counter() - start)
        assert b"".join(p for p, _ in pieces) == path.read_bytes()
        assert [n for _, n in pieces] == [1, 2]
        return best

    assert read(16 << 20) / read(2 << 20) < 24
