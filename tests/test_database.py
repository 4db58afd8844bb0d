"""The memory-mapped sequence database (``.wdb``) and the streaming reader behind it."""

from __future__ import annotations

import gzip
import json
import os
import threading
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pytest
from helpers import db_data, fresh, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wavedp import InputError, Scoring, fasta_scan
from wavedp.db import building, makedb, read_progress, reading
from wavedp.db import database as dbmod
from wavedp.db import files as dbfiles
from wavedp.db.database import Database
from wavedp.db.files import PROTEIN_LETTERS, header_text
from wavedp.dbsearch.api import iter_search
from wavedp.fasta_parser import encode_range
from wavedp.seqio import iter_records, read_records


@pytest.fixture(autouse=True)
def _threads(monkeypatch):
    """The threaded and record paths of Database.build here, on any machine (the processes'
    path, taken on machines of makedb.FEWEST cores or more, is tests/test_makedb.py's)."""
    monkeypatch.setattr(makedb, "FEWEST", 1 << 30)

BLOSUM62 = Scoring(matrix="BLOSUM62")
DNA = Scoring(match=1, mismatch=-1)

PROTEIN_FA = (
    ">p1 first protein\nMKTAYIAKQRQ\nisfvkshfsrq\n"  # two lines, lower case
    ">empty\n"
    ">one\nW\n"
    ">rare a U, O and J\nAUOJBZX*\n"
    ">p5\nGSHMLEDPVDAFQLGK\n"
)
PROTEIN_EXPECTED = [
    ("p1", "MKTAYIAKQRQISFVKSHFSRQ"), ("empty", ""), ("one", "W"), ("rare", "AXXXBZX*"),
    ("p5", "GSHMLEDPVDAFQLGK"),
]
DNA_FA = ">d1\nACGTacgt\n>d2 iupac\nRYSWKMBDHVNryswkmbdhvn\n>d3\nuU\n>d4\n\n>d5\nG\n"
DNA_EXPECTED = [
    ("d1", "ACGTACGT"), ("d2", "N" * 22), ("d3", "TT"), ("d4", ""), ("d5", "G"),
]


def to_fastq(text: str) -> str:
    """The FASTQ twin of a FASTA text (sequence lines joined)."""
    out = []
    for rid, seq in read_records_from_text(text):
        out.append(f"@{rid}\n{seq}\n+\n{'I' * len(seq)}\n")
    return "".join(out)


def read_records_from_text(text: str) -> list[tuple[str, str]]:
    records = []
    for block in text.split(">")[1:]:
        head, _, body = block.partition("\n")
        records.append((head.split()[0], "".join(body.split())))
    return records


def build(tmp_path: Path, text: str, alphabet: str = "protein", name: str = "in.fa") -> Database:
    return Database.build(write(tmp_path / name, text), tmp_path / "db.wdb", alphabet,
                          progress=False)


def assert_contents(db: Database, expected: list[tuple[str, str]], scoring: Scoring) -> None:
    assert len(db) == len(expected)
    assert list(db.ids) == [rid for rid, _ in expected]
    assert db.lengths.tolist() == [len(seq) for _, seq in expected]
    assert db.offsets.tolist() == np.concatenate([[0], np.cumsum(db.lengths)]).tolist()
    assert db.total_residues == sum(len(seq) for _, seq in expected)
    assert db.longest == max(len(seq) for _, seq in expected)
    for k, (rid, seq) in enumerate(expected):
        assert db.id(k) == rid
        assert db.text(k) == seq
        assert db.codes(k).tolist() == scoring.encode(seq).tolist()


def same_database(a: Database, b: Database) -> None:
    assert (a.alphabet, a.letters, len(a)) == (b.alphabet, b.letters, len(b))
    assert np.array_equal(a.residues, b.residues)
    assert np.array_equal(a.offsets, b.offsets)
    assert np.array_equal(a.lengths, b.lengths)
    assert np.array_equal(a.composition, b.composition)
    assert list(a.ids) == list(b.ids)
    assert (a.total_residues, a.longest) == (b.total_residues, b.longest)


# ---- round trips -------------------------------------------------------------------------

def test_protein_letters_are_biopythons_blosum62_alphabet():
    assert PROTEIN_LETTERS == BLOSUM62.alphabet


def test_protein_round_trip(tmp_path: Path):
    built = build(tmp_path, PROTEIN_FA)
    db = Database.open(tmp_path / "db.wdb")
    for d in (built, db):
        assert d.path == str(tmp_path / "db.wdb")
        assert (d.alphabet, d.letters) == ("protein", PROTEIN_LETTERS)
        assert_contents(d, PROTEIN_EXPECTED, BLOSUM62)
    assert db.residues.dtype == np.uint8 and db.offsets.dtype == np.int64
    assert db.lengths.dtype == np.int32
    assert isinstance(db.residues, np.memmap) and not db.residues.flags.writeable
    assert db.id(-1) == "p5" and db.ids[-1] == "p5" and db.ids[1:3] == ["empty", "one"]
    assert db.composition.sum() == db.total_residues
    with pytest.raises(IndexError):
        db.id(len(db))
    assert sorted(os.listdir(tmp_path)) == ["db.wdb", "in.fa"]  # no temporary folder left
    header = json.loads((tmp_path / "db.wdb" / "header.json").read_text())
    assert (header["format"], header["version"], header["sequences"]) == ("wavedp-db", 4, 5)


@pytest.mark.parametrize("kind", ["fasta", "fastq", "fasta.gz", "fastq.gz"])
def test_fastq_and_gzip_give_the_same_database(tmp_path: Path, kind: str):
    text = to_fastq(PROTEIN_FA) if kind.startswith("fastq") else PROTEIN_FA
    data = text.encode()
    path = tmp_path / f"in.{kind}"
    path.write_bytes(gzip.compress(data) if kind.endswith(".gz") else data)
    db = Database.build(path, tmp_path / "db.wdb", progress=False)
    assert_contents(db, PROTEIN_EXPECTED, BLOSUM62)
    assert_contents(Database.open(db.path), PROTEIN_EXPECTED, BLOSUM62)


def test_dna_round_trip(tmp_path: Path):
    db = build(tmp_path, DNA_FA, "dna")
    assert (db.alphabet, db.letters) == ("dna", "ACGTN")
    assert_contents(Database.open(db.path), DNA_EXPECTED, DNA)
    assert db.codes_for(Scoring(match=2, mismatch=-3)) is None


def test_from_sequences_equals_a_built_database(tmp_path: Path):
    records = read_records_from_text(PROTEIN_FA)
    memory = Database.from_sequences([s for _, s in records], [r for r, _ in records])
    assert memory.path is None
    same_database(memory, build(tmp_path, PROTEIN_FA))
    assert_contents(memory, PROTEIN_EXPECTED, BLOSUM62)
    dna = Database.from_sequences([s for _, s in read_records_from_text(DNA_FA)],
                                  alphabet="dna")
    assert list(dna.ids) == ["seq1", "seq2", "seq3", "seq4", "seq5"]
    assert [dna.text(k) for k in range(len(dna))] == [s for _, s in DNA_EXPECTED]


def test_replacing_an_existing_database(tmp_path: Path):
    build(tmp_path, ">a\nMK\n")
    db = build(tmp_path, ">b\nWW\n>c\nH\n")
    assert list(db.ids) == ["b", "c"]
    assert sorted(os.listdir(tmp_path)) == ["db.wdb", "in.fa"]


def test_iter_records_streams(tmp_path: Path):
    path = write(tmp_path / "s.fa", ">a\nMK\n>b\nW\n")
    records = iter_records(path)
    assert next(records) == ("a", "MK")
    assert list(records) == [("b", "W")]
    assert read_records(path) == [("a", "MK"), ("b", "W")]


def test_read_position_follows_the_reader(tmp_path: Path):
    path = write(tmp_path / "p.fa", "".join(f">r{k}\n{'A' * 100}\n" for k in range(2000)))
    position = read_progress.ReadPosition(str(path))
    records = iter_records(path)
    next(records)
    done = position.bytes_read()
    if done is None:
        pytest.skip("no /proc/self/fd or /dev/fd here")
    assert 0 < done <= path.stat().st_size
    records.close()


# ---- other matrices ----------------------------------------------------------------------

@pytest.mark.parametrize("matrix", ["BLOSUM62", "PAM250", "BLOSUM45"])
def test_same_letter_order_needs_no_translation(tmp_path: Path, matrix: str):
    assert build(tmp_path, PROTEIN_FA).codes_for(Scoring(matrix=matrix)) is None


@pytest.mark.parametrize("matrix", ["BLASTP", "MCLACHLAN"])
def test_translation_to_another_matrix(tmp_path: Path, matrix: str):
    scoring = Scoring(matrix=matrix)
    assert scoring.alphabet != PROTEIN_LETTERS
    texts = ["MKTAYIAKQRQISFVKSHFSRQ", "", "W", "ACDEFGHIKLMNPQRSTVWY" * 3]
    if matrix == "BLASTP":
        texts.append("BZX*")
    db = build(tmp_path, "".join(f">s{k}\n{t}\n" for k, t in enumerate(texts)))
    table = db.codes_for(scoring)
    assert table is not None and table.dtype == np.uint8 and table.size == 256
    for k, text in enumerate(texts):
        assert table[db.codes(k)].tolist() == scoring.encode(text).tolist()


def test_translation_refuses_letters_the_matrix_lacks(tmp_path: Path):
    db = build(tmp_path, ">a\nMKV\n>b\nMKXB\n")
    with pytest.raises(InputError, match=r"db\.wdb.*'B', 'X'.*MCLACHLAN"):
        db.codes_for(Scoring(matrix="MCLACHLAN"))


@pytest.mark.parametrize("alphabet, scoring, needle", [
    ("protein", DNA, "a protein database cannot be searched with DNA scoring"),
    ("dna", BLOSUM62, "a DNA database cannot be searched with matrix scoring"),
])
def test_alphabet_mismatch(tmp_path: Path, alphabet: str, scoring: Scoring, needle: str):
    db = build(tmp_path, ">a\nACGT\n", alphabet)
    for d in (db, Database.open(db.path)):
        with pytest.raises(InputError, match="db.wdb") as info:
            d.codes_for(scoring)
        assert needle in str(info.value)
    memory = Database.from_sequences(["ACGT"], alphabet=alphabet)
    with pytest.raises(InputError, match=needle):
        memory.codes_for(scoring)


# ---- chunks ------------------------------------------------------------------------------

@pytest.mark.parametrize("limit", [1, 3, 7, 10, 1000])
def test_chunks_cover_everything_within_the_limit(limit: int):
    rng = np.random.default_rng(limit)
    texts = ["A" * int(n) for n in rng.integers(0, 12, size=60)]
    db = Database.from_sequences(texts)
    ranges = list(db.chunks(limit))
    assert ranges[0][0] == 0 and ranges[-1][1] == len(db)
    for (start, stop), (nxt, _) in zip(ranges, ranges[1:] + [(len(db), 0)], strict=True):
        assert start < stop == nxt
        size = int(db.lengths[start:stop].sum())
        assert size <= limit or stop == start + 1
        if stop < len(db):  # greedy: the next sequence would not have fitted
            assert size + int(db.lengths[stop]) > limit


def test_chunks_need_a_positive_limit():
    with pytest.raises(InputError, match="max_residues"):
        list(Database.from_sequences(["MK"]).chunks(0))


# ---- bad input ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, alphabet, needles", [
    (">ok\nMKV\n>r2 desc\nMKV\nAB1V\n", "protein",
     ("bad.fa", "record 'r2'", "position 6", "'1'", "protein")),
    (">ok\nACGT\n>r2\nACGTE\n", "dna", ("bad.fa", "record 'r2'", "position 5", "'E'", "DNA")),
    (">ok\nMKÄ\n", "protein", ("bad.fa", "record 'ok'", "position 3", "'Ä'")),
    ("", "protein", ("bad.fa", "no records")),
    ("\n \n", "protein", ("bad.fa", "no records")),
    ("@r1\nACGT\n+\nII\n", "dna", ("bad.fa", "malformed FASTQ")),
    ("junk\n", "protein", ("bad.fa", "not FASTA or FASTQ")),
])
def test_bad_input_files(tmp_path: Path, text: str, alphabet: str, needles: tuple[str, ...]):
    with pytest.raises(InputError) as info:
        build(tmp_path, text, alphabet, name="bad.fa")
    for needle in needles:
        assert needle in str(info.value), (needle, str(info.value))
    assert sorted(os.listdir(tmp_path)) == ["bad.fa"]


def test_bad_arguments(tmp_path: Path):
    path = write(tmp_path / "in.fa", ">a\nMK\n")
    with pytest.raises(InputError, match="alphabet"):
        Database.build(path, tmp_path / "x.wdb", "rna", progress=False)
    with pytest.raises(InputError, match="in.fa.*not a wavedp database"):
        Database.build(path, path, progress=False)  # never overwrites a non-database
    (tmp_path / "folder").mkdir()
    with pytest.raises(InputError, match="folder"):
        Database.build(path, tmp_path / "folder", progress=False)
    with pytest.raises(InputError, match="nowhere"):
        Database.build(path, tmp_path / "nowhere" / "x.wdb", progress=False)
    with pytest.raises(InputError, match="missing.fa"):
        Database.build(tmp_path / "missing.fa", tmp_path / "x.wdb", progress=False)
    with pytest.raises(InputError, match="at least one sequence"):
        Database.from_sequences([])
    with pytest.raises(InputError, match="1 ids for 2"):
        Database.from_sequences(["MK", "W"], ["a"])
    with pytest.raises(InputError, match="'b', position 2: invalid character '1'"):
        Database.from_sequences(["MK", "W1"], ["a", "b"])
    assert sorted(os.listdir(tmp_path)) == ["folder", "in.fa"]


def _damage(folder: Path, how: str) -> str:
    """Damage a database folder; the file name the error must mention."""
    header_path = folder / "header.json"
    header = json.loads(header_path.read_text())
    data_dir = db_data(folder)
    if how == "truncated residues":
        data = (data_dir / "residues.u8").read_bytes()
        (data_dir / "residues.u8").write_bytes(data[:-1])
        return "residues.u8"
    if how == "flipped byte":
        data = bytearray((data_dir / "residues.u8").read_bytes())
        data[len(data) // 2] ^= 0x01
        (data_dir / "residues.u8").write_bytes(bytes(data))
        return "residues.u8"
    if how == "missing file":
        (data_dir / "lengths.i32").unlink()
        return "lengths.i32"
    if how == "missing header":
        header_path.unlink()
        return "db.wdb"
    if how == "not json":
        header_path.write_text("{ nope")
        return "header.json"
    if how == "wrong format name":
        header["format"] = "other"
    elif how == "wrong version":
        header["version"] = 99
    elif how == "counts disagree":
        header["sequences"] += 1
        return _rewrite(header_path, header, "offsets.i64")
    elif how == "offsets disagree":  # consistent sizes and checksums, wrong content
        offsets = np.fromfile(data_dir / "offsets.i64", dtype="<i8")
        offsets[1] += 1
        offsets.tofile(data_dir / "offsets.i64")
        crc = zlib.crc32((data_dir / "offsets.i64").read_bytes())
        header["files"]["offsets.i64"]["crc32"] = f"{crc:08x}"
        return _rewrite(header_path, header, "offsets.i64")
    return _rewrite(header_path, header, "header.json")


def _rewrite(path: Path, header: dict, name: str) -> str:
    path.write_text(header_text(header))  # sealed again: the damage is the content's
    return name


@pytest.mark.parametrize("how", [
    "truncated residues", "flipped byte", "missing file", "missing header", "not json",
    "wrong format name", "wrong version", "counts disagree", "offsets disagree",
])
def test_damaged_database_is_an_input_error(tmp_path: Path, how: str):
    build(tmp_path, PROTEIN_FA * 3)
    folder = tmp_path / "db.wdb"
    name = _damage(folder, how)
    with pytest.raises(InputError) as info:
        Database.open(folder)
    message = str(info.value)
    assert name in message and "\n" not in message, message
    if how == "flipped byte":
        assert "checksum" in message
        assert len(Database.open(folder, verify=False)) == 15  # unverified: goes unnoticed
    if how == "wrong version":
        assert "version 99" in message


def test_open_a_missing_or_plain_folder(tmp_path: Path):
    with pytest.raises(InputError, match="nope.wdb.*no such folder"):
        Database.open(tmp_path / "nope.wdb")
    with pytest.raises(InputError, match="header.json is missing"):
        Database.open(tmp_path)


# ---- atomic build ------------------------------------------------------------------------

def test_error_mid_file_leaves_nothing(tmp_path: Path):
    body = "".join(f">r{k}\n{'MKV' * 50}\n" for k in range(3 * building.BATCH_RECORDS))
    path = write(tmp_path / "in.fa", body + ">late\nMK#V\n")
    with pytest.raises(InputError, match="in.fa.*'late'.*position 3.*'#'"):
        Database.build(path, tmp_path / "db.wdb", progress=False)
    assert sorted(os.listdir(tmp_path)) == ["in.fa"]


def test_failed_build_keeps_the_old_database(tmp_path: Path):
    build(tmp_path, ">old\nMK\n")
    with pytest.raises(InputError, match="position 2"):
        build(tmp_path, ">new\nM1\n")
    assert list(Database.open(tmp_path / "db.wdb").ids) == ["old"]
    assert sorted(os.listdir(tmp_path)) == ["db.wdb", "in.fa"]


@pytest.mark.parametrize("reader", ["_ranges", "iter_records"])
def test_interrupt_leaves_nothing(tmp_path: Path, monkeypatch, reader):
    def interrupted(path, *args, **options):
        yield from original(path, *args, **options)
        raise KeyboardInterrupt

    module = makedb if reader == "_ranges" else building  # makedb's ranges
    original = getattr(module, reader)
    monkeypatch.setattr(module, reader, interrupted)
    name = "in.fa" if reader == "_ranges" else "in.fq"  # FASTQ takes the record reader
    text = ">a\nMK\n" if reader == "_ranges" else "@a\nMK\n+\nII\n"
    with pytest.raises(KeyboardInterrupt):
        Database.build(write(tmp_path / name, text), tmp_path / "db.wdb", progress=False)
    assert sorted(os.listdir(tmp_path)) == [name]


def test_write_failure_is_an_input_error(tmp_path: Path, monkeypatch):
    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(dbmod.os, "rename", refuse)
    with pytest.raises(InputError, match="db.wdb.*No space left"):
        build(tmp_path, ">a\nMK\n")
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == ["in.fa"]


# ---- bounded memory ----------------------------------------------------------------------

def test_build_streams_in_bounded_memory(tmp_path: Path):
    rng = np.random.default_rng(7)
    letters = np.frombuffer(b"ACDEFGHIKLMNPQRSTVWY", dtype=np.uint8)
    path = tmp_path / "big.fa"
    line = 60
    with open(path, "wb") as fh:
        for part in range(20):  # 20 x 3 MB of residues, 60 per line
            codes = letters[rng.integers(0, letters.size, size=3_000_000)]
            rows = codes.reshape(-1, line)
            text = np.concatenate([rows, np.full((rows.shape[0], 1), ord("\n"), np.uint8)], 1)
            for k, start in enumerate(range(0, len(text), 50)):  # 3,000-residue records
                fh.write(f">r{part}_{k}\n".encode())
                fh.write(text[start:start + 50].tobytes())
    size = path.stat().st_size
    assert size > 55e6
    build(tmp_path, ">warm\nMK\n")  # the parser compiled (or loaded) outside the tracing
    # a piece (1 MB of file and its codes) in each of the reader, the parsers and the writer
    for threads, bound in ((1, size / 5), (4, size / 3)):
        tracemalloc.start()
        try:
            db = Database.build(path, tmp_path / "big.wdb", progress=False, threads=threads)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert db.total_residues == 60_000_000 and len(db) == 20_000
        assert peak < bound, (threads, peak, size)


# ---- the block reader makedb uses equals the record reader -------------------------------

_LINE_END = st.sampled_from(["\n", "\r\n"])
_RECORD = st.tuples(
    st.text("abcXYZ019_|.-", min_size=1, max_size=12),              # the id
    st.sampled_from(["", " a description", "\tmore words"]),         # the rest of the header
    st.lists(st.text("ACDEFGHIKLMNPQRSTVWYacgt*", max_size=70), max_size=4),  # its lines
    _LINE_END)


def _fasta(records, blank_start: bool) -> bytes:
    text = "\n\n" if blank_start else ""
    for rid, rest, lines, end in records:
        text += f">{rid}{rest}{end}" + "".join(line + end for line in lines)
    return text.encode()


def _ranges(path, block: int):
    """makedb's parser (``encode_range``, codes = letters) over the file's pieces of whole
    records: (letters, lengths, ids, first record's number) each."""
    from wavedp.seqio import fasta_chunks

    for data, first in fasta_chunks(str(path), block):
        got = encode_range(bytes(data), bytes(range(256)), 256, 1 << 40)
        assert got is not None
        yield got.codes, got.lengths, got.ids.tobytes(), first


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(_RECORD, min_size=1, max_size=12), blank_start=st.booleans(),
       block=st.sampled_from([1, 7, 64, 1 << 20]))
def test_fasta_readers_equal_the_record_reader(tmp_path_factory, records, blank_start, block):
    path = tmp_path_factory.mktemp("blocks") / "in.fa"
    path.write_bytes(_fasta(records, blank_start))
    want = read_records(path)
    for blocks in (_ranges(path, block),
                   ((b.letters, b.lengths, b.ids, b.first) for b in
                    fasta_scan.pieces(str(path), threads=2, piece=block))):
        got_ids, got_texts, first = [], [], 1
        for letters, lengths, ids, start in blocks:
            assert start == first
            first += lengths.size
            got_ids += ids.decode().splitlines()
            ends = np.cumsum(lengths)
            got_texts += [letters[e - n:e].tobytes().decode() for e, n in
                          zip(ends, lengths, strict=True)]
        assert list(zip(got_ids, got_texts, strict=True)) == want
    lut = np.arange(256, dtype=np.uint8)[::-1].copy()  # codes: 255 - letter, W invalid
    lut[ord("W")] = 255
    coded = list(fasta_scan.pieces(str(path), lut, threads=2, piece=block))
    assert all(np.array_equal(b.codes, lut[b.letters]) for b in coded)
    assert sum(b.invalid for b in coded) == sum(t.count("W") for _, t in want)
    alone = list(fasta_scan.pieces(str(path), lut, threads=2, piece=block, letters=False))
    assert [b.codes.tobytes() for b in alone] == [b.codes.tobytes() for b in coded]
    # the codes alone, but the letters too in a piece holding an INVALID code (its error)
    assert all(b.letters.size == (b.codes.size if b.invalid else 0) for b in alone)
    bare = list(fasta_scan.pieces(str(path), threads=2, piece=block, letters=False))
    assert [i for b in bare for i in b.ids.decode().splitlines()] == [i for i, _ in want]
    assert [int(n) for b in bare for n in b.lengths] == [len(t) for _, t in want]
    assert all(b.letters.size == 0 and b.codes is None for b in bare)


def test_makedb_fast_and_record_paths_write_the_same_files(tmp_path: Path):
    rng = np.random.default_rng(3)
    letters = np.frombuffer(PROTEIN_LETTERS[:20].encode(), np.uint8)
    lines = []
    for k in range(3000):
        seq = letters[rng.integers(0, 20, int(rng.integers(0, 400)))].tobytes().decode()
        lines.append(f">s{k} d{k}\r\n" + "".join(seq[i:i + 61] + "\n"
                                              for i in range(0, len(seq), 61)))
    fasta = write(tmp_path / "in.fa", "".join(lines))
    Database.build(fasta, tmp_path / "fast.wdb", progress=False, threads=3)
    folder = tmp_path / "slow"
    folder.mkdir()
    builder = building.write_fasta(str(folder), str(fasta), "auto", False)
    header = builder.header()  # the order written
    for name in dbmod.FILES:
        assert (db_data(tmp_path / "fast.wdb") / name).read_bytes() == (folder / name).read_bytes()
    fast = json.loads((tmp_path / "fast.wdb" / dbfiles.HEADER).read_text())
    assert fast["composition"] == header["composition"]
    assert fast["files"] == header["files"]


@pytest.mark.parametrize("text, says", [
    (">a\nMKV\n>b\nMK1V\n", "record 'b', position 3: invalid character '1'"),
    (">a\nMKV\n>\nMKV\n", "no id"),
    (">a\nMK\u00e9V\n", "record 'a', position 3"),
])
def test_makedb_faults_name_record_and_position_on_the_fast_path(tmp_path: Path, text, says):
    with pytest.raises(InputError, match=says):
        Database.build(write(tmp_path / "in.fa", text), tmp_path / "db.wdb", progress=False,
                       alphabet="protein")
    assert sorted(os.listdir(tmp_path)) == ["in.fa"]


def test_background_verification_stops_a_search_before_its_first_result(tmp_path: Path):
    build(tmp_path, ">a\nMKTAYIAKQR\n>b\nMKVLAAGIVG\n")
    folder = tmp_path / "db.wdb"
    data = bytearray((db_data(folder) / "residues.u8").read_bytes())
    data[3] ^= 1
    (db_data(folder) / "residues.u8").write_bytes(bytes(data))
    db = Database.open(folder, verify="background")  # returns at once, the check runs on
    with pytest.raises(InputError, match="residues.u8: checksum mismatch"):
        db.verified()
    results = iter_search(["MKTAYIAK"], db, Scoring(), device="cpu")
    with pytest.raises(InputError, match="checksum mismatch"):
        next(results)
    good = tmp_path / "good"
    good.mkdir()
    build(good, ">a\nMKTAYIAKQR\n")
    fine = Database.open(good / "db.wdb", verify="background")
    fine.verified()
    assert next(iter_search(["MKTAYIAK"], fine, Scoring(), device="cpu"))[1]


@pytest.mark.parametrize("size", [0, 1, 255, 4096, 1 << 17])
def test_the_parsers_byte_counts_are_bincounts(size):
    """makedb counts each piece's bytes by sorting (which releases the GIL, where
    ``np.bincount`` holds it): the same counts."""
    from wavedp.fasta_parser import byte_counts

    rng = np.random.default_rng(size)
    for part in (rng.integers(0, 256, size, dtype=np.uint8),
                 np.full(size, 255, np.uint8), np.zeros(size, np.uint8)):
        assert byte_counts(part).tolist() == np.bincount(part, minlength=256).tolist()


@pytest.mark.parametrize("cores,asked,used", [(16, None, makedb.MAKEDB_THREADS), (2, None, 2),
                                              (16, 12, 12)])
def test_makedb_parses_on_every_core_up_to_a_cap(tmp_path: Path, monkeypatch, cores, asked,
                                                 used):
    """makedb's default threads: every core, at most MAKEDB_THREADS (more contend for the
    interpreter between the parser's passes); an explicit count is taken as given."""
    seen = []
    real = makedb._start
    monkeypatch.setattr(makedb, "cores", lambda: cores)
    monkeypatch.setattr(makedb, "MIN_RANGE", 16)
    monkeypatch.setattr(makedb, "_start", lambda count, *a: seen.append(count) or real(count, *a))
    fasta = write(tmp_path / "in.fa", "".join(f">r{k}\nACDEKLMN\n" for k in range(40)))
    Database.build(fasta, tmp_path / "x.wdb", progress=False, threads=asked, processes=False)
    assert seen == [used]


def test_makedb_progress_in_a_log_is_a_line_at_intervals(tmp_path: Path):
    """Away from a terminal makedb's progress is a plain line at most every ``interval``
    seconds (bytes read of the file's); nothing when not shown."""
    import io

    fasta = write(tmp_path / "in.fa", ">a\n" + "ACDE" * 1_000_000 + "\n")
    now = [0.0]
    out = io.StringIO()
    with read_progress.progress(str(fasta), True, interval=10.0, stream=out,
                         clock=lambda: now[0]) as update:
        with open(fasta, "rb") as fh:  # the reader's descriptor
            fh.seek(3_000_000)
            update()
            now[0] = 10.5
            update()
            now[0] = 15.0
            update()
    assert out.getvalue() == "wavedp: building database from in.fa: 3 of 4 MB read, 10 s\n"
    quiet = io.StringIO()
    with read_progress.progress(str(fasta), False, interval=0.0, stream=quiet) as update:
        update()
    assert quiet.getvalue() == ""


def test_makedb_away_from_a_terminal_loads_no_rich(tmp_path: Path):
    """rich (0.03-0.05 s of a command's start) is imported only for a terminal's bar."""
    fasta = write(tmp_path / "in.fa", ">a\nACDE\n")
    code = ("import sys\n"
            "from wavedp.db.database import Database\n"
            f"Database.build({str(fasta)!r}, {str(tmp_path / 'x.wdb')!r})\n"
            "assert 'rich' not in sys.modules, 'rich imported'\n")
    done = fresh(["-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# ---- the header sealed, the folder replaced whole ------------------------------------------

@pytest.mark.parametrize("text, alphabet", [(DNA_FA, "dna"), (PROTEIN_FA, "protein")])
def test_every_single_bit_flip_of_the_header_is_refused(tmp_path: Path, text, alphabet):
    """The header's last line seals every byte before it: no flipped bit is read as a
    database (one that changed the letters scored every G as N, exit status 0)."""
    build(tmp_path, text, alphabet)
    folder = tmp_path / "db.wdb"
    path = folder / dbfiles.HEADER
    sound = path.read_bytes()
    for k in range(8 * len(sound)):
        flipped = bytearray(sound)
        flipped[k // 8] ^= 1 << (k % 8)
        path.write_bytes(bytes(flipped))
        with pytest.raises(InputError) as info:
            if k % 97:
                reading.read_header(str(folder))
            else:  # now and then the whole open, with the checksums
                Database.open(folder)
        assert "\n" not in str(info.value)
    path.write_bytes(sound)
    assert len(Database.open(folder)) == 5


def _contents(db: Database) -> tuple[list[str], bytes]:
    return list(db.ids[:]), bytes(db.residues)


def test_readers_see_the_old_database_or_the_new_never_a_mix(tmp_path: Path):
    """Rebuilds of one database from two inputs, by two builders at once, while readers open
    and verify it: every open gives one input's database whole, and the last build leaves one
    data folder."""
    inputs = [write(tmp_path / f"in{k}.fa", "".join(
        f">{'ab'[k]}{r} x\n{'MKTAYIAKQR' * (1 + (r + k) % 7)}\n" for r in range(40 + 30 * k)))
        for k in (0, 1)]
    out = tmp_path / "db.wdb"
    wanted = []
    for path in inputs:
        Database.build(path, out, progress=False, processes=False, threads=1)
        wanted.append(_contents(Database.open(out)))
    stop, faults, opened = threading.Event(), [], [0]

    def rebuild(k: int) -> None:
        try:
            for turn in range(12):
                Database.build(inputs[(turn + k) % 2], out, progress=False, processes=False,
                               threads=1)
        except BaseException as exc:  # noqa: BLE001 - reported below
            faults.append(repr(exc))

    def read() -> None:
        while not stop.is_set():
            try:
                got = _contents(Database.open(out, verify=True))
            except BaseException as exc:  # noqa: BLE001 - reported below
                faults.append(repr(exc))
                return
            if got not in wanted:
                faults.append("a mix of two databases")
                return
            opened[0] += 1

    readers = [threading.Thread(target=read) for _ in range(2)]
    builders = [threading.Thread(target=rebuild, args=(k,)) for k in (0, 1)]
    for t in readers + builders:
        t.start()
    for t in builders:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    assert not faults, faults[:3]
    assert opened[0] > 0
    assert _contents(Database.open(out)) in wanted
    left = sorted(os.listdir(out))
    assert left == sorted([dbfiles.HEADER, dbfiles.LOCK, db_data(out).name]), left


@pytest.mark.parametrize("version, removed", [(2, ("order.i32", "runs.i64")),
                                              (3, ("titles.txt", "title_offsets.i64"))])
def test_an_older_database_is_named_to_rebuild(tmp_path: Path, version, removed):
    """A version 2 folder (no stored order) or 3 (no titles): one line naming makedb."""
    build(tmp_path, PROTEIN_FA)
    folder = tmp_path / "db.wdb"
    header = json.loads((folder / dbfiles.HEADER).read_text())
    for name in removed:
        (db_data(folder) / name).unlink()
        del header["files"][name]
    header.pop("title_bytes")
    header["version"] = version
    (folder / dbfiles.HEADER).write_text(header_text(header))
    with pytest.raises(InputError, match=f"version {version} is not supported.*rebuild it "
                                         "with wavedp makedb"):
        Database.open(folder)


@pytest.mark.parametrize("threads, processes", [(1, False), (3, False), (3, True)])
def test_the_stored_order_is_longest_first_ties_in_file_order(tmp_path: Path, threads,
                                                              processes):
    """Every builder stores the sequences longest first, ties (the empty ones last) in file
    order, and the runs of equal lengths: what sorting the lengths gives, and what an
    in-memory database sorts once."""
    rng = np.random.default_rng(7)
    lengths = rng.integers(0, 40, 2_000)
    text = "".join(f">s{k}\n{'MKVW'[k % 4] * int(n)}\n" for k, n in enumerate(lengths))
    db = Database.build(write(tmp_path / "in.fa", text), tmp_path / "db.wdb", progress=False,
                        threads=threads, processes=processes)
    order = np.lexsort((np.arange(lengths.size), -lengths))
    assert np.array_equal(db.order.order, order)
    values, counts = np.unique(lengths, return_counts=True)
    assert np.array_equal(db.order.runs, np.stack([values, counts], 1)[::-1])
    memory = Database.from_sequences(["MKV", "M", "MKVW", "MK", "MKVW"])
    assert memory.order.order.tolist() == [2, 4, 0, 3, 1]
    assert memory.order.runs.tolist() == [[4, 2], [3, 1], [2, 1], [1, 1]]


@pytest.mark.parametrize("runs, why", [
    ([[4, 2], [3, 2]], "counts"),  # 4 sequences where the header says 5
    ([[9, 1], [3, 4]], "the longest"),
    ([[3, 3], [4, 2]], "not descending"),
])
def test_length_runs_that_disagree_with_the_header_are_refused(tmp_path: Path, runs, why):
    from wavedp.db.order import stored_order

    header = {"sequences": 5, "residues": sum(a * b for a, b in [[4, 2], [3, 3]]),
              "longest": 4}
    good = np.array([[4, 2], [3, 3]], np.int64)
    assert stored_order("runs.i64", np.arange(5), good.ravel(), header).n == 5
    with pytest.raises(InputError, match="runs.i64: damaged length runs"):
        stored_order("runs.i64", np.arange(5), np.array(runs, np.int64).ravel(), header)
