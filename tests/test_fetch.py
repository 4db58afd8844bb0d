"""wavedp fetch: sequences of a .wdb by id as FASTA; a BLAST database becomes a .wdb through
blastdbcmd and makedb, and fetch gives its sequences back as blastdbcmd does (ids, letters)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import invoke

import wavedp

FASTA = (">sp|P1|ONE first protein\nMKTAYIAKQRQISFVKSHFSRQ\n"
         ">sp|P2|TWO second\n" + "ACDEFGHIKLMNPQRSTVWY" * 5 + "\n>p3\nWWW\n")


def _db(tmp_path: Path) -> Path:
    fa = tmp_path / "in.fa"
    fa.write_text(FASTA.replace("sp|P1|ONE", "P1").replace("sp|P2|TWO", "P2"))
    wavedp.Database.build(fa, tmp_path / "d.wdb", progress=False)
    return tmp_path / "d.wdb"


def test_fetch_by_id_in_the_order_asked(tmp_path):
    db = _db(tmp_path)
    got = invoke("fetch", db, "p3", "P1")
    assert got.exit_code == 0, got.output
    assert got.stdout == ">p3\nWWW\n>P1 first protein\nMKTAYIAKQRQISFVKSHFSRQ\n"  # titles
    long = invoke("fetch", db, "P2").stdout.splitlines()
    assert long[0] == ">P2 second" and [len(x) for x in long[1:]] == [80, 20]  # 80 a line
    ids = tmp_path / "ids.txt"
    ids.write_text("P2\n\np3\n")
    assert invoke("fetch", db, "--ids", ids).stdout == invoke("fetch", db, "P2", "p3").stdout
    assert invoke("fetch", db, "--ids", "-", stdin="p3\n").stdout == ">p3\nWWW\n"
    every = invoke("fetch", db, "--all", "-o", tmp_path / "all.fa")
    assert every.exit_code == 0
    assert (tmp_path / "all.fa").read_text() == invoke("fetch", db, "P1", "P2", "p3").stdout


@pytest.mark.parametrize("args, says", [
    (["nope", "P1"], "no sequence has the id 'nope'"),
    (["nope", "gone"], "(and 1 more)"),
    ([], "give the ids"),
    (["P1", "--all"], "not both"),
])
def test_fetch_faults_are_one_line_and_nothing_written(tmp_path, args, says):
    db = _db(tmp_path)
    out = tmp_path / "out.fa"
    got = invoke("fetch", db, *args, "-o", out)
    assert got.exit_code == 2 and says in got.stderr and got.stderr.count("\n") == 1
    assert not out.exists()


@pytest.mark.skipif(shutil.which("blastdbcmd") is None or shutil.which("makeblastdb") is None,
                    reason="needs BLAST+ (Debian ncbi-blast+)")
def test_a_blast_database_becomes_a_wdb(tmp_path):
    """makeblastdb -parse_seqids, then blastdbcmd -entry all | wavedp makedb -: the same
    ids, titles and sequences, and fetch gives a sequence back as blastdbcmd -entry does."""
    (tmp_path / "in.fa").write_text(FASTA)
    subprocess.run(["makeblastdb", "-in", str(tmp_path / "in.fa"), "-dbtype", "prot",
                    "-out", str(tmp_path / "blast"), "-parse_seqids"], check=True,
                   capture_output=True)
    dumped = subprocess.run(["blastdbcmd", "-db", str(tmp_path / "blast"), "-entry", "all"],
                            check=True, capture_output=True, text=True).stdout
    made = invoke("makedb", "-", "-o", tmp_path / "b.wdb", stdin=dumped)
    assert made.exit_code == 0, made.output
    db = wavedp.Database.open(tmp_path / "b.wdb")
    assert list(db.ids) == ["P1", "P2", "p3"]
    assert list(db.titles) == ["first protein", "second", ""]
    one = subprocess.run(["blastdbcmd", "-db", str(tmp_path / "blast"), "-entry", "P2"],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    mine = invoke("fetch", tmp_path / "b.wdb", "P2").stdout.splitlines()
    assert mine[0] == one[0] and "".join(mine[1:]) == "".join(one[1:])
