"""engines.cuda.recycled: large host arrays whose mappings go back to a pool only once no
array made from them is left, and come out again for the next arrays."""

import gc

import numpy as np
import pytest

from wavedp.engines.cuda import recycled


@pytest.fixture
def pool(monkeypatch):
    monkeypatch.setattr(recycled, "RECYCLE", True)
    monkeypatch.setattr(recycled, "_pool", recycled._Pool())
    return recycled


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def test_like_np_empty(pool):
    big = pool.empty((1 << 20, 5), np.int32)
    assert big.shape == (1 << 20, 5) and big.dtype == np.int32 and big.flags.c_contiguous
    assert big.flags.writeable
    big[:] = 3
    assert int(big.sum()) == 3 * big.size
    assert pool.empty(np.int64(1 << 22), np.uint8).shape == (1 << 22,)
    small = pool.empty(10, np.uint8)  # under POOL_LEAST: NumPy's own
    assert small.flags.owndata
    pool.RECYCLE = False
    assert pool.empty(1 << 24, np.uint8).flags.owndata


def test_a_mapping_returns_only_when_no_view_is_left(pool):
    a = pool.empty(3 << 20, np.int32)
    start = _address(a)
    views = [a[0:5].view(np.int16).reshape(2, 5), a[1000:2000:7], a.reshape(-1, 3)[5000:6000, 1]]
    del a
    gc.collect()
    assert pool.kept() == 0
    for view in views:
        view[...] = 7
    del view
    other = pool.empty(3 << 20, np.int32)  # a new mapping: the old one is still in use
    other[:] = -1
    assert not any(np.shares_memory(other, v) for v in views)
    assert all((v == 7).all() for v in views)
    views.pop()
    gc.collect()
    assert pool.kept() == 0
    views.clear()
    gc.collect()
    assert pool.kept() >= 12 << 20
    again = pool.empty(3 << 20, np.int32)  # the first mapping, pages in place
    assert _address(again) == start and pool.kept() == 0


def test_arrow_and_pandas_hold_it(pool):
    pa = pytest.importorskip("pyarrow")
    a = pool.empty(2 << 20, np.int32)
    a[:] = np.arange(a.size, dtype=np.int32)
    column = pa.array(a)
    del a
    gc.collect()
    assert pool.kept() == 0
    assert column[12345].as_py() == 12345
    del column
    gc.collect()
    assert pool.kept() > 0


def test_sizes_and_bound(pool, monkeypatch):
    monkeypatch.setattr(pool, "POOL_KEEP", 40 << 20)
    big = pool.empty(32 << 20, np.uint8)
    start = _address(big)
    del big
    small = pool.empty(5 << 20, np.uint8)  # under half the kept mapping: a new one
    assert _address(small) != start
    arrays = [pool.empty(16 << 20, np.uint8) for _ in range(4)]
    del arrays, small
    gc.collect()
    assert pool.kept() <= 40 << 20
