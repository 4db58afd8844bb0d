"""The command line's interfaces for pipelines: --columns and --header (align and search),
--format parquet, and ``wavedp scores``."""

from __future__ import annotations

import gzip
import io
import sys

import numpy as np
import pytest
from helpers import invoke
from test_streams import EXAMPLES, Q, T

import wavedp
from wavedp import columns, seqio
from wavedp.dbsearch import tables
from wavedp.dbsearch.api import open_database

PROT = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)


def test_default_columns_and_std_equal_blast6():
    want = invoke("search", Q, T, "--device", "cpu").stdout
    assert invoke("search", Q, T, "--device", "cpu", "--columns", "std").stdout == want
    spelled = " ".join(columns.DEFAULT)
    assert invoke("search", Q, T, "--device", "cpu", "--columns", spelled).stdout == want
    assert invoke("search", Q, T, "--device", "cpu", "--columns",
                  ",".join(columns.DEFAULT)).stdout == want


def test_chosen_columns_in_their_order_with_a_header():
    """--header: each query's block as -outfmt 7 writes it, then how many queries."""
    got = invoke("search", Q, T, "--device", "cpu", "--columns", "sseqid,score btop qseqid",
                 "--header")
    assert got.exit_code == 0
    hits = wavedp.search(str(Q), str(T), PROT, device="cpu")
    titles = [seqio.whole_title(rid, title)
              for rid, _, title in seqio.iter_records(Q, titles=True)]
    want = []
    for title, found in zip(titles, hits, strict=True):
        want += [f"# wavedp {wavedp.__version__}", f"# Query: {title}", f"# Database: {T}",
                 "# Fields: subject id, score, BTOP, query id", f"# {len(found)} hits found"]
        for h in found:
            want.append(f"{h.target_id}\t{h.score}\t{columns.values(h, ['btop'])[0]}\t{h.query_id}")
    assert got.stdout.splitlines() == [*want, f"# wavedp processed {len(titles)} queries"]


def test_align_takes_columns_too():
    got = invoke("align", Q, T, "--device", "cpu", "--format", "blast6", "--columns",
                 "qseqid sseqid score cigar qseq sseq")
    assert got.exit_code == 0
    fields = [line.split("\t") for line in got.stdout.splitlines()]
    queries, targets = seqio.read_records(str(Q)), seqio.read_records(str(T))
    alignments = wavedp.align_all([s for _, s in queries], [s for _, s in targets], PROT,
                                  device="cpu")
    ids = [(q, t) for q, _ in queries for t, _ in targets]
    assert len(fields) == len(alignments) == len(ids) > 0
    for row, aln, (qid, tid) in zip(fields, alignments, ids, strict=True):
        assert row[:4] == [qid, tid, str(aln.score), aln.cigar]
        query_row, target_row = aln.rows()
        assert (row[4], row[5]) == (query_row.upper(), target_row.upper())


@pytest.mark.parametrize("args, says", [
    (["--columns", "qseqid bogus"], "unknown column 'bogus'"),
    (["--columns", ""], "column"),
    (["--columns", "qseqid", "--format", "sam"], "--columns applies to --format"),
    (["--header", "--format", "json"], "--header applies to --format blast6"),
])
def test_bad_column_requests_are_one_line(args, says):
    for command in ("search", "align"):
        got = invoke(command, Q, T, "--device", "cpu", *args)
        assert got.exit_code == 2, got.output
        assert got.stderr.count("\n") == 1 and says in got.stderr
        assert "Traceback" not in got.output


def test_parquet_round_trips_the_alignment_fields(tmp_path):
    pandas = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    out = tmp_path / "hits.parquet"
    got = invoke("search", Q, T, "--device", "cpu", "--format", "parquet", "-o", out)
    assert got.exit_code == 0, got.output
    table = pandas.read_parquet(out)
    hits = wavedp.search(str(Q), str(T), PROT, device="cpu")
    db = open_database(str(T), PROT)
    want = tables.to_frame(hits, scoring=PROT, database=db)
    pandas.testing.assert_frame_equal(table, want, check_dtype=False)
    rows = [h for per_query in hits for h in per_query]
    assert table["score"].tolist() == [h.score for h in rows]
    assert table["cigar"].tolist() == [h.cigar for h in rows]
    assert table["qstart"].tolist() == [h.query_start + 1 for h in rows]
    assert table["target_index"].tolist() == [list(db.ids).index(h.target_id) for h in rows]
    # to standard output too: the same bytes
    assert invoke("search", Q, T, "--device", "cpu", "--format", "parquet").stdout_bytes \
        == out.read_bytes()


def test_parquet_refusals_are_one_line(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    got = invoke("search", Q, T, "--format", "parquet", "-o", tmp_path / "x.parquet", "--resume")
    assert got.exit_code == 2 and "--resume" in got.stderr
    got = invoke("search", Q, T, "--format", "parquet", "-o", tmp_path / "x.parquet.gz")
    assert got.exit_code == 2 and ".gz" in got.stderr
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # as if not installed
    got = invoke("search", Q, T, "--format", "parquet", "-o", tmp_path / "x.parquet")
    assert got.exit_code == 2 and "pip install 'wavedp[tables]'" in got.stderr
    assert got.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_scores_command_writes_the_matrix(tmp_path):
    want = wavedp.scores(str(Q), str(T), PROT, device="cpu")
    got = invoke("scores", Q, T, "--device", "cpu", "-o", tmp_path / "m.npy")
    assert got.exit_code == 0
    assert np.array_equal(np.load(tmp_path / "m.npy"), want)
    text = invoke("scores", Q, T, "--device", "cpu").stdout
    rows = [line.split("\t") for line in text.splitlines()]
    assert rows[0][1:] == [rid for rid, _ in seqio.read_records(str(T))]
    assert np.array_equal(np.array([r[1:] for r in rows[1:]], dtype=np.int64), want)
    assert invoke("scores", Q, T, "--device", "cpu", "-o", tmp_path / "m.tsv.gz").exit_code == 0
    assert gzip.decompress((tmp_path / "m.tsv.gz").read_bytes()).decode() == text
    npy = invoke("scores", Q, T, "--device", "cpu", "--format", "npy").stdout_bytes
    assert np.array_equal(np.load(io.BytesIO(npy)), want)


def test_scores_command_all_vs_all_and_modes(tmp_path):
    for mode in ("local", "global", "semiglobal"):
        got = invoke("scores", Q, "--device", "cpu", "--mode", mode, "--format", "npy")
        matrix = np.load(io.BytesIO(got.stdout_bytes))
        records = [s for _, s in seqio.read_records(str(Q))]
        want = [[wavedp.align(a, b, PROT, mode=mode, traceback=False).score for b in records]
                for a in records]
        assert matrix.tolist() == want


def test_scores_command_refusals(tmp_path):
    got = invoke("scores", Q, T, "-o", tmp_path / "m.npy", "--format", "tsv")
    assert got.exit_code == 2 and "names a .npy file" in got.stderr
    got = invoke("scores", "-", "-", stdin=Q.read_bytes())
    assert got.exit_code == 2 and "both be standard input" in got.stderr
    got = invoke("scores", Q, EXAMPLES / "missing.fa")
    assert got.exit_code == 2 and "missing.fa" in got.stderr
    assert list(tmp_path.iterdir()) == []
