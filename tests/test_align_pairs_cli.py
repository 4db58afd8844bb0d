"""``wavedp align --pairs``: the k-th query record against the k-th target record, streamed
in chunks, every format equal to the cross product's pairs; bad input is one line, exit 2,
nothing written."""

from __future__ import annotations

import gzip
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers import DNA, fresh, invoke, random_seq, related

from wavedp import fasta_scan
from wavedp.pairs import reading

DNA_OPTS = ["--match", "2", "--mismatch", "-3", "--device", "cpu"]


def _files(tmp_path: Path, count: int = 9, seed: int = 3) -> tuple[Path, Path, list, list]:
    rng = np.random.default_rng(seed)
    queries = [random_seq(rng, DNA, int(rng.integers(1, 60))) for _ in range(count)]
    targets = [related(rng, q, DNA, 0.2) + random_seq(rng, DNA, 20) for q in queries]
    q, t = tmp_path / "q.fa", tmp_path / "t.fa"
    q.write_text("".join(f">r{k} read\n{s}\n" for k, s in enumerate(queries)))
    t.write_text("".join(f">w{k}\n{s[:30]}\n{s[30:]}\n" for k, s in enumerate(targets)))
    return q, t, queries, targets


@pytest.mark.parametrize("fmt", ["blast6", "sam", "json", "pairwise"])
@pytest.mark.parametrize("mode", ["local", "global", "semiglobal"])
def test_pairs_equal_the_cross_products_diagonal(tmp_path, monkeypatch, fmt, mode):
    q, t, queries, targets = _files(tmp_path)
    monkeypatch.setattr(reading, "CHUNK", 4)  # several chunks
    got = invoke("align", q, t, "--pairs", "--format", fmt, "--mode", mode, *DNA_OPTS)
    assert got.exit_code == 0, got.output
    lines = []
    for k in range(len(queries)):
        one_q, one_t = tmp_path / f"q{k}.fa", tmp_path / f"t{k}.fa"
        one_q.write_text(f">r{k}\n{queries[k]}\n")
        one_t.write_text(f">w{k}\n{targets[k]}\n")
        want = invoke("align", one_q, one_t, "--format", fmt, "--mode", mode, *DNA_OPTS)
        lines += [""] if lines and fmt == "pairwise" else []  # blocks apart by a blank line
        lines += [x for x in want.stdout.splitlines() if not x.startswith("@")]
    body = [x for x in got.stdout.splitlines() if not x.startswith("@")]
    assert body == lines
    if fmt == "sam":
        assert [x for x in got.stdout.splitlines() if x.startswith("@SQ")] == [
            f"@SQ\tSN:w{k}\tLN:{len(s)}" for k, s in enumerate(targets)]


def test_paf_gzip_and_standard_input(tmp_path):
    q, t, queries, targets = _files(tmp_path)
    zipped = tmp_path / "t.fa.gz"
    zipped.write_bytes(gzip.compress(t.read_bytes()))
    got = invoke("align", "-", zipped, "--pairs", "--format", "paf", *DNA_OPTS,
                 stdin=q.read_text())
    assert got.exit_code == 0, got.output
    rows = [x.split("\t") for x in got.stdout.splitlines()]
    assert [r[0] for r in rows] == [f"r{k}" for k in range(len(queries))]
    assert [int(r[1]) for r in rows] == [len(s) for s in queries]
    assert all(r[4] in "+*" and r[12].startswith("AS:i:") for r in rows)


@pytest.mark.parametrize("case, message", [
    ("unequal", "as many target records as query records: 9 in"),
    ("empty", "is empty: --pairs aligns every record with its mate"),
    ("paf", "--format paf needs the alignments' starts"),
    ("letter", "invalid character"),
    ("target letter", "invalid character 'J'"),  # read as codes alone, the letter named
])
def test_bad_input_one_line_nothing_written(tmp_path, case, message):
    q, t, _, _ = _files(tmp_path)
    args = ["--format", "paf", "--score-only"] if case == "paf" else []
    if case == "unequal":
        t.write_text(t.read_text() + ">extra\nACGT\n")
    if case == "empty":
        t.write_text(t.read_text() + ">extra\n")
        q.write_text(q.read_text() + ">more\nACGT\n")
    if case == "letter":
        q.write_text(q.read_text().replace("A", "J", 1))
    if case == "target letter":
        t.write_text(t.read_text().replace("A", "J", 1))
        args = ["--format", "paf"]
    out = tmp_path / "out.txt"
    got = invoke("align", q, t, "--pairs", "-o", out, *args, *DNA_OPTS)
    assert got.exit_code == 2
    errors = [x for x in got.stderr.splitlines() if x.startswith("wavedp: error")]
    assert len(errors) == 1 and message in errors[0], got.stderr
    assert not out.exists() and [p.name for p in tmp_path.iterdir() if ".part" in p.name] == []


@pytest.mark.parametrize("fmt", ["sam", "paf", "blast6"])
@pytest.mark.parametrize("case", ["unequal", "empty"])
def test_a_file_is_checked_as_it_streams(tmp_path, monkeypatch, fmt, case):
    """A file output is put in place only at the end, so its inputs are not counted first:
    a fault found chunks later still leaves nothing written, with the same one line."""
    q, t, _, _ = _files(tmp_path)
    monkeypatch.setattr(reading, "CHUNK", 2)
    if case == "unequal":
        q.write_text(q.read_text() + ">more\nACGT\n")
    else:
        q.write_text(q.read_text() + ">more\n\n")
        t.write_text(t.read_text() + ">extra\nACGT\n")
    out = tmp_path / f"out.{fmt}"
    got = invoke("align", q, t, "--pairs", "--format", fmt, "-o", out, *DNA_OPTS)
    assert got.exit_code == 2
    errors = [x for x in got.stderr.splitlines() if x.startswith("wavedp: error")]
    want = ("as many target records as query records: 10 in" if case == "unequal" else
            "query record 10 (more) is empty")
    assert len(errors) == 1 and want in errors[0], got.stderr
    assert not out.exists() and [p.name for p in tmp_path.iterdir() if ".part" in p.name] == []


@pytest.mark.skipif(shutil.which("samtools") is None, reason="needs samtools (Debian)")
def test_sam_one_primary_a_read_across_chunks(tmp_path, monkeypatch):
    """A read against each of its candidate windows (its record repeated, side by side):
    its first pair is the primary record, the others secondary (FLAG 256), also where its
    run goes on into the next chunk; samtools counts one primary a read."""
    rng = np.random.default_rng(8)
    reads = [random_seq(rng, DNA, 40) for _ in range(5)]
    runs = [1, 3, 4, 1, 2]
    q, t = tmp_path / "q.fa", tmp_path / "t.fa"
    pairs = list(enumerate(zip(reads, runs, strict=True)))
    q.write_text("".join(f">read{k}\n{r}\n" * n for k, (r, n) in pairs))
    t.write_text("".join(f">w{k}_{j}\n{related(rng, r, DNA, 0.1)}\n"
                         for k, (r, n) in pairs for j in range(n)))
    monkeypatch.setattr(reading, "CHUNK", 3)  # runs across chunks
    out = tmp_path / "out.sam"
    got = invoke("align", q, t, "--pairs", "--format", "sam", "-o", out, *DNA_OPTS)
    assert got.exit_code == 0, got.output
    records = [line.split("\t") for line in out.read_text().splitlines()
               if not line.startswith("@")]
    firsts = [k == 0 or records[k - 1][0] != r[0] for k, r in enumerate(records)]
    assert [r[1] for r in records] == ["0" if f else "256" for f in firsts]
    primary = subprocess.run(["samtools", "view", "-c", "-F", "256", str(out)],
                             capture_output=True, text=True, check=True).stdout
    assert int(primary) == len(reads)


def test_counting_records(tmp_path):
    fasta = tmp_path / "a.fa"
    fasta.write_text(">a\nAC\nGT\n>b\n\n>c\nA")
    assert reading.count_records(str(fasta))[0] == 3
    fastq = tmp_path / "a.fq"
    fastq.write_text("@a\nACGT\n+\nIIII\n@b\nAC\n+\nII")
    assert reading.count_records(str(fastq))[0] == 2
    zipped = tmp_path / "a.fa.gz"
    zipped.write_bytes(gzip.compress(fasta.read_bytes()))
    assert reading.count_records(str(zipped))[0] == 3


def test_empty_record_found_before_any_output(tmp_path, monkeypatch):
    """An empty record in a later chunk is found by the first scan: standard output gets
    nothing, not the chunks before it."""
    q, t, _, _ = _files(tmp_path)
    monkeypatch.setattr(reading, "CHUNK", 2)
    t.write_text(t.read_text() + ">extra\n\n")
    q.write_text(q.read_text() + ">more\nACGT\n")
    got = invoke("align", q, t, "--pairs", *DNA_OPTS)
    assert got.exit_code == 2 and got.stdout == ""
    assert "target record 10 is empty" in got.stderr


def test_counting_many_records_across_blocks(tmp_path, monkeypatch):
    """Records and the first empty one counted across the parser's pieces."""
    monkeypatch.setattr(fasta_scan, "PIECE", 5)
    path = tmp_path / "a.fa"
    path.write_bytes(b">a\nACGTACGT\n>bb\r\n\r\n>c\nAC\n>d\nAAAAAAAAAAAAAAAAAAAAA\n>e\n")
    records, _, empty = reading.count_records(str(path))
    assert (records, empty) == (5, 2)


def test_gpu_fault_is_one_line(tmp_path):
    """CuPy's out-of-memory error (another process holding the GPU) is one line, exit 1, in
    a fresh process (the command leaves by os._exit)."""
    q, t, _, _ = _files(tmp_path)
    out = tmp_path / "out.sam"
    code = (
        "import sys\n"
        "import wavedp.pairs.api as api\n"
        "class OutOfMemoryError(MemoryError):\n"
        "    pass\n"
        "OutOfMemoryError.__module__ = 'cupy.cuda.memory'\n"
        "def fail(*args, **kwargs):\n"
        "    raise OutOfMemoryError('Out of memory allocating 2,560 bytes')\n"
        "api.run = fail\n"
        "from wavedp.cli import main\n"
        "sys.argv = ['wavedp', *sys.argv[1:]]\n"
        "main()\n")
    done = fresh(["-c", code, "align", str(q), str(t), "--pairs", "-o", str(out), *DNA_OPTS],
                 capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert [x for x in done.stderr.splitlines() if x.startswith("wavedp: error")] == [
        "wavedp: error: the GPU failed: OutOfMemoryError: Out of memory allocating 2,560 bytes"
        " (another process may hold its memory: nvidia-smi lists them)"]
    assert not out.exists()


@pytest.mark.gpu
@pytest.mark.parametrize("fmt", ["sam", "paf"])
def test_gpu_command_equals_cpu(tmp_path, monkeypatch, fmt):
    """Chunks aligned on the GPU write what the CPU writes."""
    monkeypatch.setattr(reading, "CHUNK", 4)
    q, t, _, _ = _files(tmp_path, count=30)
    outs = {}
    for device in ("cpu", "gpu"):
        out = tmp_path / f"{device}.{fmt}"
        got = invoke("align", q, t, "--pairs", "--format", fmt, "-o", out, "--match", "2",
                     "--mismatch", "-3", "--device", device)
        assert got.exit_code == 0, got.stderr
        outs[device] = [x for x in out.read_text().splitlines() if not x.startswith("@PG")]
    assert outs["cpu"] == outs["gpu"] and len(outs["cpu"]) >= 30


def test_sam_target_ids_checked_by_hash_then_compared(tmp_path, monkeypatch):
    """SAM's duplicate reference names: found across read chunks (the later one named), and
    two ids whose hashes meet without being equal pass (they are compared on a second read)."""
    from wavedp.cli import pairs as command
    from wavedp.errors import InputError

    monkeypatch.setattr(reading, "CHUNK", 3)
    path = tmp_path / "t.fa"
    ids = [f"t{k}" for k in range(10)]
    path.write_text("".join(f">{rid}\nACGT\n" for rid in ids))
    command._unique_ids(str(path), np.arange(10, dtype=np.int64))
    command._unique_ids(str(path), np.array([5, 1, 2, 3, 4, 5, 6, 7, 8, 9], np.int64))  # met
    ids[7] = "t1"
    path.write_text("".join(f">{rid}\nACGT\n" for rid in ids))
    with pytest.raises(InputError, match=r"the id 't1' names target 8 and one before it"):
        command._unique_ids(str(path), reading.id_hashes(ids))


def test_id_hashes_of_a_piece_and_of_a_list_agree():
    """An id's hash is the same from a FASTA piece's text and from a list of strings; equal
    ids hash equal (non-ASCII too), these distinct ones apart."""
    from wavedp.pairs.sequences import Joined

    ids = ["t1", "read/2", "t1", "é", "", "x" * 300, "é"]
    blob = "".join(f"{i}\n" for i in ids).encode()
    got = reading.id_hashes(Joined(blob))
    assert got.dtype == np.int64 and got.tolist() == reading.id_hashes(ids).tolist()
    assert got[0] == got[2] and got[3] == got[6]
    assert len(set(got.tolist())) == 5
