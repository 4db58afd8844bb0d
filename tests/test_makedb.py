"""makedb's builder (``wavedp.db.makedb``): ranges of whole records parsed by processes (forked
once NumPy is imported) or threads, the same files byte for byte as the record reader's,
and everything the parser does not take left to the record reader. It forks only where no
other thread runs, so each build here runs in a fresh interpreter (:func:`build`; a test
process keeps threads of earlier tests)."""

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
from wavedp.db.files import FILES, HEADER, SEAL, finish, making

#: a build in a fresh interpreter: ranges of a few hundred bytes (small files take many
#: ranges, records span range edges), any number of workers (processes, or threads where
#: ``processes`` is 0); prints what it built
_APART = """
import json, sys
from wavedp.db import makedb
makedb.FEWEST, makedb.MIN_RANGE, makedb.RANGE = 1, {low}, {high}
{setup}
source, out, alphabet, workers, show, processes = sys.argv[1:]
try:
    built = makedb.build(source, out, alphabet, int(workers), show == "1", processes == "1")
except Exception as exc:
    print(json.dumps({{"error": str(exc)}}))
else:
    print(json.dumps(None if built is None else built.__dict__))
"""


def build(fasta: Path | str, out: Path, alphabet: str = "auto", workers: int = 2,
          show: bool = False, setup: str = "", ranges: tuple[int, int] = (64, 300),
          processes: bool = True) -> makedb.Built:
    """``makedb.build`` in a fresh interpreter; its InputError raised here (its stderr, the
    progress, is kept in ``build.stderr``)."""
    code = _APART.format(low=ranges[0], high=ranges[1], setup=setup)
    run = fresh(["-c", code, str(fasta), str(out), alphabet, str(workers), "1" if show else "0",
                 "1" if processes else "0"], capture_output=True, text=True, check=True)
    build.stderr = run.stderr
    got = json.loads(run.stdout)
    if "error" in got:
        raise InputError(got["error"])
    return makedb.Built(**got)


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


def recorded(fasta: Path, out: Path, alphabet: str = "auto") -> dict[str, bytes]:
    """The files of the record reader's database of ``fasta``."""
    with making(str(fasta), str(out)) as tmp:
        finish(tmp, str(out), building.write_fasta(tmp, str(fasta), alphabet, False).header())
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


@pytest.mark.parametrize("workers, processes", [(1, True), (2, True), (3, False), (8, True)])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_same_files_as_the_record_reader(tmp_path: Path, case: str, workers: int,
                                             processes: bool):
    fasta = write(tmp_path / "in.fa", CASES[case])
    built = build(fasta, tmp_path / "p.wdb", workers=workers, processes=processes)
    assert files_of(tmp_path / "p.wdb") == recorded(fasta, tmp_path / "t.wdb")
    db = Database.open(tmp_path / "p.wdb")  # every checksum read back
    assert (built.sequences, built.residues, built.alphabet) == \
        (len(db), db.total_residues, db.alphabet)
    assert built.empty == int((db.lengths == 0).sum())
    assert len(built.stages) > (len(CASES[case]) > 1000)  # the parser's ranges


@pytest.mark.parametrize("end", ["\r", "\r\n"])
def test_line_ends_of_a_carriage_return(tmp_path: Path, end: str):
    fasta = write(tmp_path / "in.fa", records(80, 17).replace("\n", end))
    assert build(fasta, tmp_path / "p.wdb", workers=3).stages
    assert files_of(tmp_path / "p.wdb") == recorded(fasta, tmp_path / "t.wdb")


@pytest.mark.parametrize("alphabet", ["protein", "dna"])
def test_a_given_alphabet(tmp_path: Path, alphabet: str):
    fasta = write(tmp_path / "in.fa", records(100, 9, letters="ACGTN"))
    assert build(fasta, tmp_path / "p.wdb", alphabet, 3).alphabet == alphabet
    assert files_of(tmp_path / "p.wdb") == recorded(fasta, tmp_path / "t.wdb", alphabet)


def test_ranges_of_the_default_size_and_a_range_per_worker(tmp_path: Path):
    fasta = write(tmp_path / "in.fa", records(6000, 10))
    assert build(fasta, tmp_path / "p.wdb", workers=4,
                 ranges=(makedb.MIN_RANGE, makedb.RANGE)).stages
    assert files_of(tmp_path / "p.wdb") == recorded(fasta, tmp_path / "t.wdb")


def test_gzip_and_standard_input_take_the_same_ranges(tmp_path: Path):
    text = records(300, 18)
    fasta = write(tmp_path / "in.fa", text)
    want = recorded(fasta, tmp_path / "t.wdb")
    zipped = write(tmp_path / "in.fa.gz", gzip.compress(text.encode()))
    for processes in (True, False):
        assert build(zipped, tmp_path / "z.wdb", workers=3, processes=processes).stages
        got = files_of(tmp_path / "z.wdb")
        assert got[HEADER].pop("source") == "in.fa.gz"
        assert got == {**want, HEADER: {k: v for k, v in want[HEADER].items() if k != "source"}}
    run = fresh(["-m", "wavedp.cli", "makedb", "-", "-o", str(tmp_path / "s.wdb")],
                input=text, capture_output=True, text=True, check=True)
    assert "300 sequences" in run.stderr
    got = files_of(tmp_path / "s.wdb")
    assert got[HEADER].pop("source") == "-"
    assert got == {**want, HEADER: {k: v for k, v in want[HEADER].items() if k != "source"}}


def test_the_alphabet_is_the_first_pieces(tmp_path: Path):
    """The first piece (the first MB) decides: DNA there and protein later is the record
    reader's error, said by it."""
    dna = records(3000, 11, letters="ACGT", longest=1600)
    assert len(dna) > 2 * building.BATCH_RESIDUES  # the record reader's first batch: DNA too
    fasta = write(tmp_path / "in.fa", dna + ">p\nMKVLW\n")
    with pytest.raises(InputError, match="looked like DNA"):
        build(fasta, tmp_path / "p.wdb")
    assert sorted(os.listdir(tmp_path)) == ["in.fa"]


@pytest.mark.parametrize("text", [
    "@a\nMKV\n+\nIII\n",  # FASTQ
    ">\u00e9\nMKV\n",  # a non-ASCII id
])
def test_files_the_record_reader_builds(tmp_path: Path, text: str):
    fasta = write(tmp_path / "in.fa", text)
    assert not build(fasta, tmp_path / "p.wdb").stages
    assert files_of(tmp_path / "p.wdb") == recorded(fasta, tmp_path / "t.wdb")


@pytest.mark.parametrize("text, says", [
    (">a\nMKV\n>b\nMK1V\n", "record 'b', position 3: invalid character '1'"),
    (">a\nMKV\n>\nMKV\n", "no id"),
    (">a\nMKV\n> b\nMKV\n", "no id"),
    (">a\nMK\x01V\n", "record 'a', position 3: control byte 0x01"),
    (">\u00e9\nMK\u00e9V\n", "record '\u00e9', position 3"),
    ("text\n>a\nMKV\n", "not FASTA or FASTQ"),
    (">a\nMK V\n", "record 'a', position 3: invalid character ' '"),
    ("", "no records"),
    ("\n \n", "no records"),
])
@pytest.mark.parametrize("processes", [True, False])
def test_the_record_reader_says_what_and_where(tmp_path: Path, text: str, says: str,
                                               processes: bool):
    fasta = write(tmp_path / "in.fa", text)
    with pytest.raises(InputError, match=says) as info:
        build(fasta, tmp_path / "p.wdb", processes=processes)
    assert "\n" not in str(info.value)
    assert sorted(os.listdir(tmp_path)) == ["in.fa"]


def test_a_threaded_process_builds_on_threads(tmp_path: Path):
    fasta = write(tmp_path / "in.fa", records(100, 19))
    setup = ("import threading\n"
             "threading.Thread(target=threading.Event().wait, daemon=True).start()\n"
             "import os\n"
             "def refused():\n"
             "    raise AssertionError('forked')\n"
             "os.fork = refused")
    assert build(fasta, tmp_path / "p.wdb", workers=3, setup=setup).stages
    assert files_of(tmp_path / "p.wdb") == recorded(fasta, tmp_path / "t.wdb")


def test_fewer_workers_than_fewest_are_threads(tmp_path: Path):
    fasta = write(tmp_path / "in.fa", ">a\nMKV\n")
    forks = ("import os\n"
             "fork = os.fork\n"
             "def counted():\n"
             "    print('forked', flush=True)\n"
             "    return fork()\n"
             "os.fork = counted\n"
             "makedb.FEWEST = 4")
    for workers, forked in ((3, False), (4, True)):
        code = _APART.format(low=64, high=300, setup=forks)
        run = fresh(["-c", code, str(fasta), str(tmp_path / "p.wdb"), "auto", str(workers),
                     "0", "1"], capture_output=True, text=True, check=True)
        assert ("forked" in run.stdout) == forked


def test_a_worker_that_cannot_write_is_one_error_and_nothing_left(tmp_path: Path):
    full = ("def full(fd, data, position):\n"
            "    raise OSError(28, 'No space left on device')\n"
            "makedb._pwrite = full")
    fasta = write(tmp_path / "in.fa", records(100, 12))
    for processes in (True, False):
        with pytest.raises(InputError, match="cannot write database .*p.wdb: No space left"):
            build(fasta, tmp_path / "p.wdb", workers=3, setup=full, processes=processes)
        assert sorted(os.listdir(tmp_path)) == ["in.fa"]


def test_a_worker_that_dies_leaves_the_file_to_the_record_reader(tmp_path: Path):
    fasta = write(tmp_path / "in.fa", records(100, 13))
    assert not build(fasta, tmp_path / "p.wdb", workers=3,
                     setup="import os\nfrom wavedp.fasta_parser import Encoded\n"
                           "Encoded.pieces = lambda *a: os._exit(3)").stages
    assert files_of(tmp_path / "p.wdb") == recorded(fasta, tmp_path / "t.wdb")


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


def test_the_command_imports_numpy_once_before_its_workers_are_forked(tmp_path: Path):
    """``wavedp makedb`` imports the parser's NumPy before it forks its workers, which inherit
    it (each importing its own cost 0.1 s of a 0.7 s build on the 16-core H200 host)."""
    fasta = write(tmp_path / "in.fa", records(300, 15))
    code = ("import sys\n"
            "from wavedp.db import makedb\n"
            "makedb.FEWEST = 1\n"
            "start = makedb._start\n"
            "seen = []\n"
            "def started(*args):\n"
            "    seen.append('numpy' in sys.modules)\n"
            "    return start(*args)\n"
            "makedb._start = started\n"
            "from wavedp.cli import cli\n"
            "try:\n"
            f"    cli(['makedb', {str(fasta)!r}, '-o', {str(tmp_path / 'p.wdb')!r}])\n"
            "except SystemExit as exc:\n"
            "    print(seen, exc.code)\n")
    run = fresh(["-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["[True]", "0"], run.stderr
    assert "300 sequences" in run.stderr
    assert files_of(tmp_path / "p.wdb") == recorded(fasta, tmp_path / "t.wdb")
    header = json.loads((tmp_path / "p.wdb" / HEADER).read_text())
    assert header["source"] == "in.fa"


def test_database_build_takes_makedb(tmp_path: Path, monkeypatch):
    taken = []
    real = makedb.build
    monkeypatch.setattr(dbmod.makedb, "build",
                        lambda *a, **k: taken.append(a) or real(*a, **k))
    fasta = write(tmp_path / "in.fa", records(50, 16))
    Database.build(fasta, tmp_path / "p.wdb", progress=False, threads=2)
    Database.build(fasta, tmp_path / "q.wdb", progress=False, threads=2, processes=False)
    assert len(taken) == 2
    assert files_of(tmp_path / "p.wdb") == files_of(tmp_path / "q.wdb")
