"""engines.spans: records' lengths read off their offsets are the offsets' differences, as
slices, samples, gathers and arrays; their extremes are the array's, by the parallel pass
and without it; one-to-one pairs of any lengths align as when their lengths are arrays."""

from __future__ import annotations

import numpy as np
import pytest

import wavedp
from wavedp.engines import spans
from wavedp.engines.common import Sides
from wavedp.pairs.sequences import Sequences


def _offsets(sizes) -> np.ndarray:
    offsets = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    return offsets


@pytest.mark.parametrize("count", [0, 1, 2, 5, 1000, (1 << 17) + 3])
@pytest.mark.parametrize("parallel_least", [1, spans.PARALLEL_LEAST])
def test_spans_are_the_differences(count, parallel_least, monkeypatch):
    monkeypatch.setattr(spans, "PARALLEL_LEAST", parallel_least)
    sizes = np.random.default_rng(count).integers(0, 500, count)
    if count > 3:
        sizes[count // 3] = 0  # an empty record among them
        sizes[count // 2] = 9000
    offsets = _offsets(sizes)
    made = spans.Spans(offsets)
    assert made.size == len(made) == count and made.shape == (count,)
    lo, hi = made.extremes()
    assert (lo, hi) == ((int(sizes.min()), int(sizes.max())) if count else (0, 0))
    for key in (slice(None), slice(1, None), slice(2, count - 1), slice(count, None),
                slice(None, None, 7), slice(3, None, 2), slice(5, 2)):
        part = made[key]
        np.testing.assert_array_equal(np.asarray(part), sizes[key], str(key))
    if count:
        gather = np.array([0, count - 1, count // 2])
        np.testing.assert_array_equal(made[gather], sizes[gather])
    whole = np.asarray(made, np.int64)
    np.testing.assert_array_equal(whole, sizes)
    assert not whole.flags.writeable
    assert made.array() is whole  # made once


def test_extremes_of_a_slice_and_its_array():
    """A slice's extremes are its own; where the array is made they come from it."""
    sizes = np.arange(1, 200_001, dtype=np.int64) % 977
    made = spans.Spans(_offsets(sizes))
    assert made[1000:2000].extremes() == (int(sizes[1000:2000].min()),
                                          int(sizes[1000:2000].max()))
    made.array()
    assert made.extremes() == (0, 976)


def test_sides_of_spans_as_arrays():
    sizes = np.array([3, 0, 7, 2], np.int64)
    s = spans.Spans(_offsets(sizes))
    sides = Sides(s, s, 0, 7, 0, 7)
    arrays = sides.arrays()
    assert isinstance(arrays.m, np.ndarray) and arrays.arrays() is arrays
    np.testing.assert_array_equal(arrays.n, sizes)
    assert sides.part(1, 3).m_max == 7 and sides.select(np.array([0, 2])).m_min == 3


@pytest.mark.parametrize("parallel_least", [1, spans.PARALLEL_LEAST])
def test_pairs_from_offsets_align_as_from_strings(parallel_least, monkeypatch):
    """One-to-one pairs given as Sequences (lengths read off the offsets, an empty record
    among them) give the batch their strings give."""
    monkeypatch.setattr(spans, "PARALLEL_LEAST", parallel_least)
    rng = np.random.default_rng(5)
    scoring = wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    texts = ["".join(rng.choice(list("ACGT"), int(k))) for k in rng.integers(0, 40, 60)]
    texts[7] = ""
    other = texts[::-1]
    want = wavedp.align_pairs(texts, other, scoring, device="cpu")
    q = Sequences.encode(texts, [f"q{k}" for k in range(60)], scoring)
    t = Sequences.encode(other, [f"t{k}" for k in range(60)], scoring)
    got = wavedp.align_pairs(q, t, scoring, device="cpu")
    np.testing.assert_array_equal(got.score, want.score)
    assert got.cigars() == want.cigars()
    np.testing.assert_array_equal(got.query_length, [len(x) for x in texts])
