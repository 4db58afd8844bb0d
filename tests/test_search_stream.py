"""``wavedp search`` reads its queries a batch of records at a time (``QUERY_BATCH``): the
output, ``--resume`` and the checks before any output are those of one batch."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_search_cli import fasta_text, invoke, protein_set, write

from wavedp.cli import queries as query_file
from wavedp.cli import search as search_cli
from wavedp.db.database import Database


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("stream")
    queries, db = protein_set(11, 40, 12)
    wdb = folder / "db.wdb"
    Database.build(write(folder / "db.fa", fasta_text(db)), wdb, progress=False)
    return {"q": write(folder / "q.fa", fasta_text(queries)), "wdb": wdb, "queries": queries}


def _batches(monkeypatch, size: int) -> list[int]:
    """QUERY_BATCH set to ``size``; returns the sizes of the batches encoded."""
    sizes: list[int] = []
    real = query_file.Prepared.from_records

    def spied(*args, **kwargs):
        made = real(*args, **kwargs)
        sizes.append(len(made.codes))
        return made

    monkeypatch.setattr(query_file, "QUERY_BATCH", size)
    monkeypatch.setattr(query_file.Prepared, "from_records", spied)
    return sizes


@pytest.mark.parametrize("fmt", ["blast6", "sam"])
def test_batches_of_queries_write_what_one_batch_writes(inputs, monkeypatch, fmt):
    args = ["search", inputs["q"], inputs["wdb"], "--device", "cpu", "--format", fmt,
            "--top", "3"]
    whole = invoke(*args)
    assert whole.exit_code == 0, whole.output
    sizes = _batches(monkeypatch, 5)
    streamed = invoke(*args)
    assert streamed.exit_code == 0, streamed.output
    assert streamed.stdout == whole.stdout
    assert sizes == [5, 5, 2] * 2  # checked whole once, then searched batch by batch


def test_resume_across_batches(inputs, monkeypatch, tmp_path):
    args = ["search", inputs["q"], inputs["wdb"], "--device", "cpu", "--top", "3"]
    reference = tmp_path / "reference.tsv"
    assert invoke(*args, "-o", reference).exit_code == 0
    _batches(monkeypatch, 5)
    real = search_cli.Searcher.iter_search
    calls: list[set[int]] = []
    stop = [True]

    def stopping(self, queries, **kwargs):  # a stop after the third query of the 2nd batch
        calls.append(set(kwargs["skip"]))
        for n, item in enumerate(real(self, queries, **kwargs)):
            if stop[0] and len(calls) == 2 and n == 3:
                raise KeyboardInterrupt
            yield item

    monkeypatch.setattr(search_cli.Searcher, "iter_search", stopping)
    out = tmp_path / "out.tsv"
    assert invoke(*args, "-o", out, "--resume").exit_code != 0
    assert not out.exists()
    calls.clear()
    stop[0] = False
    assert invoke(*args, "-o", out, "--resume").exit_code == 0
    assert calls == [{0, 1, 2}, set()]  # the first batch done, three of the second
    assert out.read_bytes() == reference.read_bytes()


def test_a_bad_record_in_a_later_batch_stops_before_any_output(inputs, monkeypatch, tmp_path):
    records = list(inputs["queries"])
    records[10] = (records[10][0], records[10][1][:5] + "1" + records[10][1][6:])
    bad = write(tmp_path / "bad.fa", fasta_text(records))
    _batches(monkeypatch, 5)
    done = invoke("search", bad, inputs["wdb"], "--device", "cpu", "--format", "sam")
    assert done.exit_code == 2
    assert done.stdout == ""
    assert repr(records[10][0]) in done.stderr and "Traceback" not in done.stderr


def test_empty_sequences_said_once_for_the_whole_file(inputs, monkeypatch, tmp_path):
    records = list(inputs["queries"])
    records[1] = (records[1][0], "")
    records[8] = (records[8][0], "")
    q = write(tmp_path / "q.fa", fasta_text(records))
    db = write(tmp_path / "db.fa", fasta_text([("e0", ""), ("d1", "MKVLAAGIVALLLAAGCSS")]))
    _batches(monkeypatch, 5)
    done = invoke("search", q, db, "--device", "cpu")
    assert done.exit_code == 0, done.output
    said = [line for line in done.stderr.splitlines() if "empty" in line]
    assert said == [f"wavedp: warning: 2 empty queries (the first: {records[1][0]!r}) and 1 "
                    "empty database sequence (the first: 'e0'): an empty sequence has no hits"]
