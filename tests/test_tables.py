"""wavedp.dbsearch.tables: hits as a DataFrame, an Arrow table and a Parquet file (round trip to
the Alignment fields), target indices, and the errors of a missing optional dependency."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest
from helpers import DNA, PROTEIN, random_seq, related

import wavedp
from wavedp import Alignment, InputError
from wavedp.columns import FIELDS
from wavedp.dbsearch import Database, iter_search
from wavedp.dbsearch.strands import reverse_complement
from wavedp.dbsearch.tables import (
    INDEX_COLUMNS,
    TABLE_FIELDS,
    table_columns,
    to_arrow,
    to_frame,
    write_parquet,
)

PROT = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
DNA_SCORING = wavedp.Scoring(match=2, mismatch=-3, gap_open=7, gap_extend=2)
STRANDS = {"plus": "+", "minus": "-", "N/A": None}


def _protein() -> tuple[list[str], Database]:
    rng = np.random.default_rng(2)
    queries = [random_seq(rng, PROTEIN, int(n)) for n in (60, 120, 90)]
    texts = [related(rng, q, PROTEIN, rate) for q in queries for rate in (0.1, 0.4)]
    texts += [random_seq(rng, PROTEIN, 80) for _ in range(4)]
    return queries, Database.from_sequences(texts, [f"p{k}" for k in range(len(texts))])


def _dna() -> tuple[list[str], Database]:
    rng = np.random.default_rng(3)
    queries = [random_seq(rng, DNA, 100), random_seq(rng, DNA, 70)]
    texts = [reverse_complement(related(rng, queries[0], DNA, 0.1), np.zeros(0, np.uint8))[0],
             related(rng, queries[1], DNA, 0.1), random_seq(rng, DNA, 60)]
    return queries, Database.from_sequences(texts, alphabet="dna")


def _results() -> list[tuple[list[list[Alignment]], Database, wavedp.Scoring]]:
    """Searches whose hits hold every kind of value: statistics or none (global mode),
    tracebacks or score-only, both DNA strands."""
    queries, db = _protein()
    dna_queries, dna_db = _dna()
    return [
        (wavedp.search(queries, db, PROT, top=4, evalue=None, device="cpu"), db, PROT),
        (wavedp.search(queries, db, PROT, top=3, evalue=None, traceback=False, device="cpu"),
         db, PROT),
        (wavedp.search(queries, db, PROT, top=2, mode="global", device="cpu"), db, PROT),
        (wavedp.search(dna_queries, dna_db, DNA_SCORING, top=0, evalue=None, device="cpu"),
         dna_db, DNA_SCORING),
    ]


def _as_alignment_fields(row: dict) -> dict:
    """The Alignment fields a table row states (BLAST's coordinates back to 0-based)."""
    strand = STRANDS[row["sstrand"]]
    qstart, qend, sstart, send = row["qstart"], row["qend"], row["sstart"], row["send"]
    m = row["qlen"]
    if strand == "-":
        sstart, send = send, sstart
        if qstart is not None:  # BLAST's range on the original query
            qstart, qend = (None if qend is None else m - qend + 1), m - qstart + 1
    return {
        "score": row["score"], "query_start": None if qstart is None else qstart - 1,
        "query_end": qend, "target_start": None if sstart is None else sstart - 1,
        "target_end": send, "cigar": row["cigar"], "query_id": row["qseqid"],
        "target_id": row["sseqid"], "query_length": m, "target_length": row["slen"],
        "evalue": row["evalue"], "bitscore": row["bitscore"], "strand": strand,
    }


def _fields(aln: Alignment) -> dict:
    return {name: getattr(aln, name) for name in (
        "score", "query_start", "query_end", "target_start", "target_end", "cigar",
        "query_id", "target_id", "query_length", "target_length", "evalue", "bitscore",
        "strand")}


def test_parquet_round_trip_equals_the_alignment_fields(tmp_path):
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    for results, db, scoring in _results():
        path = tmp_path / "hits.parquet"
        count = write_parquet(results, path, scoring=scoring, database=db)
        hits = [(k, h) for k, found in enumerate(results) for h in found]
        assert count == len(hits) > 0
        table = pq.read_table(path)
        assert table.column_names == list(table_columns(None, scoring))
        for (k, hit), row in zip(hits, table.to_pylist(), strict=True):
            assert _as_alignment_fields(row) == _fields(hit)
            assert row["query_index"] == k and db.id(row["target_index"]) == hit.target_id
            assert db.text(row["target_index"]) == hit.target
        assert table.equals(to_arrow(results, scoring=scoring, database=db))


def test_frame_types_and_values():
    pytest.importorskip("pandas")
    results, db, scoring = _results()[1]  # score-only: starts and CIGAR missing
    frame = to_frame(results, scoring=scoring, database=db)
    assert list(frame.columns) == list(INDEX_COLUMNS + TABLE_FIELDS)
    assert len(frame) == sum(len(found) for found in results)
    assert frame["score"].dtype == np.int64 and frame["qlen"].dtype == np.int64
    assert str(frame["qstart"].dtype) == "Int64" and frame["qstart"].isna().all()
    assert frame["qend"].dtype == np.int64  # known on score-only hits too
    assert frame["evalue"].dtype == np.float64 and frame["pident"].isna().all()
    assert frame["cigar"].dtype == object and frame["cigar"].isna().all()
    assert (frame["sstrand"] == "N/A").all()
    full = to_frame(_results()[0][0], scoring=PROT, database=db)
    assert str(full["qstart"].dtype) == "int64" and full["pident"].dtype == np.float64
    hit = _results()[0][0][0][0]
    c = hit.counts()
    assert full.loc[0, "pident"] == 100 * c["="] / c["length"]  # unrounded
    assert full.loc[0, "qseq"] == hit.rows()[0]


def test_frame_of_iter_search_equals_frame_of_search():
    pytest.importorskip("pandas")
    queries, db = _protein()
    listed = to_frame(wavedp.search(queries, db, PROT, top=3, device="cpu"), database=db)
    streamed = to_frame(iter_search(queries, db, PROT, top=3, device="cpu", skip=[0]),
                        database=db)
    assert streamed.equals(listed[listed["query_index"] != 0].reset_index(drop=True))


def test_columns_choice_and_empty_results():
    pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    results, db, _ = _results()[0]
    frame = to_frame(results, columns="sseqid score evalue")
    assert list(frame.columns) == ["query_index", "target_index", "sseqid", "score", "evalue"]
    assert str(frame["target_index"].dtype) == "Int64" and frame["target_index"].isna().all()
    empty = to_frame([[], []])
    assert len(empty) == 0 and list(empty.columns) == list(table_columns())
    assert "positive" not in table_columns() and "positive" in table_columns(None, PROT)
    assert to_arrow([]).num_rows == 0
    buffer = io.BytesIO()
    assert write_parquet([[]], buffer) == 0 and buffer.getvalue()[:4] == b"PAR1"
    assert set(TABLE_FIELDS) == set(FIELDS) - {"qaccver", "saccver"}


def test_target_index_by_id_then_text():
    pytest.importorskip("pandas")
    db = Database.from_sequences(["MKVLAAGICWTERH", "WWWWPPPPKKKKLL", "MKVLAAGICWTERH",
                                  "QQQQHHHHRRRRTT"], ["a", "dup", "dup2", "dup"])
    results = wavedp.search(["MKVLAAGICWTERH", "WWWWPPPPKKKK", "QQQQHHHHRRRR"], db, PROT,
                            top=1, evalue=None, device="cpu")
    frame = to_frame(results, database=db)
    assert frame["target_index"].tolist() == [0, 1, 3]  # "dup" twice: the text decides
    same = Database.from_sequences(["WWWWPPPPKKKK", "WWWWPPPPKKKK"], ["x", "x"])
    frame = to_frame(wavedp.search(["WWWWPPPPKKKK"], same, PROT, top=0, evalue=None,
                                   device="cpu"), database=list(same.ids))
    assert frame["target_index"].isna().all()  # two records alike: unknown
    with pytest.raises(InputError, match="not in the database"):
        to_frame(results, database=["a"])


def test_bad_input_is_an_input_error():
    pytest.importorskip("pandas")
    with pytest.raises(InputError, match="results"):
        to_frame(None)
    with pytest.raises(InputError, match="not an Alignment"):
        to_frame([[1, 2]])
    with pytest.raises(InputError, match="bogus"):
        to_frame([], columns="qseqid bogus")
    with pytest.raises(InputError, match="Scoring"):
        to_frame([], columns=["positive"])


@pytest.mark.parametrize("module, call", [
    ("pandas", lambda: to_frame([])),
    ("pyarrow", lambda: to_arrow([])),
    ("pyarrow", lambda: write_parquet([], "unused.parquet")),
])
def test_a_missing_optional_dependency_is_one_input_error(monkeypatch, module, call):
    monkeypatch.setitem(sys.modules, module, None)
    monkeypatch.delitem(sys.modules, "pyarrow.parquet", raising=False)
    with pytest.raises(InputError, match=r"needs " + module + r": pip install 'wavedp\[tables\]'"):
        call()
