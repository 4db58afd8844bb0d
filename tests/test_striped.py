"""The striped SIMD score-only kernel against the pure-Python reference engine."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dna_table
from hypothesis import given, settings
from hypothesis import strategies as st

from wavedp.engines import reference
from wavedp.engines.common import GLOBAL, LOCAL, SEMIGLOBAL
from wavedp.engines.cpu.striped import LANES, striped_score

MODES = (LOCAL, GLOBAL, SEMIGLOBAL)
#: lengths on and just off the striped layout's boundaries (segment counts change here)
EDGE_LENGTHS = sorted({k * LANES + d for k in (1, 2) for d in (-1, 0, 1)} | {1, 2})


def expected(q, t, sub, gap_open, gap_extend, mode):
    score, _, qe, _, te, _ = reference.align(q, t, sub, gap_open, gap_extend, mode,
                                             traceback=False)
    return score, qe, te


def check(q, t, sub, gap_open, gap_extend, mode):
    got = striped_score(q, t, sub, gap_open, gap_extend, mode)
    assert tuple(int(v) for v in got) == expected(q, t, sub, gap_open, gap_extend, mode)


lengths = st.one_of(st.integers(0, 40), st.sampled_from([k for k in EDGE_LENGTHS if k <= 40]))
penalties = st.integers(0, 6)


@st.composite
def codes(draw, alphabet: int) -> np.ndarray:
    n = draw(lengths)
    values = draw(st.lists(st.integers(0, alphabet - 1), min_size=n, max_size=n))
    return np.array(values, dtype=np.uint8)


@st.composite
def dna_problems(draw):
    sub = dna_table(draw(st.integers(1, 5)), draw(st.integers(-6, 0)))
    return draw(codes(5)), draw(codes(5)), sub


@st.composite
def table_problems(draw):
    size = draw(st.integers(2, 24))
    values = draw(st.lists(st.integers(-8, 8), min_size=size * size, max_size=size * size))
    sub = np.array(values, dtype=np.int32).reshape(size, size)
    return draw(codes(size)), draw(codes(size)), sub


@settings(max_examples=400, deadline=None)
@given(problem=st.one_of(dna_problems(), table_problems()), gap_open=penalties,
       gap_extend=penalties, mode=st.sampled_from(MODES))
def test_matches_reference(problem, gap_open, gap_extend, mode):
    q, t, sub = problem
    check(q, t, sub, gap_open, gap_extend, mode)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), gap_open=penalties, gap_extend=penalties,
       mode=st.sampled_from(MODES))
def test_long_query_many_segments(seed, gap_open, gap_extend, mode):
    """Queries spanning many segments per lane; vertical gaps cross lanes (lazy-F pass)."""
    rng = np.random.default_rng(seed)
    q = rng.integers(0, 5, int(rng.integers(LANES * LANES - 3, LANES * LANES + 40)))
    t = q[rng.integers(0, 20):][: int(rng.integers(1, 30))].copy()
    t[rng.random(t.size) < 0.2] = rng.integers(0, 5)
    check(q.astype(np.uint8), t.astype(np.uint8), dna_table(2, -3), gap_open, gap_extend, mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("m,n", [(0, 0), (0, 7), (7, 0), (0, LANES), (LANES + 1, 0)])
def test_empty(m, n, mode):
    q = np.zeros(m, np.uint8)
    t = np.ones(n, np.uint8)
    sub = dna_table(2, -3)
    check(q, t, sub, 5, 2, mode)
    score, qe, te = (int(v) for v in striped_score(q, t, sub, 5, 2, mode))
    if mode == GLOBAL:
        assert (qe, te) == (m, n)
        assert score == (-(5 + (m + n - 1) * 2) if m + n else 0)
    else:
        assert (score, qe, te) == (0, 0, 0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("length", EDGE_LENGTHS + [100])
def test_identical(length, mode):
    q = (np.arange(length) % 4).astype(np.uint8)
    assert tuple(striped_score(q, q, dna_table(2, -3), 5, 2, mode)) == (2 * length, length,
                                                                       length)
    check(q, q, dna_table(2, -3), 5, 2, mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("gaps", [(5, 2), (0, 0), (1, 3)])
def test_all_mismatches(mode, gaps):
    q = np.zeros(LANES + 3, np.uint8)
    t = np.full(9, 4, np.uint8)  # N against everything
    check(q, t, dna_table(2, -3), *gaps, mode)
    if mode == LOCAL:
        assert tuple(striped_score(q, t, dna_table(2, -3), *gaps, mode)) == (0, 0, 0)


def test_local_ties_take_smallest_row_then_column():
    # "AC" occurs at query rows 1-2 and 5-6 and at target columns 3-4 and 7-8
    q = np.array([0, 1, 2, 2, 0, 1], np.uint8)
    t = np.array([3, 3, 0, 1, 3, 3, 0, 1], np.uint8)
    assert tuple(striped_score(q, t, dna_table(2, -3), 5, 2, LOCAL)) == (4, 2, 4)
    check(q, t, dna_table(2, -3), 5, 2, LOCAL)


def test_agrees_with_parasail_on_long_sequences():
    parasail = pytest.importorskip("parasail")
    rng = np.random.default_rng(7)
    q = rng.integers(0, 4, 700).astype(np.uint8)
    t = q[50:600].copy()
    t[rng.random(t.size) < 0.1] = rng.integers(0, 4)
    a, b = ("".join("ACGT"[c] for c in s) for s in (q, t))
    matrix = parasail.matrix_create("ACGT", 2, -3)
    sub = dna_table(2, -3)
    local = parasail.sw_striped_32(a, b, 5, 2, matrix)
    assert tuple(striped_score(q, t, sub, 5, 2, LOCAL)) == (local.score, local.end_query + 1,
                                                            local.end_ref + 1)
    assert striped_score(q, t, sub, 5, 2, GLOBAL)[0] == parasail.nw_striped_32(
        a, b, 5, 2, matrix).score
