"""The inter-sequence database-search kernel against the 32-bit ``score_only``."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dna_table
from hypothesis import given, settings
from hypothesis import strategies as st

from wavedp import Scoring
from wavedp.engines import cpu
from wavedp.engines.common import GLOBAL, LOCAL, SEMIGLOBAL
from wavedp.engines.cpu.intersequence import LANES, local_ends, scores, scores_many
from wavedp.engines.cpu.score import score_only

MODES = (LOCAL, GLOBAL, SEMIGLOBAL)
WIDTHS = (8, 16, 32, "auto")
BLOSUM62 = np.ascontiguousarray(Scoring(matrix="BLOSUM62").table, dtype=np.int32)


def database(seqs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([s.size for s in seqs])
    residues = np.concatenate(seqs) if seqs else np.empty(0, np.uint8)
    return residues.astype(np.uint8), offsets


def expected(query, seqs, sub, gap_open, gap_extend, mode) -> np.ndarray:
    return np.array([score_only(query, t, sub, gap_open, gap_extend, mode)[0] for t in seqs],
                    dtype=np.int32)


def check(query, seqs, sub, gap_open, gap_extend, mode, width) -> None:
    residues, offsets = database(seqs)
    got = scores(query, residues, offsets, sub, gap_open, gap_extend, mode, width=width)
    want = expected(query, seqs, sub, gap_open, gap_extend, mode)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)


@st.composite
def problems(draw):
    if draw(st.booleans()):
        sub = dna_table(draw(st.integers(1, 5)), draw(st.integers(-6, 0)))
    elif draw(st.booleans()):
        sub = BLOSUM62
    else:
        size = draw(st.integers(2, 24))
        values = draw(st.lists(st.integers(-8, 8), min_size=size * size,
                               max_size=size * size))
        sub = np.array(values, dtype=np.int32).reshape(size, size)
    letters = sub.shape[0]

    def seq(max_len: int = 60) -> np.ndarray:
        n = draw(st.integers(0, max_len))
        return np.array(draw(st.lists(st.integers(0, letters - 1), min_size=n, max_size=n)),
                        dtype=np.uint8)

    seqs = draw(st.lists(st.builds(seq), min_size=0, max_size=45))
    if seqs and draw(st.booleans()):  # duplicates
        seqs = seqs + seqs[: draw(st.integers(1, len(seqs)))]
    gap_extend = draw(st.integers(0, 6))
    gap_open = gap_extend + draw(st.integers(0, 8))
    return seq(), seqs, sub, gap_open, gap_extend


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=25, deadline=None)
@given(problem=problems())
def test_random_against_score_only(problem, mode, width):
    query, seqs, sub, gap_open, gap_extend = problem
    check(query, seqs, sub, gap_open, gap_extend, mode, width)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("mode", MODES)
def test_saturation_rescored(mode, width):
    """3000 x W against itself scores 33000 (> int16); long unrelated pairs go far below."""
    w = np.full(3000, Scoring(matrix="BLOSUM62").encode("W")[0], np.uint8)
    rng = np.random.default_rng(7)
    other = rng.integers(0, 20, 2500).astype(np.uint8)
    short = rng.integers(0, 20, 40).astype(np.uint8)
    seqs = [w, other, short, w[:200], np.empty(0, np.uint8), w[:5]]
    check(w, seqs, BLOSUM62, 11, 1, mode, width)
    check(short, seqs, BLOSUM62, 11, 1, mode, width)


@pytest.mark.parametrize("width", (8, 16))
@pytest.mark.parametrize("mode", MODES)
def test_lane_refill(mode, width):
    """Many sequences of very different lengths: lanes end and refill at different columns."""
    rng = np.random.default_rng(3)
    lengths = np.concatenate([rng.integers(0, 5, 40), rng.integers(1, 400, 150),
                              rng.lognormal(4, 1, 60).astype(int) + 1])
    rng.shuffle(lengths)
    seqs = [rng.integers(0, 20, k).astype(np.uint8) for k in lengths]
    assert len(seqs) > 4 * LANES
    query = rng.integers(0, 20, 150).astype(np.uint8)
    check(query, seqs, BLOSUM62, 11, 1, mode, width)
    check(query[:3], seqs, BLOSUM62, 5, 2, mode, width)


@pytest.mark.parametrize("mode", MODES)
def test_empty_query_and_database(mode):
    seqs = [np.empty(0, np.uint8), np.arange(7, dtype=np.uint8)]
    check(np.empty(0, np.uint8), seqs, BLOSUM62, 11, 1, mode, "auto")
    residues, offsets = database([])
    assert scores(np.arange(5, dtype=np.uint8), residues, offsets, BLOSUM62, 11, 1,
                  mode).shape == (0,)


def test_wide_alphabet_and_scores_fall_back():
    """More than 32 letters or scores outside int8: the 32-bit path, same results."""
    rng = np.random.default_rng(5)
    sub = rng.integers(-9, 9, (40, 40)).astype(np.int32)
    seqs = [rng.integers(0, 40, k).astype(np.uint8) for k in (0, 3, 50, 80)]
    check(rng.integers(0, 40, 30).astype(np.uint8), seqs, sub, 4, 1, LOCAL, "auto")
    big = BLOSUM62 * 20
    seqs = [rng.integers(0, 20, k).astype(np.uint8) for k in (1, 30, 90)]
    check(seqs[2], seqs, big, 200, 20, LOCAL, 8)
    # int8 scores but a gap open beyond int8: 8 bits is skipped, 16 bits runs
    check(seqs[2], seqs, BLOSUM62, 300, 2, GLOBAL, 8)
    check(seqs[2], seqs, BLOSUM62, 300, 2, LOCAL, 8)


def test_scores_many_rows_match_scores():
    rng = np.random.default_rng(11)
    seqs = [rng.integers(0, 20, k).astype(np.uint8) for k in rng.integers(0, 90, 70)]
    residues, offsets = database(seqs)
    queries = [rng.integers(0, 20, k).astype(np.uint8) for k in (0, 1, 33, 120)]
    many = scores_many(queries, residues, offsets, BLOSUM62, 11, 1, LOCAL)
    for row, q in zip(many, queries, strict=True):
        np.testing.assert_array_equal(row, expected(q, seqs, BLOSUM62, 11, 1, LOCAL))


def test_bad_width():
    with pytest.raises(ValueError):
        scores(np.zeros(3, np.uint8), np.zeros(3, np.uint8), np.array([0, 3]), BLOSUM62, 11,
               1, LOCAL, width=4)


def _related(rng, alphabet: int, count: int, low: int, high: int, query: np.ndarray,
             repeats: bool) -> list[np.ndarray]:
    """Random sequences, some holding a piece of ``query``; ``repeats``: short periods, so
    that many cells tie for the best."""
    seqs = []
    for _ in range(count):
        n = int(rng.integers(low, high))
        t = (np.tile(rng.integers(0, alphabet, 2), n)[:n] if repeats
             else rng.integers(0, alphabet, n)).astype(np.uint8)
        if rng.random() < 0.3:
            a = int(rng.integers(0, query.size))
            t = np.concatenate([t, query[a:a + int(rng.integers(1, 300))]])
        seqs.append(t)
    return seqs


@pytest.mark.parametrize("case", ["protein", "dna", "dna repeats", "long", "width 16",
                                  "width 32"])
def test_local_ends_are_score_onlys(case):
    """The kernel's tracked end cells are ``score_only``'s, tie rules included (the
    maximum, smallest i, then smallest j), at every width, saturated lanes moving up; the
    subjects not asked for stay 0."""
    rng = np.random.default_rng(len(case))
    protein = case not in ("dna", "dna repeats")
    sub, alphabet = (BLOSUM62, 20) if protein else (dna_table(2, -3), 4)
    gaps = (11, 1) if protein else (5, 2)
    low, high = (300, 2500) if case == "long" else (1, 250)
    width = {"width 16": 16, "width 32": 32}.get(case, "auto")
    for _ in range(3):
        m = int(rng.integers(1, high))
        query = (np.tile(rng.integers(0, alphabet, 3), m)[:m] if case == "dna repeats"
                 else rng.integers(0, alphabet, m)).astype(np.uint8)
        seqs = _related(rng, alphabet, 80 if case != "long" else 20, low, high, query,
                        case == "dna repeats")
        residues, offsets = database(seqs)
        asked = rng.choice(len(seqs), size=len(seqs) * 3 // 4, replace=False)
        got, ends = local_ends(query, residues, offsets, asked, sub, *gaps, width)
        for k, t in enumerate(seqs):
            want = score_only(query, t, sub, *gaps, LOCAL) if k in asked else (0, 0, 0)
            assert (int(got[k]), int(ends[k, 0]), int(ends[k, 1])) == tuple(map(int, want))


def test_many_score_only_pairs_of_a_query_take_the_kernel(monkeypatch):
    """``align_pairs`` without traceback gives the same results whether a query's pairs go
    through ``local_ends`` (at least ENDS_MIN_PAIRS of them) or pair by pair."""
    rng = np.random.default_rng(4)
    queries = [rng.integers(0, 20, int(rng.integers(20, 300))).astype(np.uint8)
               for _ in range(3)]
    targets = _related(rng, 20, 150, 1, 300, queries[0], False)
    pairs = np.array([(q, t) for q in range(3) for t in range(150) if q == 0 or t % 3],
                     np.int64)
    rng.shuffle(pairs)
    fast = cpu.align_pairs(queries, targets, pairs, BLOSUM62, 11, 1, LOCAL, False)
    monkeypatch.setattr(cpu, "ENDS_MIN_PAIRS", 10**9)
    assert fast == cpu.align_pairs(queries, targets, pairs, BLOSUM62, 11, 1, LOCAL, False)
