"""Output formats on hand-built Alignment objects with known answers."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wavedp import Alignment, InputError
from wavedp.formats import FORMATS, WRAP, format_alignment, sam_header

# query  GG ACGTTA C      query[2:8]  = ACGTTA
# target C  ACG-AA CT     target[1:6] = ACGAA
GAPPED = Alignment(
    score=9, query_start=2, query_end=8, target_start=1, target_end=6, cigar="3=1I1X1=",
    query_id="q1", target_id="t1", mode="local", query_length=9, target_length=8,
    query="GGACGTTAC", target="CACGAACT",
)
SCORE_ONLY = Alignment(
    score=9, query_start=None, query_end=8, target_start=None, target_end=6, cigar=None,
    query_id="q1", target_id="t1", mode="local", query_length=9, target_length=8,
    query="GGACGTTAC", target="CACGAACT",
)
EMPTY = Alignment(
    score=0, query_start=0, query_end=0, target_start=0, target_end=0, cigar="",
    query_id="q1", target_id="t2", mode="local", query_length=3, target_length=3,
    query="AAA", target="CCC",
)


def _fields(line: str) -> list[str]:
    assert "\n" not in line
    return line.split("\t")


# ---- rows and counts -----------------------------------------------------------------------

def test_rows_and_counts():
    assert GAPPED.rows() == ("ACGTTA", "ACG-AA")
    assert GAPPED.counts() == {"=": 4, "X": 1, "I": 1, "D": 0, "gapopen": 1, "length": 6}


def test_rows_need_traceback():
    with pytest.raises(ValueError):
        SCORE_ONLY.rows()


# ---- blast6 --------------------------------------------------------------------------------

def test_blast6_columns_one_based_and_pident():
    assert _fields(GAPPED.format("blast6")) == [
        "q1", "t1", "66.667", "6", "1", "1", "3", "8", "2", "6", "NA", "NA"]


def test_blast6_pident_three_decimals_like_blast():
    aln = Alignment(score=1, query_start=0, query_end=3, target_start=0, target_end=3,
                    cigar="1=2X", query="ACG", target="ATT", query_length=3, target_length=3)
    assert _fields(aln.format("blast6"))[2] == "33.333"


def test_blast6_counts_gap_openings_per_run():
    aln = Alignment(score=1, query_start=0, query_end=5, target_start=0, target_end=6,
                    cigar="2=2D1=1I1D1=", query="ACGTA", target="ACTTGAC",
                    query_length=5, target_length=7)
    f = _fields(aln.format("blast6"))
    assert f[3:6] == ["8", "0", "3"]  # length, mismatch, gapopen


def test_blast6_score_only_prints_na_where_traceback_is_needed():
    assert _fields(SCORE_ONLY.format("blast6")) == [
        "q1", "t1", "NA", "NA", "NA", "NA", "NA", "8", "NA", "6", "NA", "NA"]


def test_blast6_score_only_global_knows_its_starts():
    aln = dataclasses.replace(SCORE_ONLY, mode="global", query_start=0, target_start=0,
                              query_end=9, target_end=8)
    assert _fields(aln.format("blast6"))[6:10] == ["1", "9", "1", "8"]


def test_blast6_empty_alignment():
    assert _fields(EMPTY.format("blast6")) == [
        "q1", "t2", "NA", "0", "0", "0", "NA", "NA", "NA", "NA", "NA", "NA"]


# ---- sam -----------------------------------------------------------------------------------

def test_sam_soft_clips_pos_and_nm():
    f = _fields(GAPPED.format("sam"))
    assert f[:11] == ["q1", "0", "t1", "2", "255", "2S3=1I1X1=1S", "*", "0", "0",
                      "GGACGTTAC", "*"]
    assert f[11:] == ["AS:i:9", "NM:i:2"]


def test_sam_nm_counts_every_edited_base():
    aln = Alignment(score=0, query_start=0, query_end=5, target_start=3, target_end=7,
                    cigar="2=1D1X2I", query="ACGTT", target="GGGACTG", query_length=5,
                    target_length=7, query_id="r", target_id="chr")
    f = _fields(aln.format("sam"))
    assert f[3] == "4" and f[5] == "2=1D1X2I"
    assert "NM:i:4" in f


def test_sam_uppercases_seq_and_clips_both_ends():
    aln = Alignment(score=4, query_start=1, query_end=3, target_start=0, target_end=2,
                    cigar="2=", query="acgtt", target="cg", query_length=5, target_length=2)
    f = _fields(aln.format("sam"))
    assert f[5] == "1S2=2S" and f[9] == "ACGTT"


def test_sam_global_leading_deletion_keeps_pos_one():
    aln = Alignment(score=1, query_start=0, query_end=4, target_start=0, target_end=6,
                    cigar="2D4=", query="ACGT", target="TTACGT", mode="global",
                    query_length=4, target_length=6)
    f = _fields(aln.format("sam"))
    assert f[1:6] == ["0", "target", "1", "255", "2D4="]


@pytest.mark.parametrize("aln", [SCORE_ONLY, EMPTY], ids=["score-only", "empty"])
def test_sam_unaligned(aln):
    f = _fields(aln.format("sam"))
    assert f[1:9] == ["4", "*", "0", "255", "*", "*", "0", "0"]
    assert f[9] == aln.query.upper() and f[10] == "*"
    assert f[11:] == [f"AS:i:{aln.score}"]


def test_sam_all_insertion_is_unplaced():
    aln = Alignment(score=-6, query_start=0, query_end=2, target_start=0, target_end=0,
                    cigar="2I", query="AC", target="", mode="global", query_length=2)
    f = _fields(aln.format("sam"))
    assert f[1] == "4" and f[3] == "0" and f[5] == "*"


def test_sam_empty_query_seq_is_star():
    aln = Alignment(score=0, query_start=0, query_end=0, target_start=0, target_end=0,
                    cigar="", query="", target="AC", target_length=2)
    assert _fields(aln.format("sam"))[9] == "*"


def test_sam_header():
    header = sam_header([("chr1", 100), ("chr2", 7)], command_line="wavedp align\ta b",
                        version="1.2.3")
    assert header.split("\n") == [
        "@HD\tVN:1.6\tSO:unsorted",
        "@SQ\tSN:chr1\tLN:100",
        "@SQ\tSN:chr2\tLN:7",
        "@PG\tID:wavedp\tPN:wavedp\tVN:1.2.3\tCL:wavedp align a b",
    ]


def test_sam_header_default_version():
    import wavedp

    last = sam_header([("t", 1)]).split("\n")[-1]
    assert last == f"@PG\tID:wavedp\tPN:wavedp\tVN:{wavedp.__version__}"


# ---- json ----------------------------------------------------------------------------------

@pytest.mark.parametrize("aln", [GAPPED, SCORE_ONLY, EMPTY], ids=["gapped", "score", "empty"])
def test_json_round_trip(aln):
    text = aln.format("json")
    assert "\n" not in text
    obj = json.loads(text)
    assert set(obj) == {"score", "query_start", "query_end", "target_start", "target_end",
                        "cigar", "query_id", "target_id", "mode", "query_length",
                        "target_length"}
    assert Alignment(**obj) == aln


def test_json_leaves_out_sequences():
    assert "GGACGTTAC" not in GAPPED.format("json")


# ---- pairwise ------------------------------------------------------------------------------

def test_pairwise_header_and_rows():
    text = GAPPED.format("pairwise")
    assert "# Query:  q1 (length 9)" in text
    assert "# Target: t1 (length 8)" in text
    assert "# Mode:   local" in text
    assert "# Score:  9" in text
    assert "# Query range:  3-8" in text
    assert "# Target range: 2-6" in text
    assert "# CIGAR:  3=1I1X1=" in text
    assert "# Identity:   4/6 (66.7%)" in text
    assert "# Gaps:       1/6 (16.7%) in 1 gap(s)" in text
    rows = text.split("\n")[-3:]
    assert rows == ["q1 3 ACGTTA 8",
                    "     ||| .|",
                    "t1 2 ACG-AA 6"]


def test_pairwise_middle_line_aligns_with_rows():
    q, m, t = GAPPED.format("pairwise").split("\n")[-3:]
    start = q.index("ACGTTA")
    assert t.index("ACG-AA") == start
    assert m[start:] == "||| .|"


def test_pairwise_wraps_at_60_columns_with_coordinates():
    query = "ACDEFGHIKL" * 13  # 130
    target = query[:70] + "WWWWW" + query[70:]  # 135
    aln = Alignment(score=1, query_start=0, query_end=130, target_start=0, target_end=135,
                    cigar="70=5D60=", query=query, target=target, query_id="qq",
                    target_id="tt", mode="global", query_length=130, target_length=135)
    body = aln.format("pairwise").split("\n\n", 1)[1].split("\n")
    qlines, mlines, tlines = body[0::4], body[1::4], body[2::4]
    assert len(qlines) == 3
    assert [line.split()[1] for line in qlines] == ["1", "61", "116"]
    assert [line.split()[-1] for line in qlines] == ["60", "115", "130"]
    assert [line.split()[1] for line in tlines] == ["1", "61", "121"]
    assert [line.split()[-1] for line in tlines] == ["60", "120", "135"]
    assert all(len(line.split()[2]) == WRAP for line in qlines[:2])
    assert mlines[1].strip(" |") == "" and " " * 5 in mlines[1].strip()


def test_pairwise_line_without_query_residues():
    target = "A" + "G" * 130 + "C"
    aln = Alignment(score=1, query_start=0, query_end=2, target_start=0, target_end=132,
                    cigar="1=130D1=", query="AC", target=target, mode="global",
                    query_length=2, target_length=132)
    body = aln.format("pairwise").split("\n\n", 1)[1].split("\n")
    second = body[4].split()
    assert second[0] == "query" and second[1] == "1" and second[-1] == "1"
    assert set(second[2]) == {"-"}


def test_pairwise_score_only():
    text = SCORE_ONLY.format("pairwise")
    assert "# Score:  9" in text
    assert "# Query end:  8" in text and "# Target end: 6" in text
    assert "range" not in text and "CIGAR" not in text and "ACG" not in text


def test_pairwise_empty_alignment():
    text = EMPTY.format("pairwise")
    assert "# Score:  0" in text
    assert "(empty alignment)" in text
    assert "# Query range:  none" in text


@pytest.mark.parametrize("kind", FORMATS)
def test_no_trailing_newline(kind):
    assert not format_alignment(GAPPED, kind).endswith("\n")


def test_unknown_format_is_input_error():
    with pytest.raises(InputError, match="xml"):
        GAPPED.format("xml")


# ---- search hits: E-values, bit scores, strands ----------------------------------------------

# the reverse complement of query GTAACGTCC (GGACGTTAC) aligned to the target as GAPPED is
MINUS = dataclasses.replace(GAPPED, evalue=2.85e-4, bitscore=46.63, strand="-")


def test_blast6_prints_blast_evalue_and_bitscore():
    hit = dataclasses.replace(GAPPED, evalue=3.0249911e-69, bitscore=245.174, strand=None)
    assert _fields(hit.format("blast6"))[10:] == ["3.02e-69", "245"]
    tiny = dataclasses.replace(GAPPED, evalue=1e-200, bitscore=9.23)
    assert _fields(tiny.format("blast6"))[10:] == ["0.0", " 9.2"]


def test_blast6_minus_strand_coordinates_are_on_the_original_query():
    # query 3..8 of the reverse complement (m = 9) is 2..7 of the original, target 2..6
    f = _fields(MINUS.format("blast6"))
    assert f[6:12] == ["2", "7", "6", "2", "2.85e-04", "46.6"]
    assert _fields(dataclasses.replace(MINUS, strand="+").format("blast6"))[6:10] == [
        "3", "8", "2", "6"]


def test_blast6_minus_strand_score_only_and_empty():
    score_only = dataclasses.replace(SCORE_ONLY, strand="-")
    assert _fields(score_only.format("blast6"))[6:10] == ["2", "NA", "6", "NA"]
    empty = dataclasses.replace(EMPTY, strand="-")
    assert _fields(empty.format("blast6"))[6:10] == ["NA"] * 4


def test_sam_minus_strand_is_flag_16():
    f = _fields(MINUS.format("sam"))
    assert f[1] == "16" and f[3] == "2" and f[5] == "2S3=1I1X1=1S"
    assert f[9] == "GGACGTTAC"  # SEQ as aligned: the reverse complement
    assert _fields(dataclasses.replace(SCORE_ONLY, strand="-").format("sam"))[1] == "20"
    assert _fields(dataclasses.replace(GAPPED, strand="+").format("sam"))[1] == "0"


def test_json_carries_hit_fields():
    obj = json.loads(MINUS.format("json"))
    assert (obj["evalue"], obj["bitscore"], obj["strand"]) == (2.85e-4, 46.63, "-")
    assert Alignment(**obj) == MINUS
    assert "evalue" not in json.loads(GAPPED.format("json"))
    searched = json.loads(format_alignment(GAPPED, "json", search=True))
    assert searched["evalue"] is None and searched["strand"] is None


def test_pairwise_shows_hit_fields():
    text = MINUS.format("pairwise")
    assert "# E-value:   2.85e-04\n# Bit score: 46.6\n# Strand: - (" in text
    assert "E-value" not in GAPPED.format("pairwise")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="=XID", max_size=40).map(lambda t: t * 3), max_size=12))
def test_cigars_written_at_once_equal_each_run_counted(many):
    from itertools import groupby

    from wavedp.alignment import cigars_from_ops

    want = ["".join(f"{len(list(run))}{op}" for op, run in groupby(ops)) for ops in many]
    assert cigars_from_ops(many) == want
    assert cigars_from_ops([ops.encode() for ops in many]) == want
    assert cigars_from_ops([b"=" * 9 + b"X" * 10 + b"I" * 100 + b"D" * 12345]) == [
        "9=10X100I12345D"]
