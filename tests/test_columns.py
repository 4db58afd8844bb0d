"""wavedp.columns: every field as blastp/blastn 2.12 print it (on the pairs BLAST aligns the
same way as wavedp), the default columns as blast6, BTOP and CIGAR against the aligned rows,
and parse_columns' errors."""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import DNA, MODE_NAMES, PROTEIN, random_seq, related, write_fasta
from hypothesis import given, settings
from hypothesis import strategies as st

import wavedp
from wavedp import Alignment, InputError
from wavedp.cli import cli
from wavedp.columns import (
    DEFAULT,
    FIELDS,
    HEADERS,
    STD,
    header_line,
    parse_columns,
    percent_match,
    render,
    values,
)
from wavedp.dbsearch.strands import reverse_complement
from wavedp.seqio import read_records

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
#: BLOSUM62 with BLAST's -gapopen 10 -gapextend 1
PROT = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
#: blastn -reward 2 -penalty -3 -gapopen 5 -gapextend 2 (a gap of k costs 5 + 2k)
DNA_SCORING = wavedp.Scoring(match=2, mismatch=-3, gap_open=7, gap_extend=2)
#: every field BLAST has (cigar is wavedp's own; the titles, N/A for BLAST's -subject, are
#: compared on a BLAST database below)
BLAST_FIELDS = tuple(name for name in FIELDS if name not in ("cigar", "stitle", "salltitles"))
PROTEIN_ARGS = ("blastp", "-comp_based_stats", "0", "-seg", "no", "-gapopen", "10",
                "-gapextend", "1")
DNA_ARGS = ("blastn", "-task", "blastn", "-reward", "2", "-penalty", "-3", "-gapopen", "5",
            "-gapextend", "2", "-dust", "no")
#: the fields that do not depend on which optimal alignment is chosen, and the ranges
PATH_FREE = ("qseqid", "qaccver", "sseqid", "saccver", "evalue", "bitscore", "score", "qlen",
             "slen", "sstrand")
RANGES = ("qstart", "qend", "sstart", "send")
needs_blastp = pytest.mark.skipif(shutil.which("blastp") is None,
                                  reason="blastp (ncbi-blast+) absent")
needs_blastn = pytest.mark.skipif(shutil.which("blastn") is None,
                                  reason="blastn (ncbi-blast+) absent")


def _blast(args: tuple[str, ...], query: tuple[str, str], library: Path, n: int,
           tmp: Path, fields: tuple[str, ...] = BLAST_FIELDS) -> dict[str, list[str]]:
    """BLAST's best HSP per subject of one query (search space m*n): subject id -> fields."""
    qf = write_fasta(tmp / "query.fa", [query])
    out = subprocess.run([*args, "-query", str(qf), "-subject", str(library), "-searchsp",
                          str(len(query[1]) * n), "-evalue", "1000", "-max_hsps", "1",
                          "-outfmt", "6 " + " ".join(fields)],
                         capture_output=True, text=True, check=True).stdout
    found: dict[str, list[str]] = {}
    for line in out.splitlines():
        row = line.split("\t")
        found.setdefault(row[fields.index("sseqid")], row)
    return found


def _compare(args: tuple[str, ...], queries: list[tuple[str, str]],
             library: list[tuple[str, str]], scoring: wavedp.Scoring, tmp: Path
             ) -> tuple[int, int]:
    """Each pair BLAST reports with wavedp's score (and strand) prints BLAST's ids, lengths,
    score, E-value and bit score; where the two align it over the same ranges also BLAST's
    coordinates and coverage, and where they align it the same way (the same rows) every
    field: (pairs with every field compared, pairs with BLAST's score)."""
    lib = write_fasta(tmp / "library.fa", library)
    n = sum(len(s) for _, s in library)
    hits = wavedp.search(str(write_fasta(tmp / "queries.fa", queries)), str(lib), scoring, top=0,
                         evalue=None, device="cpu", stats="blast")
    same_score = compared = 0
    for (qid, text), found in zip(queries, hits, strict=True):
        ours: dict[str, list[Alignment]] = {}
        for h in found:
            ours.setdefault(h.target_id, []).append(h)
        for sid, row in _blast(args, (qid, text), lib, n, tmp).items():
            want = dict(zip(BLAST_FIELDS, row, strict=True))
            for h in ours.get(sid, []):
                got = dict(zip(BLAST_FIELDS, render(h, BLAST_FIELDS, scoring).split("\t"),
                               strict=True))
                if got["score"] != want["score"] or got["sstrand"] != want["sstrand"]:
                    continue  # BLAST's heuristic found another score: not comparable
                same_score += 1
                fields = PATH_FREE
                if all(got[f] == want[f] for f in RANGES):
                    fields += RANGES + ("qcovhsp", "qcovs")
                    if got["qseq"] == want["qseq"] and got["sseq"] == want["sseq"]:
                        fields = BLAST_FIELDS  # an equally good alignment may differ
                        compared += 1
                assert {f: got[f] for f in fields} == {f: want[f] for f in fields}, (qid, sid)
    return compared, same_score


# ---- every field against BLAST ------------------------------------------------------------

@needs_blastp
def test_every_field_equals_blastp_on_the_readme_examples(tmp_path):
    queries = read_records(EXAMPLES / "query.fa")
    library = read_records(EXAMPLES / "target.fa")
    compared, same = _compare(PROTEIN_ARGS, queries, library, PROT, tmp_path)
    assert compared >= 3 and compared >= same // 2


@needs_blastp
def test_every_field_equals_blastp_on_random_and_related_proteins(tmp_path):
    rng = np.random.default_rng(5)
    queries = [(f"q{k}", random_seq(rng, PROTEIN, int(rng.integers(80, 260))))
               for k in range(6)]
    library = []
    for _, text in queries:
        for rate in (0.05, 0.15, 0.3):
            flank = random_seq(rng, PROTEIN, int(rng.integers(0, 40)))
            library.append(flank + related(rng, text, PROTEIN, rate)
                           + random_seq(rng, PROTEIN, int(rng.integers(0, 40))))
        library.append(random_seq(rng, PROTEIN, int(rng.integers(50, 300))))
    # query coverages of 99.5% (BLAST prints 99), 50.5% (51) and 100%
    long = random_seq(rng, PROTEIN, 200)
    queries.append(("long", long))
    library += [long[1:], long[:101], long]
    library = [(f"s{k}", text) for k, text in enumerate(library)]
    compared, same = _compare(PROTEIN_ARGS, queries, library, PROT, tmp_path)
    assert compared >= 15 and compared >= same // 2


@needs_blastn
def test_every_field_equals_blastn_on_both_strands(tmp_path):
    rng = np.random.default_rng(8)
    queries = [(f"q{k}", random_seq(rng, DNA, int(rng.integers(150, 320)))) for k in range(5)]
    library = []
    for _, text in queries:
        for rate, minus, indels in ((0.04, False, True), (0.08, True, True),
                                    (0.12, False, False), (0.1, True, False)):
            copy = related(rng, text, DNA, rate) if indels else _substituted(rng, text, rate)
            if minus:
                copy = reverse_complement(copy, np.zeros(0, np.uint8))[0]
            library.append(random_seq(rng, DNA, int(rng.integers(0, 60))) + copy
                           + random_seq(rng, DNA, int(rng.integers(0, 60))))
    library = [(f"s{k}", text) for k, text in enumerate(library)]
    compared, same = _compare(DNA_ARGS, queries, library, DNA_SCORING, tmp_path)
    assert compared >= 10 and same >= 18


def _substituted(rng: np.random.Generator, text: str, rate: float) -> str:
    """``text`` with a share ``rate`` of its letters replaced by another base."""
    out = list(text)
    for k in np.flatnonzero(rng.random(len(text)) < rate).tolist():
        out[k] = str(rng.choice([b for b in DNA if b != text[k]]))
    return "".join(out)


@needs_blastp
def test_header_line_equals_blastp_outfmt_7(tmp_path):
    q = write_fasta(tmp_path / "q.fa", [("q", "MKVLAAGICWTERHHKLMNPQ")])
    for fields in (BLAST_FIELDS, STD, DEFAULT, ()):
        out = subprocess.run([*PROTEIN_ARGS, "-query", str(q), "-subject", str(q), "-outfmt",
                              " ".join(("7", *fields))], capture_output=True, text=True,
                             check=True).stdout
        line = next(x for x in out.splitlines() if x.startswith("# Fields:"))
        assert header_line(fields or parse_columns("std")) == line  # no fields: BLAST's std
    assert header_line(["cigar", "qseqid"]) == "# Fields: CIGAR, query id"


@needs_blastp
def test_the_readmes_blastp_line_prints_the_same_first_two_lines():
    """README: with --stats blast the first two lines are blastp's, given its command."""
    readme = (EXAMPLES.parent / "README.md").read_text()
    found = re.search(r"`(blastp -gapopen[^`]*)`", readme.replace("\n", " "))
    assert found, "the README names a blastp command"
    query, target = str(EXAMPLES / "query.fa"), str(EXAMPLES / "target.fa")
    blast = subprocess.run([*found[1].split(), "-query", query, "-subject", target,
                            "-outfmt", "6"], capture_output=True, text=True, check=True)
    ours = CliRunner().invoke(cli, ["search", query, target, "--device", "cpu", "--stats",
                                    "blast"])
    assert ours.stdout.splitlines()[:2] == blast.stdout.splitlines()[:2]


@needs_blastp
def test_titles_equal_blastps_of_a_database_with_parsed_ids(tmp_path):
    """stitle and salltitles: the subject's header line after its id, as blastp prints them
    for a database made with -parse_seqids; from a .wdb and from a FASTA file alike."""
    target = tmp_path / "t.fa"
    target.write_text((EXAMPLES / "target.fa").read_text().replace(
        ">wdp_t2 ", ">wdp_t2   spaced  "))  # spaces kept as BLAST keeps them
    subprocess.run(["makeblastdb", "-in", str(target), "-dbtype", "prot", "-parse_seqids",
                    "-out", str(tmp_path / "blast")], check=True, capture_output=True)
    fields = "qseqid sseqid stitle salltitles"
    blast = subprocess.run([*PROTEIN_ARGS, "-query", str(EXAMPLES / "query.fa"), "-db",
                            str(tmp_path / "blast"), "-evalue", "1e-10", "-outfmt",
                            f"6 {fields}"], capture_output=True, text=True, check=True).stdout
    wavedp.Database.build(target, tmp_path / "t.wdb", progress=False)
    for db in (tmp_path / "t.wdb", target):
        ours = CliRunner().invoke(cli, ["search", str(EXAMPLES / "query.fa"), str(db),
                                        "--device", "cpu", "--stats", "blast", "--evalue",
                                        "1e-10", "--columns", fields])
        assert ours.exit_code == 0, ours.output
        assert ours.stdout == blast and "spaced" in blast


@needs_blastp
def test_header_blocks_equal_blastp_outfmt_7(tmp_path):
    """``search --header`` writes blastp's -outfmt 7 comment lines for the same hits: each
    query's title, the fields, the number of hits (none: no fields line), the queries
    processed; the program and the database are wavedp's and the file given."""
    queries = tmp_path / "q.fa"
    queries.write_text((EXAMPLES / "query.fa").read_text()
                       + ">none a query without hits\nWWWWWWWWWWWWWWWWWW\n")
    target = EXAMPLES / "target.fa"
    ours = CliRunner().invoke(cli, ["search", str(queries), str(target), "--device", "cpu",
                                    "--stats", "blast", "--evalue", "1e-10", "--header",
                                    "--columns", "qseqid sseqid evalue"])
    assert ours.exit_code == 0, ours.output
    blast = subprocess.run([*PROTEIN_ARGS, "-query", str(queries), "-subject", str(target),
                            "-evalue", "1e-10", "-outfmt", "7 qseqid sseqid evalue"],
                           capture_output=True, text=True, check=True).stdout
    got, want = ours.stdout.splitlines(), blast.splitlines()
    assert len(got) == len(want) and "# 0 hits found" in got
    for g, w in zip(got, want, strict=True):
        if w.startswith("# BLASTP"):
            assert g == f"# wavedp {wavedp.__version__}"
        elif w.startswith("# Database:"):
            assert g == f"# Database: {target}"
        elif w.startswith("# BLAST processed"):
            assert g == w.replace("BLAST", "wavedp")
        elif w.startswith("#"):
            assert g == w
        else:  # the same hits (E-values apart: blastp's heuristic)
            assert g.split("\t")[:2] == w.split("\t")[:2]


def test_every_field_has_a_meaning_and_a_header():
    assert set(FIELDS) == set(HEADERS)
    assert all(isinstance(FIELDS[name], str) and "\n" not in FIELDS[name] for name in FIELDS)
    assert DEFAULT == ("qseqid", "sseqid", "pident", "length", "mismatch", "gapopen",
                       "qstart", "qend", "sstart", "send", "evalue", "bitscore")


# ---- the default columns are blast6 --------------------------------------------------------

def _some_alignments() -> list[Alignment]:
    rng = np.random.default_rng(3)
    out = []
    for letters, scoring in ((PROTEIN, PROT), (DNA, DNA_SCORING)):
        texts = [random_seq(rng, letters, int(n)) for n in rng.integers(0, 60, 8)]
        texts.append(related(rng, texts[1], letters, 0.2))
        for mode in MODE_NAMES:
            for traceback in (True, False):
                out += wavedp.align_all(texts[:5], texts[4:], scoring, mode=mode,
                                        traceback=traceback, device="cpu")
    query = random_seq(rng, DNA, 120)
    library = [reverse_complement(related(rng, query, DNA, 0.1), np.zeros(0, np.uint8))[0],
               related(rng, query, DNA, 0.1), random_seq(rng, DNA, 90), ""]
    for traceback in (True, False):
        for hits in wavedp.search([query, ""], library, DNA_SCORING, top=0, evalue=None,
                                  traceback=traceback, device="cpu", stats="blast"):
            out += hits
    out += wavedp.search([texts[1]], [texts[-1], texts[2]], PROT, top=0, evalue=None,
                         device="cpu", stats="blast")[0]
    return out


@pytest.mark.filterwarnings("ignore::wavedp.errors.EmptyWarning")
def test_default_columns_are_blast6_byte_for_byte():
    alns = _some_alignments()
    assert any(a.strand == "-" for a in alns) and any(a.cigar is None for a in alns)
    assert any(a.cigar == "" for a in alns) and any(a.evalue is not None for a in alns)
    for aln in alns:
        assert render(aln) == aln.format("blast6")
        assert render(aln, STD) == aln.format("blast6")


def test_score_only_and_empty_alignments_print_na():
    score_only = Alignment(score=9, query_start=None, query_end=8, target_start=None,
                           target_end=6, cigar=None, query_id="q1", target_id="t1",
                           query_length=9, target_length=8, query="GGACGTTAC",
                           target="CACGAACT")
    row = dict(zip(FIELDS, render(score_only, tuple(FIELDS), DNA_SCORING).split("\t"),
                   strict=True))
    known = {"qseqid": "q1", "qaccver": "q1", "sseqid": "t1", "saccver": "t1", "qend": "8",
             "send": "6", "score": "9", "qlen": "9", "slen": "8", "sstrand": "plus"}
    assert row == {name: known.get(name, "NA") for name in FIELDS}
    empty = Alignment(score=0, query_start=0, query_end=0, target_start=0, target_end=0,
                      cigar="", query_id="q", target_id="t", query_length=3, target_length=3,
                      query="AAA", target="CCC")
    row = dict(zip(FIELDS, render(empty, tuple(FIELDS), DNA_SCORING).split("\t"),
                   strict=True))
    assert [row[f] for f in ("length", "nident", "mismatch", "gapopen", "gaps", "positive",
                             "qcovhsp")] == ["0"] * 7
    assert all(row[f] == "NA" for f in ("pident", "ppos", "qstart", "qend", "sstart", "send",
                                        "evalue", "bitscore", "cigar", "btop", "qseq", "sseq"))
    assert values(empty, ["cigar", "btop", "qseq", "qstart"]) == ["", "", "", None]


def test_typed_values():
    aln = wavedp.align("MKVLAAGICW", "MKVLSAGCW", PROT, device="cpu")
    got = values(aln, ["score", "pident", "length", "qseq", "sstrand", "positive", "ppos"],
                 PROT)
    assert got[0] == aln.score and isinstance(got[1], float) and got[2] == 10
    assert got[3:5] == ["MKVLAAGICW", "N/A"]
    assert isinstance(got[5], int) and got[6] == pytest.approx(100 * got[5] / 10)


# ---- CIGAR and BTOP against the rows -------------------------------------------------------

def _rows_from_btop(text: str, query: str, start: int) -> tuple[str, str]:
    """The aligned rows a BTOP states, identities read from ``query`` at ``start``."""
    qrow, trow, i = [], [], start
    for number, pair in re.findall(r"(\d+)|(..)", text):
        if number:
            qrow.append(query[i:i + int(number)])
            trow.append(query[i:i + int(number)])
            i += int(number)
        else:
            qrow.append(pair[0])
            trow.append(pair[1])
            i += pair[0] != "-"
    return "".join(qrow), "".join(trow)


def _rows_from_cigar(cigar: str, query: str, target: str, i: int, j: int) -> tuple[str, str]:
    qrow, trow = [], []
    for n, op in re.findall(r"(\d+)([=XID])", cigar):
        n = int(n)
        qrow.append(query[i:i + n] if op != "D" else "-" * n)
        trow.append(target[j:j + n] if op != "I" else "-" * n)
        i += n if op != "D" else 0
        j += n if op != "I" else 0
    return "".join(qrow), "".join(trow)


def _complement(row: str) -> str:
    return row.translate(str.maketrans("ACGTN", "TGCAN"))[::-1]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(MODE_NAMES), st.booleans(), st.integers(0, 2**32 - 1))
def test_cigar_and_btop_reproduce_the_rows(mode, dna, seed):
    rng = np.random.default_rng(seed)
    letters, scoring = (DNA, DNA_SCORING) if dna else (PROTEIN, PROT)
    a = random_seq(rng, letters, int(rng.integers(0, 40)))
    b = related(rng, a, letters, 0.3) + random_seq(rng, letters, int(rng.integers(0, 10)))
    aln = wavedp.align(a, b, scoring, mode=mode, device="cpu")
    rows = aln.rows()
    cigar, bt, qseq, sseq = values(aln, ["cigar", "btop", "qseq", "sseq"])
    assert cigar == aln.cigar and (qseq, sseq) == rows
    assert _rows_from_cigar(cigar, a, b, aln.query_start, aln.target_start) == rows
    assert _rows_from_btop(bt, a, aln.query_start) == rows
    tokens = re.findall(r"\d+|\D\D", bt)  # a run of identities is one positive number
    assert "".join(tokens) == bt and "0" not in tokens
    assert not any(a.isdigit() and b.isdigit() for a, b in itertools.pairwise(tokens))


def test_minus_strand_btop_and_rows_are_blasts_orientation():
    rng = np.random.default_rng(11)
    query = random_seq(rng, DNA, 90)
    subject = reverse_complement(related(rng, query, DNA, 0.15), np.zeros(0, np.uint8))[0]
    hit = wavedp.search([query], [subject], DNA_SCORING, top=1, strand="minus",
                        device="cpu", stats="blast")[0][0]
    qrow, trow = hit.rows()
    qseq, sseq, bt, qstart, qend, sstart, send = values(
        hit, ["qseq", "sseq", "btop", "qstart", "qend", "sstart", "send"])
    assert (qseq, sseq) == (_complement(qrow), _complement(trow))
    assert qseq.replace("-", "") == query[qstart - 1:qend]  # the query's plus strand
    assert sseq.replace("-", "") == _complement(subject[send - 1:sstart])
    assert _rows_from_btop(bt, query, qstart - 1) == (qseq, sseq)


def test_btop_of_a_known_alignment():
    aln = Alignment(score=9, query_start=2, query_end=8, target_start=1, target_end=6,
                    cigar="3=1I1X1=", query="GGACGTTAC", target="CACGAACT", query_length=9,
                    target_length=8)
    assert values(aln, ["btop"]) == ["3T-TA1"]
    assert values(Alignment(score=3, query_start=0, query_end=2, target_start=0, target_end=3,
                            cigar="1=1D1=", query="AC", target="AGC"), ["btop"]) == ["1-G1"]
    assert values(Alignment(score=3, query_start=None, query_end=2, target_start=None,
                            target_end=2, cigar=None), ["btop"]) == [None]


def test_percent_match_is_blasts_rounding():
    assert [percent_match(p, 200) for p in (200, 199, 197, 101, 99, 1, 0)] == [
        100, 99, 99, 51, 50, 1, 0]
    assert percent_match(109, 110) == 99 and percent_match(26, 320) == 8


# ---- parse_columns --------------------------------------------------------------------------

def test_parse_columns_keeps_order_and_expands_std():
    assert parse_columns("qseqid sseqid score") == ("qseqid", "sseqid", "score")
    assert parse_columns("score, qlen,slen  btop") == ("score", "qlen", "slen", "btop")
    assert parse_columns("std qlen") == STD + ("qlen",)
    assert parse_columns(" score score qlen score ") == ("score", "qlen")


@pytest.mark.parametrize("text", ["qseqid bogus", "", " , ", "Score"])
def test_parse_columns_errors_list_the_valid_names(text):
    with pytest.raises(InputError) as info:
        parse_columns(text)
    message = str(info.value)
    assert "qseqid" in message and "btop" in message and "cigar" in message
    if text.strip(" ,"):
        assert repr(text.split()[-1]) in message


def test_parse_columns_needs_a_string():
    with pytest.raises(InputError, match="string"):
        parse_columns(["qseqid"])  # type: ignore[arg-type]


def test_positive_needs_the_scoring_and_unknown_columns_are_errors():
    aln = wavedp.align("MKV", "MKV", PROT, device="cpu")
    with pytest.raises(InputError, match="Scoring"):
        render(aln, ["positive"])
    with pytest.raises(InputError, match="bogus"):
        render(aln, ["qseqid", "bogus"])
    with pytest.raises(InputError, match="bogus"):
        header_line(["bogus"])
    assert render(aln, ["positive", "ppos"], PROT) == "3\t100.00"


def _halves_apart(tmp_path: Path) -> tuple[Path, Path]:
    """A query ``q`` whose two halves lie apart in subject ``s``, and a subject ``t`` holding
    half of its second half: the query's and the library's FASTA files."""
    rng = np.random.default_rng(11)
    first, second = random_seq(rng, PROTEIN, 70), random_seq(rng, PROTEIN, 60)
    query = [("q", first + second)]
    library = [("s", first + random_seq(rng, PROTEIN, 500) + second),
               ("t", random_seq(rng, PROTEIN, 40) + second[:30] + random_seq(rng, PROTEIN, 40))]
    return write_fasta(tmp_path / "q.fa", query), write_fasta(tmp_path / "lib.fa", library)


@needs_blastp
def test_qcovs_covers_every_hsp_of_the_subject_as_blastp(tmp_path):
    """A query whose two halves lie apart in one subject: with --fraction wavedp reports
    both alignments, and qcovs counts the query positions they cover together, as blastp
    prints it beside each of its two HSPs."""
    qf, lib = _halves_apart(tmp_path)
    got = CliRunner().invoke(cli, ["search", str(qf), str(lib), "--device", "cpu",
                                   "--fraction", "0.2", "--top", "0", "--evalue", "0.001",
                                   "--stats", "blast", "--gap-open", "11", "--gap-extend", "1",
                                   "--columns", "qseqid sseqid qstart qend qcovhsp qcovs"])
    assert got.exit_code == 0, got.output
    ours = sorted(tuple(line.split("\t")) for line in got.stdout.splitlines())
    out = subprocess.run([*PROTEIN_ARGS, "-query", str(qf), "-subject", str(lib), "-evalue",
                          "0.001", "-outfmt", "6 qseqid sseqid qstart qend qcovhsp qcovs"],
                         capture_output=True, text=True, check=True).stdout
    theirs = sorted(tuple(line.split("\t")) for line in out.splitlines())
    s_rows = [r for r in ours if r[1] == "s"]
    assert len(s_rows) >= 2 and {r[5] for r in s_rows} == {"100"}
    assert [r for r in ours if r[1] == "s"] == [r for r in theirs if r[1] == "s"]


@needs_blastp
@pytest.mark.parametrize("most", [1, 2, 3])
def test_max_hsps_gives_blastps_hsps_of_each_subject(tmp_path, most):
    """A query whose two halves lie apart in one subject: ``--max-hsps N`` reports at most N
    non-intersecting alignments a subject, each passing the E-value cutoff, the same rows as
    ``blastp -max_hsps N`` (one, then both halves)."""
    qf, lib = _halves_apart(tmp_path)
    ours, theirs = _max_hsps_rows(qf, lib, most, ["--gap-open", "11", "--gap-extend", "1"],
                                  PROTEIN_ARGS)
    assert len([r for r in ours if r[1] == "s"]) == min(most, 2)
    assert ours == theirs


def _max_hsps_rows(qf: Path, lib: Path, most: int, scoring: list[str], blast: tuple
                   ) -> tuple[list[tuple], list[tuple]]:
    """The rows (ranges, bit scores) of ``wavedp search --max-hsps most`` (``scoring``'s
    options) and of the BLAST program's ``-max_hsps most`` (``blast``: its command), each
    at E-value 0.001, sorted (E-values are not compared: ``-subject`` has its own)."""
    fields = "qseqid sseqid qstart qend sstart send bitscore"
    got = CliRunner().invoke(cli, ["search", str(qf), str(lib), "--device", "cpu",
                                   "--max-hsps", str(most), "--top", "0", "--evalue", "0.001",
                                   "--stats", "blast", *scoring, "--columns", fields])
    assert got.exit_code == 0, got.output
    out = subprocess.run([*blast, "-query", str(qf), "-subject", str(lib), "-evalue", "0.001",
                          "-max_hsps", str(most), "-outfmt", f"6 {fields}"],
                         capture_output=True, text=True, check=True).stdout
    return (sorted(tuple(line.split("\t")) for line in got.stdout.splitlines()),
            sorted(tuple(line.split("\t")) for line in out.splitlines()))


def test_max_hsps_is_checked():
    with pytest.raises(InputError, match="max_hsps must be a positive integer"):
        wavedp.search(["MKV"], ["MKV"], PROT, max_hsps=0, device="cpu")
    with pytest.raises(InputError, match="max_hsps applies to local mode only"):
        wavedp.search(["MKV"], ["MKV"], PROT, max_hsps=2, mode="global", device="cpu")
    with pytest.raises(InputError, match="max_hsps needs each hit's alignment"):
        wavedp.search(["MKV"], ["MKV"], PROT, max_hsps=2, traceback=False, device="cpu")


@needs_blastn
@pytest.mark.parametrize("most", [1, 2, 3])
def test_max_hsps_counts_both_strands_as_blastn(tmp_path, most):
    """A gene copied into a genome twice on the plus strand and once on the minus strand:
    ``--max-hsps N`` keeps a subject's best N alignments over both strands, the rows of
    ``blastn -max_hsps N``."""
    rng = np.random.default_rng(21)
    gene = random_seq(rng, DNA, 240)
    minus = reverse_complement(_substituted(rng, gene, 0.05), np.zeros(0, np.uint8))[0]
    genome = "".join([random_seq(rng, DNA, 300), _substituted(rng, gene, 0.02),
                      random_seq(rng, DNA, 500), minus, random_seq(rng, DNA, 400),
                      _substituted(rng, gene, 0.08), random_seq(rng, DNA, 300)])
    qf = write_fasta(tmp_path / "q.fa", [("gene", gene)])
    lib = write_fasta(tmp_path / "genome.fa", [("chr", genome)])
    ours, theirs = _max_hsps_rows(qf, lib, most, ["--match", "2", "--mismatch", "-3",
                                                  "--gap-open", "7", "--gap-extend", "2"],
                                  DNA_ARGS)
    assert len(ours) == most and ours == theirs
