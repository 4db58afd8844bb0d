"""``wavedp makedb`` and ``wavedp search``: formats, strands, errors and ``--resume``.

The search itself is ``wavedp.search`` (tested in its own files); here the command line must
print exactly its results, in every format, fail on bad input with one line, and, with
``--resume``, finish a run killed at any moment with the file an uninterrupted run writes.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from helpers import assert_user_error, db_data, fasta_text, fresh, fresh_env, invoke, write

import wavedp
from wavedp.cli import cluster as dask_connection
from wavedp.cli import search as search_command
from wavedp.db.database import Database
from wavedp.dbsearch import journal as journal_module
from wavedp.dbsearch.api import search
from wavedp.dbsearch.journal import MAGIC, journal_path
from wavedp.formats import blast_bitscore, blast_evalue, format_alignment, sam_record
from wavedp.stats.karlin_altschul import parameters

AMINO = "ARNDCQEGHILKMFPSTWYV"
COMPLEMENT = str.maketrans("ACGT", "TGCA")
#: blastn's default scores in wavedp's gap convention (BLAST's 5/2 is wavedp's 7/2)
DNA_ARGS = ["--match", "2", "--mismatch", "-3", "--gap-open", "7", "--gap-extend", "2"]


def protein_set(seed: int, n_db: int, n_queries: int) -> tuple[list, list]:
    """Random database sequences and queries cut (and mutated) from some of them."""
    rng = random.Random(seed)

    def rnd(n: int) -> str:
        return "".join(rng.choice(AMINO) for _ in range(n))

    db = [(f"d{k}", rnd(rng.randint(30, 200))) for k in range(n_db)]
    queries = []
    for k in range(n_queries):
        source = rng.choice(db)[1]
        a = rng.randint(0, len(source) // 2)
        piece = "".join(c if rng.random() > 0.2 else rng.choice(AMINO)
                        for c in source[a:a + rng.randint(15, 80)])
        queries.append((f"q{k}", rnd(rng.randint(0, 10)) + piece + rnd(rng.randint(0, 10))))
    return queries, db


def revcomp(seq: str) -> str:
    return seq.translate(COMPLEMENT)[::-1]


@pytest.fixture(scope="module")
def protein(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("protein")
    queries, db = protein_set(5, 40, 12)
    q = write(folder / "q.fa", fasta_text(queries))
    d = write(folder / "db.fa", fasta_text(db))
    wdb = folder / "db.wdb"
    Database.build(d, wdb, progress=False)
    return {"q": q, "fa": d, "wdb": wdb}


@pytest.fixture(scope="module")
def dna(tmp_path_factory) -> dict[str, Path]:
    """Two queries, each planted in the database once on each strand."""
    rng = random.Random(9)

    def rnd(n: int) -> str:
        return "".join(rng.choice("ACGT") for _ in range(n))

    q1, q2 = rnd(60), rnd(45)
    db = [("plus", rnd(30) + q1 + rnd(40)), ("minus", rnd(50) + revcomp(q1) + rnd(20)),
          ("both", rnd(10) + q2 + rnd(30) + revcomp(q2[5:40]) + rnd(10)), ("noise", rnd(150))]
    folder = tmp_path_factory.mktemp("dna")
    q = write(folder / "q.fa", fasta_text([("s1", q1), ("s2", q2)]))
    d = write(folder / "db.fa", fasta_text(db))
    wdb = folder / "db.wdb"
    Database.build(d, wdb, alphabet="dna", progress=False)
    return {"q": q, "fa": d, "wdb": wdb, "q1": q1, "q2": q2}


def rendered(hits_per_query: list[list[wavedp.Alignment]], kind: str) -> str:
    return "".join(format_alignment(h, kind, search=True) + "\n"
                   for hits in hits_per_query for h in hits)


# ---- makedb ------------------------------------------------------------------------------

def test_makedb_round_trip(tmp_path: Path, protein):
    out = tmp_path / "new.wdb"
    result = invoke("makedb", protein["fa"], "-o", out)
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    db = Database.open(out)
    records = [line for line in protein["fa"].read_text().splitlines()]
    ids, seqs = records[0::2], records[1::2]
    assert [f">{db.id(k)}" for k in range(len(db))] == ids
    assert [db.text(k) for k in range(len(db))] == seqs
    assert result.stderr.splitlines() == [
        f"wavedp: {out}: {len(db)} sequences, {db.total_residues:,} residues (protein, guessed)"]
    args = ["--device", "cpu", "--top", "0"]
    from_wdb = invoke("search", protein["q"], out, *args)
    from_fasta = invoke("search", protein["q"], protein["fa"], *args)
    assert from_wdb.exit_code == 0, from_wdb.output
    assert from_wdb.stdout == from_fasta.stdout != ""


def test_makedb_dna_and_replace(tmp_path: Path, dna):
    out = tmp_path / "d.wdb"
    assert invoke("makedb", dna["fa"], "-o", out, "--alphabet", "dna").exit_code == 0
    assert invoke("makedb", dna["fa"], "-o", out, "--alphabet", "dna").exit_code == 0
    assert Database.open(out).alphabet == "dna"


# ---- search: the API's results, in every format ----------------------------------------------

def test_blast6_equals_the_api(protein):
    scoring = wavedp.Scoring()
    hits = search(protein["q"], protein["wdb"], scoring, device="cpu")
    assert any(h.evalue is not None for q in hits for h in q)
    result = invoke("search", protein["q"], protein["wdb"], "--device", "cpu")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert result.stdout == rendered(hits, "blast6")
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert all(len(r) == 12 and r[10] != "NA" and r[11] != "NA" for r in rows)
    # ranked per query by E-value (then score)
    for q in hits:
        assert [(h.evalue, -h.score) for h in q] == sorted((h.evalue, -h.score) for h in q)


@pytest.mark.parametrize("args,scoring,kwargs", [
    (["--top", "3"], {}, {"top": 3}),
    (["--top", "0", "--evalue", "0.5"], {}, {"top": 0, "evalue": 0.5}),
    (["--top", "0", "--min-score", "40"], {}, {"top": 0, "min_score": 40}),
    (["--mode", "global", "--top", "2"], {}, {"top": 2, "mode": "global"}),
    (["--score-only", "--matrix", "PAM250"], {"matrix": "PAM250"}, {"traceback": False}),
    (["--gap-open", "2", "--gap-extend", "1"], {"gap_open": 2, "gap_extend": 1}, {}),
    (["--top", "0", "--fraction", "0.3"], {}, {"top": 0, "fraction": 0.3}),
], ids=["top", "evalue", "min-score", "global", "score-only", "no-statistics", "fraction"])
def test_options_reach_the_api(protein, args, scoring, kwargs):
    scoring = wavedp.Scoring(**{"matrix": "BLOSUM62", "gap_open": 11, "gap_extend": 1,
                                **scoring})
    hits = search(protein["q"], protein["fa"], scoring, device="cpu", **kwargs)
    result = invoke("search", protein["q"], protein["fa"], "--device", "cpu", *args)
    assert result.exit_code == 0, result.output
    assert result.stdout == rendered(hits, "blast6")


def test_json_carries_the_statistics(protein):
    hits = search(protein["q"], protein["wdb"], wavedp.Scoring(), device="cpu", top=2)
    result = invoke("search", protein["q"], protein["wdb"], "--device", "cpu", "--top", "2",
                    "--format", "json")
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    flat = [h for q in hits for h in q]
    assert len(rows) == len(flat)
    for row, hit in zip(rows, flat, strict=True):
        assert wavedp.Alignment(**row) == hit
        assert row["evalue"] == hit.evalue and row["bitscore"] == hit.bitscore
        assert row["strand"] is None
    glob = invoke("search", protein["q"], protein["wdb"], "--device", "cpu", "--top", "1",
                  "--format", "json", "--mode", "global")
    row = json.loads(glob.stdout.splitlines()[0])
    assert {"evalue": None, "bitscore": None, "strand": None}.items() <= row.items()


def test_sam_header_lists_the_database(protein):
    db = Database.open(protein["wdb"])
    result = invoke("search", protein["q"], protein["wdb"], "--device", "cpu", "--format",
                    "sam", "--top", "2")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "@HD\tVN:1.6\tSO:unsorted"
    sq = [f"@SQ\tSN:{db.id(k)}\tLN:{int(db.lengths[k])}" for k in range(len(db))]
    assert lines[1:1 + len(db)] == sq
    pg = lines[1 + len(db)]
    assert pg.startswith("@PG\tID:wavedp") and "CL:wavedp search " in pg
    hits = search(protein["q"], protein["wdb"], wavedp.Scoring(), device="cpu", top=2)
    want = "".join(sam_record(h, secondary=k > 0) + "\n" for q in hits
                   for k, h in enumerate(q))
    assert "\n".join(lines[2 + len(db):]) + "\n" == want
    flags = [(line.split("\t")[0], line.split("\t")[1]) for line in lines[2 + len(db):]]
    firsts = {qid for qid, _ in flags}
    assert [f for _, f in flags].count("0") == len(firsts)  # one primary a query, the best
    assert all(f in ("0", "256") for _, f in flags) and "256" in [f for _, f in flags]


def test_sam_needs_each_database_id_once(tmp_path, protein):
    twice = write(tmp_path / "twice.fa", ">t1\nMKTAYIAK\n>t2\nMKTAYI\n>t1 again\nMKTAYIAKQ\n")
    out = tmp_path / "out.sam"
    result = invoke("search", protein["q"], twice, "--device", "cpu", "--format", "sam",
                    "-o", out)
    assert_user_error(result, "twice.fa", "'t1'", "sequences 1 and 3", "unique")
    assert not out.exists()


@pytest.mark.skipif(shutil.which("samtools") is None, reason="needs samtools (Debian)")
@pytest.mark.parametrize("command", ["search", "align"])
def test_sam_passes_samtools_with_one_primary_a_query(tmp_path, protein, command):
    """samtools reads the SAM of search (several hits a query) and of align (every target
    a query) whole, and counts one primary record a query, the rest secondary."""
    out = tmp_path / "out.sam"
    extra = ["--top", "3"] if command == "search" else []
    target = protein["wdb"] if command == "search" else protein["fa"]
    result = invoke(command, protein["q"], target, "--device", "cpu", "--format", "sam",
                    "-o", out, *extra)
    assert result.exit_code == 0, result.output
    stats = subprocess.run(["samtools", "flagstat", str(out)], capture_output=True,
                           text=True, check=True).stdout
    names = subprocess.run(["samtools", "view", str(out)], capture_output=True, text=True,
                           check=True).stdout
    queries = {line.split("\t")[0] for line in names.splitlines()}
    primary = subprocess.run(["samtools", "view", "-c", "-F", "256", str(out)],
                             capture_output=True, text=True, check=True).stdout
    assert int(primary) == len(queries), stats
    assert f"{len(names.splitlines()) - len(queries)} + 0 secondary" in stats


def test_pairwise_shows_evalue_and_bit_score(protein):
    hits = search(protein["q"], protein["wdb"], wavedp.Scoring(), device="cpu", top=2)
    result = invoke("search", protein["q"], protein["wdb"], "--device", "cpu", "--format",
                    "pairwise", "--top", "2")
    flat = [h for q in hits for h in q]
    assert result.stdout == "\n".join(h.format("pairwise") + "\n" for h in flat)
    assert result.stdout.count("# E-value:   ") == len(flat)
    assert f"# Bit score: {flat[0].bitscore:.1f}\n" in result.stdout


# ---- DNA strands -----------------------------------------------------------------------------

def test_a_dna_database_needs_no_scoring_flag(dna, protein):
    """Given no scoring flag, a DNA database (.wdb or FASTA) is searched with blastn's scores
    and gaps, said on stderr, E-values included; a protein query against it is one line."""
    blastn = ["--match", "2", "--mismatch", "-3", "--gap-open", "7", "--gap-extend", "2"]
    want = invoke("search", dna["q"], dna["wdb"], *blastn, "--device", "cpu")
    assert want.exit_code == 0 and want.stdout
    for target in (dna["wdb"], dna["q"].parent / "db.fa"):
        got = invoke("search", dna["q"], target, "--device", "cpu")
        assert got.exit_code == 0, got.output
        assert got.stdout == want.stdout
        assert "wavedp: a DNA database: --match 2 --mismatch -3 --gap-open 7" in got.stderr
    assert all(row.split("\t")[10] != "NA" for row in want.stdout.splitlines())
    assert invoke("search", protein["q"], protein["wdb"], "--device", "cpu").stderr.find(
        "a DNA database") < 0  # a protein database: BLOSUM62, as before
    bad = invoke("search", protein["q"], dna["wdb"], "--device", "cpu")
    assert bad.exit_code == 2 and bad.stderr.count("error:") == 1 and "DNA" in bad.stderr

def test_dna_minus_strand_in_blast6_and_sam(dna):
    scoring = wavedp.Scoring(match=2, mismatch=-3, gap_open=7, gap_extend=2)
    hits = search(dna["q"], dna["wdb"], scoring, device="cpu")
    result = invoke("search", dna["q"], dna["wdb"], *DNA_ARGS, "--device", "cpu")
    assert result.exit_code == 0, result.output
    assert result.stdout == rendered(hits, "blast6")
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    flat = [h for q in hits for h in q]
    assert {h.strand for h in flat} == {"+", "-"}
    for row, hit in zip(rows, flat, strict=True):
        m = hit.query_length
        if hit.strand == "-":  # BLAST's convention: the original query's range, sstart > send
            expected = [m - hit.query_end + 1, m - hit.query_start, hit.target_end,
                        hit.target_start + 1]
            assert int(row[8]) > int(row[9])
        else:
            expected = [hit.query_start + 1, hit.query_end, hit.target_start + 1,
                        hit.target_end]
        assert row[6:10] == [str(x) for x in expected]
        assert row[10] != "NA"  # blastn's 2/-3 table at BLAST's 5/2
    best = {(r[0], r[1]): r for r in reversed(rows)}
    # q1 is planted at 31..90 of "plus" and, reverse complemented, at 51..110 of "minus"
    # (chance matches of the flanks may lengthen a hit by a base or two)
    plus, minus = best[("s1", "plus")], best[("s1", "minus")]
    assert abs(int(plus[8]) - 31) <= 3 and abs(int(plus[9]) - 90) <= 3
    assert abs(int(minus[8]) - 110) <= 3 and abs(int(minus[9]) - 51) <= 3
    sam = invoke("search", dna["q"], dna["wdb"], *DNA_ARGS, "--device", "cpu", "--format",
                 "sam")
    records = [line.split("\t") for line in sam.stdout.splitlines() if line[0] != "@"]
    assert len(records) == len(flat)
    firsts = {id(q[0]) for q in hits}  # each query's best hit: its primary record
    for record, hit in zip(records, flat, strict=True):
        secondary = 0 if id(hit) in firsts else 256
        assert record[1] == str((16 if hit.strand == "-" else 0) | secondary)
        original = dna["q1"] if hit.query_id == "s1" else dna["q2"]
        assert record[9] == (revcomp(original) if hit.strand == "-" else original)
    plus_only = invoke("search", dna["q"], dna["wdb"], *DNA_ARGS, "--device", "cpu",
                       "--strand", "plus")
    assert all(int(r.split("\t")[8]) < int(r.split("\t")[9])
               for r in plus_only.stdout.splitlines())


@pytest.mark.skipif(shutil.which("blastn") is None, reason="NCBI BLAST+ is not installed")
def test_minus_strand_coordinates_equal_blastn(dna, tmp_path: Path):
    """blastn prints the same qstart qend sstart send for the planted minus-strand hit."""
    query = write(tmp_path / "s1.fa", f">s1\n{dna['q1']}\n")
    subject = write(tmp_path / "minus.fa", fasta_text([("minus", Database.open(dna["wdb"])
                                                        .text(1))]))
    proc = subprocess.run(
        ["blastn", "-query", query, "-subject", subject, "-reward", "2", "-penalty", "-3",
         "-gapopen", "5", "-gapextend", "2", "-dust", "no", "-word_size", "11",
         "-outfmt", "6 qstart qend sstart send score"],
        capture_output=True, text=True, check=True)
    best = proc.stdout.splitlines()[0].split("\t")
    ours = invoke("search", query, subject, *DNA_ARGS, "--device", "cpu", "--top", "1",
                  "--strand", "minus")
    row = ours.stdout.splitlines()[0].split("\t")
    assert row[6:10] == best[:4]


# ---- BLAST's text for E-values and bit scores -----------------------------------------------

def test_blast_number_text():
    assert [blast_evalue(e) for e in (1e-181, 1.74e-180, 2.85e-4, 0.0009, 0.0999, 0.11,
                                       0.9995, 9.996, 94.2, 1.23e12)] == [
        "0.0", "1.74e-180", "2.85e-04", "0.001", "0.100", "0.11", "1.00", "10.0", "94",
        "1230000000000"]
    assert [blast_bitscore(b) for b in (9.23, 46.6, 99.9056, 100.908, 262.692)] == [
        " 9.2", "46.6", " 99", "100", "262"]


@pytest.mark.skipif(shutil.which("blastp") is None, reason="NCBI BLAST+ is not installed")
def test_evalue_and_bitscore_text_equal_blastp(tmp_path: Path):
    """For each HSP blastp reports (raw score S, search space m*n given), wavedp's E-value
    and bit score of S print as blastp prints them."""
    queries, db = protein_set(21, 60, 6)
    d = write(tmp_path / "d.fa", fasta_text(db))
    n = sum(len(s) for _, s in db)
    stats = parameters(wavedp.Scoring(matrix="BLOSUM62", gap_open=12, gap_extend=1))
    checked = 0
    for rid, seq in queries:
        one = write(tmp_path / "one.fa", f">{rid}\n{seq}\n")
        proc = subprocess.run(
            ["blastp", "-query", one, "-subject", d, "-comp_based_stats", "0", "-seg", "no",
             "-searchsp", str(len(seq) * n), "-evalue", "1000",
             "-outfmt", "6 evalue bitscore score"],
            capture_output=True, text=True, check=True)
        for line in proc.stdout.splitlines():
            evalue, bits, score = line.split("\t")
            assert blast_evalue(stats.evalue(int(score), len(seq), n)) == evalue, line
            assert blast_bitscore(stats.bitscore(int(score))) == bits, line
            checked += 1
    assert checked > 20


# ---- bad input: one line on stderr, exit status 2, no output --------------------------------

def _bad_cases(tmp: Path, protein, dna) -> dict[str, tuple[list, tuple[str, ...]]]:
    q, wdb = protein["q"], protein["wdb"]
    empty = write(tmp / "empty.fa", "")
    badq = write(tmp / "badq.fa", ">ok\nMKV\n>r2 desc\nMKVAB1V\n")
    baddb = write(tmp / "baddb.fa", ">d1\nMKV\n>d2\nMK#V\n")
    truncated = tmp / "truncated.wdb"
    shutil.copytree(wdb, truncated)
    residues = db_data(truncated) / "residues.u8"
    residues.write_bytes(residues.read_bytes()[:-5])
    corrupt = tmp / "corrupt.wdb"
    shutil.copytree(wdb, corrupt)
    data = bytearray((db_data(corrupt) / "residues.u8").read_bytes())
    data[len(data) // 2] ^= 0x01
    (db_data(corrupt) / "residues.u8").write_bytes(bytes(data))
    out = tmp / "out.tsv"
    return {
        "empty query file": ([empty, wdb], ("empty.fa", "no records")),
        "empty database file": ([q, empty], ("empty.fa", "no records")),
        "bad letter in a query": ([badq, wdb], ("badq.fa", "'r2'", "position 6", "'1'")),
        "bad letter in the database": ([q, baddb], ("baddb.fa", "'d2'", "position 3", "'#'")),
        "database of another alphabet": ([q, dna["wdb"]], ("db.wdb", "DNA database",
                                                           "protein", "q.fa")),
        "truncated database": ([q, truncated], ("truncated.wdb", "residues.u8", "truncated")),
        "corrupt database": ([q, corrupt], ("corrupt.wdb", "residues.u8", "checksum")),
        "evalue without statistics": ([q, wdb, "--mode", "global", "--evalue", "1",
                                       "--stats", "blast"],
                                      ("global mode",)),
        "evalue for unknown gap costs": ([q, wdb, "--gap-open", "3", "--evalue", "1",
                                          "--stats", "blast"],
                                         ("no E-value statistics", "gap open 3")),
        "resume without output": ([q, wdb, "--resume"], ("--resume", "-o")),
        "resume to stdout": ([q, wdb, "--resume", "-o", "-"], ("--resume", "-o")),
        "gap open below extend": ([q, wdb, "--gap-open", "1", "--gap-extend", "2"],
                                  ("gap_open (1)", ">= gap_extend (2)")),
        "negative top": ([q, wdb, "--top", "-1"], ("--top",)),
        "missing database": ([q, tmp / "none.wdb"], ("none.wdb",)),
        "bad strand": ([q, wdb, "--strand", "up"], ("--strand",)),
        "output is a folder": ([q, wdb, "-o", tmp], (str(tmp), "folder")),
        "resume into a folder": ([q, wdb, "-o", tmp, "--resume"], (str(tmp), "folder")),
        "output with no folder": ([q, wdb, "-o", tmp / "no" / "x.tsv"], ("x.tsv",)),
        "device gpu without gpu": ([q, wdb, "--device", "gpu", "-o", out], ("gpu",)),
        "fraction out of range": ([q, wdb, "--fraction", "1.5"], ("fraction", "(0, 1]")),
        "fraction in global mode": ([q, wdb, "--fraction", "0.5", "--mode", "global"],
                                    ("fraction", "local mode")),
        "unreachable scheduler": ([q, wdb, "--scheduler", "tcp://127.0.0.1:1"],
                                  ("Dask scheduler", "tcp://127.0.0.1:1")),
        "unreachable scheduler, resuming": ([q, wdb, "--scheduler", "tcp://127.0.0.1:1", "-o",
                                             out, "--resume"], ("tcp://127.0.0.1:1",)),
        "scheduler and cluster": ([q, wdb, "--scheduler", "tcp://127.0.0.1:1", "--cluster",
                                   "local"], ("--scheduler", "--cluster")),
        "workers without a local cluster": ([q, wdb, "--workers", "2"], ("--workers",)),
        "cluster with a FASTA database": ([q, protein["fa"], "--cluster", "local"],
                                          (".wdb", "wavedp makedb")),
        "bad cluster": ([q, wdb, "--cluster", "slurm"], ("--cluster", "slurm")),
    }


BAD = ["empty query file", "empty database file", "bad letter in a query",
       "bad letter in the database", "database of another alphabet", "truncated database",
       "corrupt database", "evalue without statistics", "evalue for unknown gap costs",
       "resume without output", "resume to stdout", "gap open below extend", "negative top",
       "missing database", "bad strand", "output is a folder", "resume into a folder",
       "output with no folder", "device gpu without gpu", "fraction out of range",
       "fraction in global mode", "unreachable scheduler", "unreachable scheduler, resuming",
       "scheduler and cluster", "workers without a local cluster",
       "cluster with a FASTA database", "bad cluster"]


@pytest.mark.parametrize("case", BAD)
def test_bad_input_is_one_line_and_status_2(tmp_path: Path, protein, dna, monkeypatch,
                                            case: str):
    if case == "device gpu without gpu" and wavedp.device.gpu_status()[0]:
        pytest.skip("a GPU is present")
    if case.startswith("unreachable scheduler"):
        pytest.importorskip("distributed")
        monkeypatch.setattr(dask_connection, "CONNECT_TIMEOUT", 0.5)
    args, needles = _bad_cases(tmp_path, protein, dna)[case]
    before = sorted(os.listdir(tmp_path))
    extra = [] if "-o" in args else ["-o", tmp_path / "result.tsv"]
    if case in ("resume without output", "resume to stdout"):
        extra = []
    assert_user_error(invoke("search", *args, *extra), *needles)
    assert sorted(os.listdir(tmp_path)) == before  # no output, no journal, no temporary file


def test_bad_case_table_is_complete(tmp_path: Path, protein, dna):
    assert sorted(_bad_cases(tmp_path, protein, dna)) == sorted(BAD)


def test_makedb_bad_input(tmp_path: Path):
    bad = write(tmp_path / "bad.fa", ">a\nACGT\n>b\nACXGT\n")
    assert_user_error(invoke("makedb", bad, "-o", tmp_path / "b.wdb", "--alphabet", "dna"),
                      "bad.fa", "'b'", "position 3", "'X'")
    empty = write(tmp_path / "empty.fa", "")
    assert_user_error(invoke("makedb", empty, "-o", tmp_path / "e.wdb"), "empty.fa")
    assert sorted(os.listdir(tmp_path)) == ["bad.fa", "empty.fa"]


# ---- --resume ----------------------------------------------------------------------------

def committed(records: Path) -> list[int]:
    """The query indices of the valid records of a journal file (what a restart keeps)."""
    data = records.read_bytes()
    if not data.startswith(MAGIC):
        return []
    pos, found = len(MAGIC), []
    while pos + 12 <= len(data):
        length, crc = struct.unpack_from("<QI", data, pos)
        body = data[pos + 12:pos + 12 + length]
        if len(body) < length or zlib.crc32(body, zlib.crc32(struct.pack("<Q", length))) != crc:
            break
        if body[:1] == b"Q":
            found.append(struct.unpack_from("<Q", body, 1)[0])
        pos += 12 + length
    return found


def interrupt_after(monkeypatch, count: int) -> list[set[int]]:
    """Make the command's searches (``Searcher.iter_search``, a call per batch of queries)
    stop (KeyboardInterrupt) after ``count`` queries; returns the list that records each
    call's ``skip`` set."""
    real = search_command.Searcher.iter_search
    skips: list[set[int]] = []

    def wrapped(*args, **kwargs):
        skips.append(set(kwargs["skip"]))
        results = real(*args, **kwargs)

        def gen():
            for n, item in enumerate(results):
                if n == count:
                    raise KeyboardInterrupt
                yield item

        return gen()

    monkeypatch.setattr(search_command.Searcher, "iter_search", wrapped)
    return skips


@pytest.mark.parametrize("fmt", ["sam", "pairwise"])
def test_resume_after_an_interruption(tmp_path: Path, protein, monkeypatch, fmt: str):
    args = ["search", protein["q"], protein["wdb"], "--device", "cpu", "--format", fmt,
            "--top", "3"]
    out = tmp_path / "out.txt"
    assert invoke(*args, "-o", out, "--resume").exit_code == 0  # uninterrupted
    expected = out.read_text()
    out.unlink()
    skips = interrupt_after(monkeypatch, 5)
    result = invoke(*args, "-o", out, "--resume")
    assert result.exit_code == 130 and not out.exists()
    records = Path(journal_path(str(out))) / "records"
    assert committed(records) == [0, 1, 2, 3, 4]
    monkeypatch.undo()
    resumed = interrupt_after(monkeypatch, 1000)
    result = invoke(*args, "-o", out, "--resume")
    assert result.exit_code == 0, result.output
    assert "wavedp: resuming: 5 queries of 12 done before, 7 queries to search" in \
        result.stderr
    assert skips + resumed == [set(), {0, 1, 2, 3, 4}]
    assert out.read_text() == expected
    assert sorted(os.listdir(tmp_path)) == ["out.txt"]  # the journal is gone


def test_torn_record_is_dropped_and_recomputed(tmp_path: Path, protein, monkeypatch):
    args = ["search", protein["q"], protein["wdb"], "--device", "cpu", "--top", "0"]
    expected = invoke(*args).stdout
    out = tmp_path / "out.tsv"
    interrupt_after(monkeypatch, 4)
    assert invoke(*args, "-o", out, "--resume").exit_code == 130
    records = Path(journal_path(str(out))) / "records"
    data = records.read_bytes()
    records.write_bytes(data[:-3])  # the last record torn mid-write
    assert committed(records) == [0, 1, 2]
    (records.parent / "output.part").write_text("half an output file")  # killed assembling
    monkeypatch.undo()
    skips = interrupt_after(monkeypatch, 1000)
    assert invoke(*args, "-o", out, "--resume").exit_code == 0
    assert skips == [{0, 1, 2}]
    assert out.read_text() == expected
    assert not records.exists()


def test_resume_with_another_command_is_refused(tmp_path: Path, protein, monkeypatch):
    args = ["search", protein["q"], protein["wdb"], "--device", "cpu"]
    out = tmp_path / "out.tsv"
    interrupt_after(monkeypatch, 2)
    assert invoke(*args, "-o", out, "--resume").exit_code == 130
    monkeypatch.undo()
    folder = Path(journal_path(str(out)))
    snapshot = {p.name: p.read_bytes() for p in folder.iterdir()}
    line = assert_user_error(invoke(*args, "--gap-open", "12", "-o", out, "--resume"),
                             "--resume", "scoring")
    assert str(folder) in line
    assert_user_error(invoke(*args, "--top", "3", "-o", out, "--resume"), "--top")
    assert_user_error(invoke(*args, "--format", "json", "-o", out, "--resume"), "--format")
    other = protein["fa"]  # the same sequences, another database
    assert_user_error(invoke("search", protein["q"], other, "--device", "cpu", "-o", out,
                             "--resume"), "database")
    st = protein["q"].stat()
    os.utime(protein["q"], ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    try:
        assert_user_error(invoke(*args, "-o", out, "--resume"), "query file")
    finally:
        os.utime(protein["q"], ns=(st.st_atime_ns, st.st_mtime_ns))
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == snapshot
    assert not out.exists()
    # the same command still finishes it; --device is not part of the signature
    assert invoke(*args, "-o", out, "--resume").exit_code == 0
    assert out.read_text() == invoke(*args).stdout


def test_killed_between_rename_and_cleanup(tmp_path: Path, protein, monkeypatch):
    """The output is in place but the journal survived: a rerun rewrites the same file."""
    args = ["search", protein["q"], protein["wdb"], "--device", "cpu", "--format", "sam"]
    out = tmp_path / "out.sam"
    monkeypatch.setattr(journal_module.shutil, "rmtree", lambda *a, **k: None)
    assert invoke(*args, "-o", out, "--resume").exit_code == 0
    first = out.read_bytes()
    monkeypatch.undo()
    skips = interrupt_after(monkeypatch, 1000)
    assert invoke(*args, "-o", out, "--resume").exit_code == 0
    assert skips == []  # every query journalled: nothing searched again
    assert out.read_bytes() == first
    assert sorted(os.listdir(tmp_path)) == ["out.sam"]


def test_without_resume_a_stale_journal_is_ignored(tmp_path: Path, protein, monkeypatch):
    args = ["search", protein["q"], protein["wdb"], "--device", "cpu"]
    out = tmp_path / "out.tsv"
    interrupt_after(monkeypatch, 2)
    assert invoke(*args, "-o", out, "--resume").exit_code == 130
    monkeypatch.undo()
    records = Path(journal_path(str(out))) / "records"
    before = records.read_bytes()
    assert invoke(*args, "--top", "1", "-o", out).exit_code == 0
    assert out.read_text() == invoke(*args, "--top", "1").stdout
    assert records.read_bytes() == before


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["protein", "dna"])
def test_gpu_search_prints_the_cpu_output(protein, dna, kind: str):
    data, extra = (protein, []) if kind == "protein" else (dna, DNA_ARGS)
    for fmt in ("blast6", "sam"):
        args = ["search", data["q"], data["wdb"], *extra, "--format", fmt, "--top", "0"]
        cpu = invoke(*args, "--device", "cpu")
        gpu = invoke(*args, "--device", "gpu")
        assert gpu.exit_code == 0, gpu.output
        assert [x for x in gpu.stdout.splitlines() if not x.startswith("@PG")] == [
            x for x in cpu.stdout.splitlines() if not x.startswith("@PG")]


@pytest.mark.gpu
def test_resume_on_the_gpu_what_the_cpu_started(tmp_path: Path, protein, monkeypatch):
    args = ["search", protein["q"], protein["wdb"], "--top", "0"]
    out = tmp_path / "out.tsv"
    interrupt_after(monkeypatch, 5)
    assert invoke(*args, "--device", "cpu", "-o", out, "--resume").exit_code == 130
    monkeypatch.undo()
    assert invoke(*args, "--device", "gpu", "-o", out, "--resume").exit_code == 0
    assert out.read_text() == invoke(*args, "--device", "cpu").stdout


def test_sigkill_at_random_moments_then_resume(tmp_path: Path):
    """A real process killed with SIGKILL, very early and at random moments after queries
    were journaled, then run again to the end: byte for byte the uninterrupted file."""
    queries, db = protein_set(77, 150, 160)
    q = write(tmp_path / "q.fa", fasta_text(queries))
    d = write(tmp_path / "db.fa", fasta_text(db))
    wdb = tmp_path / "db.wdb"
    Database.build(d, wdb, progress=False)
    out = tmp_path / "out.sam"
    args = ["search", str(q), str(wdb), "--device", "cpu", "--format", "sam", "--top", "5"]
    command = ["-m", "wavedp.cli", *args, "-o", str(out), "--resume"]
    reference = tmp_path / "reference.sam"
    fresh(command, check=True, capture_output=True)  # uninterrupted
    out.rename(reference)
    records = Path(journal_path(str(out))) / "records"
    seed = int.from_bytes(os.urandom(4), "little")
    rng = random.Random(seed)
    kept: list[int] = []  # committed queries after each kill
    for attempt in range(5):
        proc = subprocess.Popen([sys.executable, *command], env=fresh_env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if attempt == 0:
            time.sleep(0.05)  # very early: still starting up
        else:
            base = len(committed(records)) if records.exists() else 0
            deadline = time.monotonic() + 60
            while (proc.poll() is None and time.monotonic() < deadline
                   and (not records.exists() or len(committed(records)) <= base)):
                time.sleep(0.005)
            time.sleep(0 if attempt == 1 else rng.uniform(0, 0.1))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if out.exists():
            break
        kept.append(len(committed(records)) if records.exists() else 0)
    final = fresh(command, capture_output=True, text=True, check=False)
    assert final.returncode == 0, final.stderr
    assert out.read_bytes() == reference.read_bytes(), f"seed {seed}"
    assert any(0 < k < len(queries) for k in kept), (kept, seed)  # a kill mid-journal
    assert kept == sorted(kept), (kept, seed)  # nothing committed is ever lost
    assert not Path(journal_path(str(out))).exists()
    assert sorted(os.listdir(tmp_path)) == ["db.fa", "db.wdb", "out.sam", "q.fa",
                                            "reference.sam"]


def test_gzip_output_same_bytes_with_and_without_resume(tmp_path):
    """-o X.gz and --resume -o X.gz write the same bytes (one deflate stream, no flush
    points that depend on how the text came)."""
    examples = Path(__file__).resolve().parent.parent / "examples"
    args = ["search", str(examples / "query.fa"), str(examples / "target.fa"), "--device",
            "cpu"]
    plain, resumed = tmp_path / "a.tsv.gz", tmp_path / "b.tsv.gz"
    assert invoke(*args, "-o", plain).exit_code == 0
    assert invoke(*args, "--resume", "-o", resumed).exit_code == 0
    assert plain.read_bytes() == resumed.read_bytes()


def test_two_fresh_resumes_one_output(tmp_path):
    """Two runs starting --resume on one output at once: the second to create the journal
    is told the output is locked (it said 'No such file or directory', or both ran)."""
    output = str(tmp_path / "hits.tsv")
    first = journal_module.Journal(output, {"a": 1})
    second = journal_module.Journal(output, {"a": 1})  # neither found a journal
    first.start()
    with pytest.raises(wavedp.InputError, match="another wavedp run is writing it"):
        second.start()
    first.commit(0, "line\n")
    assert first.text(0) == "line\n"
    first.close()
    assert sorted(os.listdir(journal_module.journal_path(output))) == [
        journal_module.RECORDS]


def test_resume_on_a_full_disk_names_the_journal(tmp_path, monkeypatch):
    """Resuming where the disk is full: one line naming the journal (the bare 'No space left
    on device' named no file)."""
    import errno

    output = str(tmp_path / "hits.tsv")
    first = journal_module.Journal(output, {"a": 1})
    first.start()
    first.commit(0, "line\n")
    first.close()
    again = journal_module.Journal(output, {"a": 1})

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(journal_module.os, "fsync", full)
    with pytest.raises(wavedp.InputError, match=r"cannot write journal .*No space left"):
        again.start()

    class Full:  # the journal's buffered file, whose close fails again on the full disk
        def __init__(self, fh):
            self.fh = fh

        def close(self):
            self.fh.close()
            raise OSError(errno.ENOSPC, "No space left on device")

    again.fh = Full(again.fh)
    again.close()  # the message naming the journal stays the one the command prints
