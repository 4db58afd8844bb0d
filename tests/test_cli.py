"""The command line (through click's CliRunner) and the sequence reader behind it."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from helpers import assert_user_error, fasta_text, fresh, invoke, write, write_fasta

import wavedp
from wavedp import InputError
from wavedp.device import gpu_status
from wavedp.engines import reference
from wavedp.engines.common import MODES
from wavedp.seqio import read_records

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

PROTEIN_Q = ">p1 first protein\nMKTAYIAKQRQISFVKSHFSRQ\n>p2\nGSHMLEDPVDAFQLGK\n"
PROTEIN_T = ">t1\nMKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQ\n>t2 second\nPVDAFQLGKWW\n>t3\nHHHH\n"


@pytest.fixture
def fasta(tmp_path: Path) -> tuple[Path, Path]:
    return write(tmp_path / "q.fa", PROTEIN_Q), write(tmp_path / "t.fa", PROTEIN_T)


def json_rows(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


# ---- bad input: one line on stderr, exit status 2, no output file -----------------------

def _bad_cases(tmp: Path) -> dict[str, tuple[list[str], tuple[str, ...]]]:
    q = write(tmp / "q.fa", PROTEIN_Q)
    t = write(tmp / "t.fa", PROTEIN_T)
    empty = write(tmp / "empty.fa", "")
    blank = write(tmp / "blank.fa", "\n  \n\n")
    junk = write(tmp / "junk.fa", "this is not fasta\n>x\nMK\n")
    badchar = write(tmp / "bad.fa", ">ok\nMKV\n>r2 desc\nMKV\nAB1V\n")
    trunc_fq = write(tmp / "trunc.fq", "@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nII\n")
    noplus_fq = write(tmp / "noplus.fq", "@r1\nACGT\n")
    noid = write(tmp / "noid.fa", ">\nMKV\n")
    cut_gz = tmp / "cut.fa.gz"
    data = gzip.compress((">a\n" + "".join(PROTEIN_T.split()) * 50 + "\n").encode())
    cut_gz.write_bytes(data[:len(data) - 6])
    dna = write(tmp / "dna.fa", ">d1\nACGTACGT\n")
    twice = write(tmp / "twice.fa", ">t1\nMKV\n>t2\nMKV\n>t1 again\nMKVL\n")
    folder = tmp / "folder"
    folder.mkdir()
    return {
        "missing file": ([str(tmp / "nope.fa"), str(t)], ("nope.fa", "No such file")),
        "directory": ([str(folder), str(t)], ("folder", "directory")),
        "empty file": ([str(q), str(empty)], ("empty.fa", "no records")),
        "blank file": ([str(blank), str(t)], ("blank.fa", "no records")),
        "not fasta": ([str(junk), str(t)], ("junk.fa", "'t'")),
        "invalid character": ([str(badchar), str(t)],
                              ("bad.fa", "'r2'", "position 6", "'1'")),
        "truncated fastq": ([str(trunc_fq), str(t), "--match", "1", "--mismatch", "-1"],
                            ("trunc.fq", "malformed FASTQ")),
        "fastq without plus line": ([str(q), str(noplus_fq)], ("noplus.fq", "malformed")),
        "record without id": ([str(noid), str(t)], ("noid.fa", "no id")),
        "truncated gzip": ([str(cut_gz), str(t)], ("cut.fa.gz", "gzip")),
        "negative gap open": ([str(q), str(t), "--gap-open", "-1"], ("gap_open", "-1")),
        "negative gap extend": ([str(q), str(t), "--gap-extend=-2"], ("gap_extend", "-2")),
        "open below extend": ([str(q), str(t), "--gap-open", "2", "--gap-extend", "3"],
                              ("gap_open (2)", ">= gap_extend (3)")),
        "unknown matrix": ([str(q), str(t), "--matrix", "BLOSUM63"], ("BLOSUM63",)),
        "matrix and match": ([str(q), str(t), "--matrix", "BLOSUM62", "--match", "1",
                              "--mismatch", "-1"], ("not both",)),
        "match without mismatch": ([str(q), str(t), "--match", "1"], ("mismatch",)),
        "int32 overflow": ([str(dna), str(dna), "--match", "100000000", "--mismatch", "-1"],
                           ("int32",)),
        "huge gap open": ([str(q), str(t), "--gap-open", "900000000"], ("int32",)),
        "bad mode": ([str(q), str(t), "--mode", "fuzzy"], ("--mode", "fuzzy")),
        "bad format": ([str(q), str(t), "--format", "xml"], ("--format",)),
        "an id twice in SAM": ([str(q), str(twice), "--format", "sam"],
                               ("twice.fa", "'t1'", "targets 1 and 3", "unique")),
        "non-integer penalty": ([str(q), str(t), "--gap-open", "1.5"], ("--gap-open",)),
        "unknown option": ([str(q), str(t), "--fast"], ("--fast",)),
        "missing argument": ([str(q)], ("TARGET",)),
        "output into a missing folder": ([str(q), str(t), "-o", str(tmp / "no" / "out.txt")],
                                         ("out.txt",)),
        "output is a folder": ([str(q), str(t), "-o", str(folder)], ("folder",)),
    }


BAD_CASES = [
    "missing file", "directory", "empty file", "blank file", "not fasta", "invalid character",
    "truncated fastq", "fastq without plus line", "record without id", "truncated gzip",
    "negative gap open", "negative gap extend", "open below extend", "unknown matrix",
    "matrix and match", "match without mismatch", "int32 overflow", "huge gap open", "bad mode",
    "bad format", "an id twice in SAM",
    "non-integer penalty", "unknown option", "missing argument",
    "output into a missing folder", "output is a folder",
]


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_input_is_one_line_and_status_2(tmp_path: Path, case: str):
    args, needles = _bad_cases(tmp_path)[case]
    before = sorted(os.listdir(tmp_path))
    assert_user_error(invoke("align", *args), *needles)
    assert sorted(os.listdir(tmp_path)) == before


@pytest.mark.parametrize("case", ["missing file", "invalid character", "int32 overflow",
                                  "unknown matrix", "bad mode"])
def test_bad_input_leaves_no_output_file(tmp_path: Path, case: str):
    args, needles = _bad_cases(tmp_path)[case]
    out = tmp_path / "result.txt"
    before = sorted(os.listdir(tmp_path))
    assert_user_error(invoke("align", *args, "-o", out), *needles)
    assert sorted(os.listdir(tmp_path)) == before


def test_bad_case_table_is_complete(tmp_path: Path):
    assert sorted(_bad_cases(tmp_path)) == sorted(BAD_CASES)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads anything")
def test_unreadable_file(tmp_path: Path, fasta):
    q, t = fasta
    q.chmod(0)
    try:
        assert_user_error(invoke("align", q, t), "q.fa", "ermission")
    finally:
        q.chmod(0o644)


def test_unreadable_file_as_any_user(fasta, monkeypatch):
    import wavedp.seqio

    def denied(path):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(wavedp.seqio, "_is_gzip", denied)
    assert_user_error(invoke("align", *fasta), "q.fa", "Permission denied")


@pytest.mark.skipif(gpu_status()[0], reason="a GPU is present")
def test_device_gpu_without_gpu_is_user_error(fasta):
    assert_user_error(invoke("align", *fasta, "--device", "gpu"), "gpu")


def test_failure_mid_run_removes_the_partial_output(tmp_path: Path, fasta, monkeypatch):
    from wavedp.cli import align as align_command

    def explode(*args, **kwargs):
        raise InputError("engine refused the work")

    out = tmp_path / "out.sam"
    before = sorted(os.listdir(tmp_path))
    monkeypatch.setattr(align_command, "run_pairs", explode)
    assert_user_error(invoke("align", *fasta, "--format", "sam", "-o", out, "--device", "cpu"),
                      "refused")
    assert sorted(os.listdir(tmp_path)) == before


def test_write_failure_is_user_error_and_leaves_nothing(tmp_path: Path, fasta, monkeypatch):
    from wavedp.cli import outputs

    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    out = tmp_path / "out.json"
    before = sorted(os.listdir(tmp_path))
    monkeypatch.setattr(outputs.os, "replace", refuse)
    result = invoke("align", *fasta, "--format", "json", "-o", out, "--device", "cpu")
    monkeypatch.undo()
    assert_user_error(result, "out.json", "No space left")
    assert sorted(os.listdir(tmp_path)) == before


def test_real_process_error_has_no_traceback(tmp_path: Path):
    proc = fresh(
        ["-c", "from wavedp.cli import main; main()", "align",
         str(tmp_path / "missing.fa"), str(tmp_path / "missing2.fa")],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"wavedp: error: cannot read file {tmp_path / 'missing.fa'}: No such file or directory"]


# ---- reading -----------------------------------------------------------------------------

def test_read_records_fasta_fastq_gzip_agree(tmp_path: Path):
    fa = write(tmp_path / "r.fa", ">a one\nACGT\nAC\n\n>b\n>c\nGG\n")
    fq = write(tmp_path / "r.fq", "@a one\nACGTAC\n+\nIIIIII\n@b\n\n+\n\n@c\nGG\n+\nII\n")
    gz = tmp_path / "r.fq.gz"
    gz.write_bytes(gzip.compress(fq.read_bytes()))
    fagz = tmp_path / "r.fa.gz"
    fagz.write_bytes(gzip.compress(fa.read_bytes()))
    expected = [("a", "ACGTAC"), ("b", ""), ("c", "GG")]
    for path in (fa, fq, gz, fagz):
        assert read_records(path) == expected
    assert sorted(os.listdir(tmp_path)) == ["r.fa", "r.fa.gz", "r.fq", "r.fq.gz"]  # no index


def test_read_records_multiline_fastq_and_crlf(tmp_path: Path):
    fq = write(tmp_path / "m.fq", "\n@r1\nAC\nGT\n+\nII\nII\n@r2\nA\n+\nI\n")
    assert read_records(fq) == [("r1", "ACGT"), ("r2", "A")]
    crlf = tmp_path / "c.fa"
    crlf.write_bytes(b">x y\r\nMK\r\nV\r\n")
    assert read_records(crlf) == [("x", "MKV")]


@pytest.mark.parametrize("text", [
    "@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nIIIIII\n",   # quality too long
    "@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nII\n",       # quality too short, last record
    "@r1\nACGT\n+\nII\n@r2\nAC\n+\nII\n",           # quality too short, first record
])
def test_read_records_rejects_broken_fastq(tmp_path: Path, text: str):
    with pytest.raises(InputError, match="b.fq.*malformed FASTQ"):
        read_records(write(tmp_path / "b.fq", text))


def test_read_records_rejects_damaged_gzip(tmp_path: Path):
    data = bytearray(gzip.compress((">a\n" + "ACGT" * 5000 + "\n").encode()))
    data[len(data) // 2] ^= 0xFF
    path = tmp_path / "d.fa.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="d.fa.gz"):
        read_records(path)


def test_read_records_rejects_binary(tmp_path: Path):
    path = tmp_path / "bin.fa"
    path.write_bytes(b">a\n\xff\xfe\x00\x01\n")
    with pytest.raises(InputError, match="bin.fa"):
        read_records(path)


# ---- alignments --------------------------------------------------------------------------

def test_examples_default_pairwise():
    result = invoke("align", EXAMPLES / "query.fa", EXAMPLES / "target.fa")
    assert result.exit_code == 0, result.output
    q = read_records(EXAMPLES / "query.fa")
    t = read_records(EXAMPLES / "target.fa")
    assert 3 <= len(q) and 3 <= len(t)
    assert all(100 <= len(s) <= 400 for _, s in q + t)
    blocks = result.stdout.count("# Query:  ")
    assert blocks == len(q) * len(t)
    assert "|" in result.stdout and "wavedp: using" in result.stderr


def test_examples_show_the_planted_homologies():
    result = invoke("align", EXAMPLES / "query.fa", EXAMPLES / "target.fa", "--format",
                    "json", "--device", "cpu")
    rows = {(r["query_id"], r["target_id"]): r for r in json_rows(result.stdout)}
    best = {}
    for (qid, tid), row in rows.items():
        if row["score"] > best.get(qid, (None, -1))[1]:
            best[qid] = (tid, row["score"])
    assert best == {"wdp_q1": ("wdp_t1", best["wdp_q1"][1]),
                    "wdp_q2": ("wdp_t2", best["wdp_q2"][1]),
                    "wdp_q3": ("wdp_t3", best["wdp_q3"][1])}
    assert rows[("wdp_q1", "wdp_t4")]["score"] < best["wdp_q1"][1] / 4


def test_query_major_order(fasta):
    result = invoke("align", *fasta, "--format", "json", "--device", "cpu")
    assert result.exit_code == 0, result.output
    pairs = [(r["query_id"], r["target_id"]) for r in json_rows(result.stdout)]
    assert pairs == [(q, t) for q in ("p1", "p2") for t in ("t1", "t2", "t3")]
    assert result.stderr == ""  # an explicit device is not announced


def test_results_match_the_reference_engine(fasta):
    scoring = wavedp.Scoring()
    q = read_records(fasta[0])
    t = read_records(fasta[1])
    for mode in MODES:
        result = invoke("align", *fasta, "--format", "json", "--mode", mode, "--device", "cpu")
        rows = json_rows(result.stdout)
        k = 0
        for _, qs in q:
            for _, ts in t:
                score, qb, qe, tb, te, ops = reference.align(
                    scoring.encode(qs), scoring.encode(ts), scoring.table, 11, 1, MODES[mode],
                    True)
                assert (rows[k]["score"], rows[k]["query_start"], rows[k]["query_end"],
                        rows[k]["target_start"], rows[k]["target_end"]) == (
                    score, qb, qe, tb, te)
                k += 1


@pytest.mark.parametrize("suffix", [".fq", ".fq.gz", ".fa.gz"])
def test_fastq_and_gzip_inputs_give_the_same_result(tmp_path: Path, suffix: str):
    reads = [("r1", "ACGTTGCAACGTAGCT"), ("r2", "TTGCAACG"), ("r3", "")]
    if suffix.startswith(".fq"):
        text = "".join(f"@{n}\n{s}\n+\n{'I' * len(s)}\n" for n, s in reads)
    else:
        text = fasta_text(reads)
    path = tmp_path / f"reads{suffix}"
    if suffix.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    plain = write_fasta(tmp_path / "reads_plain.fa", reads)
    ref = write(tmp_path / "ref.fa", ">chr\nGGGACGTTGCAACGTAGCTGGG\n")
    args = ["--match", "2", "--mismatch", "-3", "--format", "sam", "--device", "cpu"]
    a = invoke("align", path, ref, *args)
    b = invoke("align", plain, ref, *args)
    assert a.exit_code == 0 and b.exit_code == 0, (a.output, b.output)
    body_a = [x for x in a.stdout.splitlines() if not x.startswith("@PG")]
    body_b = [x for x in b.stdout.splitlines() if not x.startswith("@PG")]
    assert body_a == body_b
    r1 = body_a[2].split("\t")
    assert r1[:6] == ["r1", "0", "chr", "4", "255", "16="]
    assert "AS:i:32" in r1 and "NM:i:0" in r1


def test_sam_output(fasta):
    result = invoke("align", *fasta, "--format", "sam", "--device", "cpu")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "@HD\tVN:1.6\tSO:unsorted"
    assert lines[1:4] == ["@SQ\tSN:t1\tLN:33", "@SQ\tSN:t2\tLN:11", "@SQ\tSN:t3\tLN:4"]
    assert lines[4].startswith("@PG\tID:wavedp\tPN:wavedp\tVN:")
    assert "CL:wavedp align " in lines[4] and "--format sam" in lines[4]
    records = [line.split("\t") for line in lines[5:]]
    assert len(records) == 6
    assert records[0][:6] == ["p1", "0", "t1", "1", "255", "22="]
    assert all(len(r) >= 12 for r in records)


def test_blast6_output(fasta):
    result = invoke("align", *fasta, "--format", "blast6", "--device", "cpu")
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert len(rows) == 6 and all(len(r) == 12 for r in rows)
    assert rows[0] == ["p1", "t1", "100.000", "22", "0", "0", "1", "22", "1", "22", "NA", "NA"]
    p2t2 = rows[4]
    assert p2t2[:2] == ["p2", "t2"] and p2t2[6:10] == ["8", "16", "1", "9"]


def test_json_output_round_trips(fasta):
    result = invoke("align", *fasta, "--format", "json", "--device", "cpu")
    alns = [wavedp.Alignment(**row) for row in json_rows(result.stdout)]
    assert alns[0].cigar == "22=" and alns[0].score > 0


def test_pairwise_output(fasta):
    result = invoke("align", *fasta, "--device", "cpu")
    assert result.exit_code == 0, result.output
    assert result.stdout.count("# Query:  ") == 6
    assert "# Query range:  1-22" in result.stdout


def test_score_only(fasta):
    result = invoke("align", *fasta, "--score-only", "--format", "json", "--device", "cpu")
    rows = json_rows(result.stdout)
    assert all(r["cigar"] is None for r in rows)
    full = json_rows(invoke("align", *fasta, "--format", "json", "--device", "cpu").stdout)
    assert [(r["score"], r["query_end"], r["target_end"]) for r in rows] == [
        (r["score"], r["query_end"], r["target_end"]) for r in full]
    blast = invoke("align", *fasta, "--score-only", "--format", "blast6", "--device", "cpu")
    first = blast.stdout.splitlines()[0].split("\t")
    assert first[2:6] == ["NA"] * 4 and first[7] == "22" and first[9] == "22"
    sam = invoke("align", *fasta, "--score-only", "--format", "sam", "--device", "cpu")
    assert sam.stdout.splitlines()[5].split("\t")[1:6] == ["4", "*", "0", "255", "*"]
    text = invoke("align", *fasta, "--score-only", "--device", "cpu").stdout
    assert "# Query end:  22" in text and "CIGAR" not in text


def test_output_file(tmp_path: Path, fasta):
    out = tmp_path / "hits.tsv"
    result = invoke("align", *fasta, "--format", "blast6", "-o", out, "--device", "cpu")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert len(out.read_text().splitlines()) == 6
    assert sorted(os.listdir(tmp_path)) == ["hits.tsv", "q.fa", "t.fa"]
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # as an ordinary open() would make


def test_output_file_is_replaced_atomically(tmp_path: Path, fasta):
    out = write(tmp_path / "hits.json", "old content\n")
    assert invoke("align", *fasta, "--format", "json", "-o", out, "--device", "cpu"
                  ).exit_code == 0
    assert "old content" not in out.read_text()
    assert len(json_rows(out.read_text())) == 6


def test_dna_scoring_defaults(tmp_path: Path):
    q = write(tmp_path / "q.fa", ">q\nACGTACGTAAAACGTACGT\n")
    t = write(tmp_path / "t.fa", ">t\nACGTACGTACGTACGT\n")
    result = invoke("align", q, t, "--match", "2", "--mismatch", "-3", "--mode", "global",
                    "--format", "json", "--device", "cpu")
    row = json_rows(result.stdout)[0]
    # 16 matches, one 3-long gap: 32 - (5 + 2*2)
    assert row["score"] == 32 - 9 and row["cigar"] == "8=3I8="


def test_explicit_gap_penalties_and_other_matrix(fasta):
    a = json_rows(invoke("align", *fasta, "--format", "json", "--matrix", "PAM250",
                         "--gap-open", "12", "--gap-extend", "2", "--device", "cpu").stdout)
    assert a[0]["cigar"] == "22=" and a[0]["score"] > 0


def test_empty_sequences_are_valid(tmp_path: Path):
    q = write(tmp_path / "q.fa", ">empty\n>one\nACGT\n")
    t = write(tmp_path / "t.fa", ">t\nACGT\n>none\n")
    base = ["--match", "1", "--mismatch", "-1", "--format", "json", "--device", "cpu"]
    local = json_rows(invoke("align", q, t, *base).stdout)
    assert [(r["score"], r["cigar"]) for r in local] == [(0, ""), (0, ""), (4, "4="), (0, "")]
    glob = json_rows(invoke("align", q, t, *base, "--mode", "global").stdout)
    assert [(r["score"], r["cigar"]) for r in glob] == [
        (-(5 + 3 * 2), "4D"), (0, ""), (4, "4="), (-(5 + 3 * 2), "4I")]
    sam = invoke("align", q, t, "--match", "1", "--mismatch", "-1", "--format", "sam",
                 "--mode", "global", "--device", "cpu")
    assert sam.exit_code == 0, sam.output


def test_auto_device_is_announced_on_stderr(fasta):
    result = invoke("align", *fasta, "--format", "blast6")
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("wavedp: using ")
    assert all(len(line.split("\t")) == 12 for line in result.stdout.splitlines())


@pytest.mark.gpu
def test_gpu_device_gives_the_cpu_answer(fasta):
    cpu = invoke("align", *fasta, "--format", "json", "--device", "cpu")
    gpu = invoke("align", *fasta, "--format", "json", "--device", "gpu")
    assert gpu.exit_code == 0, gpu.output
    assert gpu.stdout == cpu.stdout


# ---- help, info --------------------------------------------------------------------------

def test_align_help_documents_defaults_and_conventions():
    result = invoke("align", "--help")
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    assert "BLOSUM62" in text and "--gap-open 11 --gap-extend 1" in text
    assert "--gap-open 5 --gap-extend 2" in text
    assert "gap-open + (k-1)*gap-extend" in text
    assert "-gapopen 11 -gapextend 1 equals --gap-open 12 --gap-extend 1" in text
    assert "evalue and bitscore print NA" in text


def test_version():
    result = invoke("--version")
    assert result.exit_code == 0 and wavedp.__version__ in result.stdout


def test_info():
    result = invoke("info")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith(f"wavedp {wavedp.__version__}\n")
    assert "\nnumba: " in out and "threads" in out
    assert "\ncupy: " in out and "\ngpu: " in out and "\ndevice auto: " in out
    if not gpu_status()[0]:
        assert gpu_status()[1] in out
