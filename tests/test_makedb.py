"""makedb's parallel builder (``wavedp.db.makedb``): one process per core, no NumPy, the
same files byte for byte as the threaded and record paths, and everything those paths must
describe left to them. It forks only where no other thread runs, so each build here runs in
a fresh interpreter (:func:`build`; a test process keeps threads of earlier tests)."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from helpers import fresh

from wavedp import InputError
from wavedp.db import building, makedb
from wavedp.db import database as dbmod
from wavedp.db.database import Database
from wavedp.db.files import FILES, HEADER, SEAL

#: a parallel build in a fresh interpreter: ranges of a few hundred bytes (small files take
#: many ranges, records span range edges), any number of workers; prints what it built
_APART = """
import json, sys
from wavedp.db import makedb
makedb.FEWEST, makedb.MIN_RANGE, makedb.RANGE = 1, {low}, {high}
{setup}
source, out, alphabet, workers, show = sys.argv[1:]
try:
    built = makedb.build(source, out, alphabet, int(workers), show == "1")
except Exception as exc:
    print(json.dumps({{"error": str(exc)}}))
else:
    print(json.dumps(None if built is None else built.__dict__))
"""


def build(fasta: Path | str, out: Path, alphabet: str = "auto", workers: int = 2,
          show: bool = False, setup: str = "", ranges: tuple[int, int] = (64, 300)
          ) -> makedb.Built | None:
    """``makedb.build`` in a fresh interpreter; its InputError raised here (its stderr, the
    progress, is kept in ``build.stderr``)."""
    code = _APART.format(low=ranges[0], high=ranges[1], setup=setup)
    run = fresh(["-c", code, str(fasta), str(out), alphabet, str(workers), "1" if show else "0"],
                capture_output=True, text=True, check=True)
    build.stderr = run.stderr
    got = json.loads(run.stdout)
    if got is not None and "error" in got:
        raise InputError(got["error"])
    return None if got is None else makedb.Built(**got)


def write(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def files_of(folder: Path) -> dict[str, bytes | dict]:
    """The data files' bytes and the header (its data folder's name and seal aside: each
    build names a folder of its own)."""
    header = json.loads((folder / HEADER).read_text())
    data = folder / header.pop("data")
    header.pop(SEAL)
    return {HEADER: header, **{name: (data / name).read_bytes() for name in FILES}}


def threaded(fasta: Path, out: Path, alphabet: str = "auto") -> dict[str, bytes]:
    Database.build(fasta, out, alphabet=alphabet, progress=False, threads=2, processes=False)
    return files_of(out)


def records(count: int, seed: int, letters: str = "ACDEFGHIKLMNPQRSTVWYXBZUOJ*acdy",
            width: int = 61, longest: int = 900, end: str = "\n") -> str:
    state = seed
    out = []
    for k in range(count):
        state = (state * 1103515245 + 12345) % 2**31
        size = state % longest if k % 7 else 0  # some empty records
        seq = "".join(letters[(state >> (i % 13) ^ i * 7) % len(letters)] for i in range(size))
        body = "".join(seq[i:i + width] + end for i in range(0, len(seq), width))
        out.append(f">s{k} description {k}{end}{body}")
    return "".join(out)


CASES = {
    "protein": records(400, 1),
    "crlf": records(300, 2, end="\r\n"),
    "blank lines first": "\n\n  \n" + records(50, 3),
    "blank lines between": records(50, 4).replace("\n>", "\n\n\n>"),
    "no final newline": records(40, 5).rstrip("\n"),
    "one long record": ">x\n" + "ACDEFGHIKL" * 700 + "\n>y\nMK\n",
    "dna": records(200, 6, letters="ACGTACGTACGTN"),
    "dna with iupac": records(200, 7, letters="ACGTACGTACGTACGTRYKMacgtu"),
    "tabs in headers": records(30, 8).replace(" description", "\tdescription"),
    "spaces around titles": records(30, 9).replace(" description", "  description \t"),
    "one record": ">only\nMKV\n",
    "empty records only": ">a\n>b\n\n>c\n",
}


@pytest.mark.parametrize("workers", [1, 2, 3, 8])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_same_files_as_the_threaded_path(tmp_path: Path, case: str, workers: int):
    fasta = write(tmp_path / "in.fa", CASES[case])
    built = build(fasta, tmp_path / "p.wdb", workers=workers)
    assert built is not None
    assert files_of(tmp_path / "p.wdb") == threaded(fasta, tmp_path / "t.wdb")
    db = Database.open(tmp_path / "p.wdb")  # every checksum read back
    assert (built.sequences, built.residues, built.alphabet) == \
        (len(db), db.total_residues, db.alphabet)
    assert built.empty == int((db.lengths == 0).sum())


@pytest.mark.parametrize("alphabet", ["protein", "dna"])
def test_a_given_alphabet(tmp_path: Path, alphabet: str):
    fasta = write(tmp_path / "in.fa", records(100, 9, letters="ACGTN"))
    assert build(fasta, tmp_path / "p.wdb", alphabet, 3).alphabet == alphabet
    assert files_of(tmp_path / "p.wdb") == threaded(fasta, tmp_path / "t.wdb", alphabet)


def test_ranges_of_the_default_size_and_a_range_per_worker(tmp_path: Path):
    fasta = write(tmp_path / "in.fa", records(6000, 10))
    assert build(fasta, tmp_path / "p.wdb", workers=4,
                 ranges=(makedb.MIN_RANGE, makedb.RANGE)) is not None
    assert files_of(tmp_path / "p.wdb") == threaded(fasta, tmp_path / "t.wdb")


def test_the_alphabet_is_the_first_pieces_as_on_threads(tmp_path: Path):
    """The first piece (the record reader's first MB) decides: DNA there and protein later
    is the threaded path's error, said by it (the processes leave the file)."""
    dna = records(3000, 11, letters="ACGT", longest=1600)
    assert len(dna) > 2 * building.BATCH_RESIDUES  # the record reader's first batch: DNA too
    fasta = write(tmp_path / "in.fa", dna + ">p\nMKVLW\n")
    assert build(fasta, tmp_path / "p.wdb") is None
    assert not (tmp_path / "p.wdb").exists()
    with pytest.raises(InputError, match="looked like DNA"):
        Database.build(fasta, tmp_path / "t.wdb", progress=False)


@pytest.mark.parametrize("text", [
    ">a\nMKV\n>b\nMK1V\n",  # a letter outside the alphabet
    ">a\nMKV\n>\nMKV\n",  # a header without an id
    ">a\nMKV\n> b\nMKV\n",  # likewise
    ">a\nMK\x01V\n",  # a control byte
    ">\u00e9\nMKV\n",  # a non-ASCII id
    "text\n>a\nMKV\n",  # text before the first header
    "@a\nMKV\n+\nIII\n",  # FASTQ
    ">a\nMK V\n",  # a space among the residues
    "",  # an empty file
    "\n \n",  # whitespace only
])
def test_files_the_record_reader_must_describe_are_left_to_it(tmp_path: Path, text: str):
    fasta = write(tmp_path / "in.fa", text)
    assert build(fasta, tmp_path / "p.wdb") is None
    assert sorted(os.listdir(tmp_path)) == ["in.fa"]


def test_gzip_standard_input_and_a_threaded_process_are_left(tmp_path: Path):
    zipped = tmp_path / "in.fa.gz"
    zipped.write_bytes(gzip.compress(b">a\nMKV\n"))
    assert build(zipped, tmp_path / "p.wdb") is None
    assert build("-", tmp_path / "p.wdb") is None
    fasta = write(tmp_path / "in.fa", ">a\nMKV\n")
    assert build(fasta, tmp_path / "p.wdb", setup="import threading\n"
                 "threading.Thread(target=threading.Event().wait, daemon=True).start()") is None
    assert sorted(os.listdir(tmp_path)) == ["in.fa", "in.fa.gz"]


def test_fewer_workers_than_fewest_leave_it_to_threads(tmp_path: Path):
    fasta = write(tmp_path / "in.fa", ">a\nMKV\n")
    assert build(fasta, tmp_path / "p.wdb", workers=3, setup="makedb.FEWEST = 4") is None
    assert build(fasta, tmp_path / "p.wdb", workers=4, setup="makedb.FEWEST = 4") is not None


@pytest.mark.parametrize("text, says", [
    (">a\nMKV\n>b\nMK1V\n", "record 'b', position 3: invalid character '1'"),
    (">a\nMKV\n>\nMKV\n", "no id"),
    (">a\nMK\u00e9V\n", "record 'a', position 3"),
])
def test_database_build_says_what_and_where(tmp_path: Path, text: str, says: str):
    with pytest.raises(InputError, match=says):
        Database.build(write(tmp_path / "in.fa", text), tmp_path / "db.wdb", progress=False,
                       alphabet="protein", threads=2)
    assert sorted(os.listdir(tmp_path)) == ["in.fa"]


def test_a_worker_that_cannot_write_is_one_error_and_nothing_left(tmp_path: Path):
    full = ("def full(fd, data, position):\n"
            "    raise OSError(28, 'No space left on device')\n"
            "makedb._pwrite = full")
    fasta = write(tmp_path / "in.fa", records(100, 12))
    with pytest.raises(InputError, match="cannot write database .*p.wdb: No space left"):
        build(fasta, tmp_path / "p.wdb", workers=3, setup=full)
    assert sorted(os.listdir(tmp_path)) == ["in.fa"]


def test_a_worker_that_dies_leaves_the_file_to_threads(tmp_path: Path):
    fasta = write(tmp_path / "in.fa", records(100, 13))
    assert build(fasta, tmp_path / "p.wdb", workers=3,
                 setup="import os\nmakedb._pieces = lambda *a: os._exit(3)") is None
    assert sorted(os.listdir(tmp_path)) == ["in.fa"]


def test_an_older_database_is_replaced_and_anything_else_refused(tmp_path: Path):
    fasta = write(tmp_path / "in.fa", ">a\nMKV\n")
    build(fasta, tmp_path / "p.wdb")
    write(tmp_path / "in.fa", ">b\nWWW\n>c\nKK\n")
    assert build(fasta, tmp_path / "p.wdb").sequences == 2
    write(tmp_path / "file", "x")
    with pytest.raises(InputError, match="exists and is not a wavedp database"):
        build(fasta, tmp_path / "file")


def test_progress_in_a_log_counts_the_ranges_done(tmp_path: Path):
    fasta = write(tmp_path / "in.fa", records(200, 14))
    build(fasta, tmp_path / "p.wdb", show=True,
          setup="from wavedp.db import read_progress; read_progress.PROGRESS_INTERVAL = 0.0")
    lines = build.stderr.splitlines()
    assert lines and all(line.startswith("wavedp: building database from in.fa: ")
                         for line in lines)


def test_the_command_imports_numpy_only_after_its_workers_are_forked(tmp_path: Path):
    """``wavedp makedb`` of a plain FASTA file imports NumPy (a third of CUDASW++4.0's whole
    makedb on the H100 host) only once its workers are forked, on a thread, while they
    parse."""
    fasta = write(tmp_path / "in.fa", records(300, 15))
    code = ("import sys\n"
            "from wavedp.db import makedb\n"
            "makedb.FEWEST = 1\n"
            "fork = makedb._fork\n"
            "seen = []\n"
            "def forked(*args):\n"
            "    seen.append('numpy' in sys.modules)\n"
            "    return fork(*args)\n"
            "makedb._fork = forked\n"
            "from wavedp.cli import cli\n"
            "try:\n"
            f"    cli(['makedb', {str(fasta)!r}, '-o', {str(tmp_path / 'p.wdb')!r}])\n"
            "except SystemExit as exc:\n"
            "    print(seen, exc.code)\n")
    run = fresh(["-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["[False]", "0"], run.stderr
    assert "300 sequences" in run.stderr
    assert files_of(tmp_path / "p.wdb") == threaded(fasta, tmp_path / "t.wdb")
    header = json.loads((tmp_path / "p.wdb" / HEADER).read_text())
    assert header["source"] == "in.fa"


def test_database_build_takes_the_processes_where_it_may(tmp_path: Path, monkeypatch):
    taken = []
    real = makedb.build
    monkeypatch.setattr(dbmod.makedb, "build",
                        lambda *a, **k: taken.append(a) or real(*a, **k))
    fasta = write(tmp_path / "in.fa", records(50, 16))
    Database.build(fasta, tmp_path / "p.wdb", progress=False, threads=2)
    assert len(taken) == 1
    Database.build(fasta, tmp_path / "q.wdb", progress=False, threads=2, processes=False)
    assert len(taken) == 1
    assert files_of(tmp_path / "p.wdb") == files_of(tmp_path / "q.wdb")
