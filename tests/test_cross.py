"""The cross product's indices and sides (engines/cross.py), against repeat and tile."""

from __future__ import annotations

import numpy as np
import pytest

import wavedp
from wavedp.engines import cross


@pytest.mark.parametrize("queries, targets", [(0, 0), (0, 5), (4, 0), (1, 1), (3, 7), (7, 3)])
def test_indices(queries, targets):
    qi, ti = cross.indices(queries, targets)
    assert qi.dtype == ti.dtype == np.int64
    assert qi.flags.c_contiguous and ti.flags.c_contiguous
    np.testing.assert_array_equal(qi, np.repeat(np.arange(queries), targets))
    np.testing.assert_array_equal(ti, np.tile(np.arange(targets), queries))


def test_sides_of_many_shapes_and_of_one():
    m, n = np.array([5, 1, 9]), np.array([2, 8, 3, 3])
    sides = cross.sides(m, n, (1, 9, 2, 8))
    np.testing.assert_array_equal(sides.m, np.repeat(m, 4))
    np.testing.assert_array_equal(sides.n, np.tile(n, 3))
    assert (sides.m_min, sides.m_max, sides.n_min, sides.n_max) == (1, 9, 2, 8)
    one = cross.sides(np.full(3, 7), np.full(4, 2), (7, 7, 2, 2))
    assert one.uniform and one.m.size == 12 and one.m.strides == (0,)  # no memory
    np.testing.assert_array_equal(one.part(5, 9).n, [2, 2, 2, 2])
    assert cross.sides(np.zeros(0, np.int64), n, (0, 0, 2, 8)).m.size == 0


def test_align_all_indices_and_lengths():
    batch = wavedp.align_all(["ACGT", "GG"], ["AC", "T", "GGGA"],
                             wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2),
                             device="cpu")
    np.testing.assert_array_equal(batch.query_index, [0, 0, 0, 1, 1, 1])
    np.testing.assert_array_equal(batch.target_index, [0, 1, 2, 0, 1, 2])
    assert [a.target_id for a in batch][:3] == ["target1", "target2", "target3"]
