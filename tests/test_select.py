"""The search's top-k selection (engines/cuda/search.select): each row's k best entries at or
above its threshold, best first, ties to the smaller index, on host arrays here and on the
GPU under ``-m gpu``."""

from __future__ import annotations

import numpy as np
import pytest

from wavedp.engines.cuda.scan import select as gpu_select


def _reference(row: np.ndarray, k: int, threshold: int | None):
    idx = np.arange(row.size)
    if threshold is not None:
        idx = idx[row >= threshold]
    order = np.lexsort((idx, -row[idx].astype(np.int64)))[:k]
    return idx[order], row[idx[order]]


def _matrix(rng, rows: int, n: int, spread: int) -> np.ndarray:
    """Scores with many ties (``spread`` values), a row of one value and a row of extremes."""
    m = rng.integers(-spread, spread, (rows, n)).astype(np.int32)
    m[0] = 7
    m[-1, ::3] = np.iinfo(np.int32).max
    m[-1, 1::3] = np.iinfo(np.int32).min + 1
    return m


def _check(scores: np.ndarray, k: int, thresholds, picked) -> None:
    assert len(picked) == scores.shape[0]
    for row, t, (idx, sc) in zip(scores, thresholds, picked, strict=True):
        want_idx, want_sc = _reference(row, k, t)
        assert idx.tolist() == want_idx.tolist()
        assert sc.tolist() == want_sc.tolist()
        assert sc.dtype == np.int32


@pytest.mark.parametrize("chunk", [1, 3, 8, 256])
@pytest.mark.parametrize("k", [1, 2, 10, 37])
@pytest.mark.parametrize("n", [40, 257, 1000])
def test_select_equals_a_full_sort(monkeypatch, chunk, k, n):
    monkeypatch.setattr(gpu_select, "SELECT_CHUNK", chunk)
    monkeypatch.setattr(gpu_select, "SELECT_BYTES", 4 * n * 2)  # two rows at a time
    rng = np.random.default_rng(chunk * 1000 + k * 10 + n)
    scores = _matrix(rng, 7, n, 5)
    thresholds = [None, 0, 3, 100, None, -2, 8]
    _check(scores, k, thresholds, gpu_select.select(scores, k, thresholds))


def test_select_keeps_only_what_reaches_the_threshold():
    scores = np.array([[1, 5, 5, 2, 9, 5], [0, 0, 0, 0, 0, 0]], np.int32)
    picked = gpu_select.select(scores, 4, [5, 1])
    assert picked[0][0].tolist() == [4, 1, 2, 5]
    assert picked[0][1].tolist() == [9, 5, 5, 5]
    assert picked[1][0].size == 0


@pytest.mark.gpu
@pytest.mark.parametrize("k", [1, 10, 300])
def test_select_on_the_gpu_equals_the_host(k):
    import cupy

    rng = np.random.default_rng(k)
    scores = _matrix(rng, 9, 100_003, 40)
    thresholds = [None, 10, 39, 0, None, 50, -40, 20, None]
    picked = gpu_select.select(cupy.asarray(scores), k, thresholds)
    _check(scores, k, thresholds, picked)
