"""Scores agree with parasail and Biopython; every returned alignment rescores exactly."""

from __future__ import annotations

import parasail
import pytest
from Bio import Align
from helpers import problems, rescore
from hypothesis import given, settings

import wavedp

PARASAIL = {"local": "sw_trace_scan_32", "global": "nw_trace_scan_32",
            "semiglobal": "sg_trace_scan_32"}


def parasail_matrix(scoring: wavedp.Scoring):
    if scoring.is_dna:
        matrix = parasail.matrix_create("ACGTN", scoring.match, scoring.mismatch)
        matrix.set_value(4, 4, scoring.mismatch)  # N scores the mismatch, even against N
        return matrix
    return getattr(parasail, scoring.matrix.lower())


def biopython_aligner(scoring: wavedp.Scoring, mode: str) -> Align.PairwiseAligner:
    aligner = Align.PairwiseAligner()
    if scoring.is_dna:
        aligner.substitution_matrix = _dna_array(scoring)
    else:
        aligner.substitution_matrix = Align.substitution_matrices.load(scoring.matrix)
    aligner.open_gap_score = -scoring.gap_open
    aligner.extend_gap_score = -scoring.gap_extend
    aligner.mode = "local" if mode == "local" else "global"
    if mode == "semiglobal":
        aligner.end_gap_score = 0
    return aligner


def _dna_array(scoring: wavedp.Scoring):
    from Bio.Align.substitution_matrices import Array

    arr = Array(alphabet="ACGTN", dims=2)
    for a in "ACGTN":
        for b in "ACGTN":
            arr[a, b] = scoring.match if a == b and a != "N" else scoring.mismatch
    return arr


@settings(max_examples=250, deadline=None)
@given(problems(max_len=40, penalties_any=False))
def test_scores_match_parasail(problem):
    query, target, scoring, mode = problem
    if not query or not target:
        return  # parasail does not take empty sequences
    aln = wavedp.align(query, target, scoring, mode=mode, device="cpu")
    fn = getattr(parasail, PARASAIL[mode])
    result = fn(query, target, scoring.gap_open, scoring.gap_extend, parasail_matrix(scoring))
    if mode == "semiglobal" and aln.score == 0:
        # parasail's sg never takes the all-gap alignment (docs/design.md, Tests)
        assert result.score <= 0
    else:
        assert aln.score == result.score
    assert rescore(aln, scoring) == aln.score


@settings(max_examples=250, deadline=None)
@given(problems(max_len=40, penalties_any=False))
def test_scores_match_biopython(problem):
    query, target, scoring, mode = problem
    aln = wavedp.align(query, target, scoring, mode=mode, device="cpu")
    aligner = biopython_aligner(scoring, mode)
    q, t = query.upper().replace("U", "T"), target.upper().replace("U", "T")
    if not scoring.is_dna:
        q = q.translate(str.maketrans("UOJ", "XXX"))
        t = t.translate(str.maketrans("UOJ", "XXX"))
    if not q or not t:  # Biopython refuses empty sequences
        return
    expected = aligner.score(q, t)
    assert aln.score == pytest.approx(expected)
    assert rescore(aln, scoring) == aln.score


@pytest.mark.parametrize("mode", ["local", "global", "semiglobal"])
def test_parasail_on_longer_related_protein(mode):
    import numpy as np
    from helpers import PROTEIN, random_seq, related

    rng = np.random.default_rng(11)
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    for _ in range(5):
        a = random_seq(rng, PROTEIN, int(rng.integers(200, 700)))
        b = related(rng, a, PROTEIN, 0.25)
        aln = wavedp.align(a, b, scoring, mode=mode, device="cpu")
        fn = getattr(parasail, PARASAIL[mode])
        assert aln.score == fn(a, b, 11, 1, parasail.blosum62).score
        assert rescore(aln, scoring) == aln.score
