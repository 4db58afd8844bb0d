"""The batch kernel (many pairs per launch, a warp per pair) returns exactly the CPU engine's
alignments (run with ``pytest -m gpu``)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DNA, MODE_NAMES, pair_texts, random_seq

import wavedp
from wavedp.api import Prepared
from wavedp.engines import cpu
from wavedp.engines.common import GLOBAL, LOCAL, SEMIGLOBAL

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("poison")]

# strips are 128 (R = 4) or 256 (R = 8) rows: shapes on both sides of one and several strips
SHAPES = [(1, 1), (1, 60), (60, 1), (2, 3), (31, 33), (127, 129), (128, 128), (129, 40),
          (255, 257), (256, 256), (257, 700), (513, 1025), (1000, 64), (64, 3000),
          (1500, 1400)]
SCORINGS = {
    "dna": wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2),
    "protein": wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1),
    "odd": wavedp.Scoring(match=1, mismatch=-1, gap_open=3, gap_extend=3),
    "ties": wavedp.Scoring(match=1, mismatch=-1, gap_open=2, gap_extend=1),
}
MODES = {"local": LOCAL, "global": GLOBAL, "semiglobal": SEMIGLOBAL}


def _problem(alphabet: str, seed: int):
    queries, targets = pair_texts(alphabet, SHAPES, seed)
    scoring = SCORINGS[alphabet]
    q = Prepared(queries, scoring, "query")
    t = Prepared(targets, scoring, "target")
    # each query against its own target and the next one's (mixed sizes in one launch)
    k = len(SHAPES)
    pairs = np.array([(i, i) for i in range(k)] + [(i, (i + 1) % k) for i in range(k)],
                     np.int64)
    return q, t, pairs, scoring


def _same(got, want):
    assert len(got) == len(want)
    for p, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g[:5] == w[:5], p
        if w[5] is None:
            assert g[5] is None
        else:
            assert bytes(g[5]) == bytes(w[5]), p


@pytest.mark.parametrize("rows", [4, 8])
@pytest.mark.parametrize("alphabet", list(SCORINGS))
@pytest.mark.parametrize("mode", MODE_NAMES)
def test_batch_equals_cpu(monkeypatch, rows, alphabet, mode):
    from wavedp.engines.cuda import batch

    monkeypatch.setattr(batch, "ROWS", (rows,))
    q, t, pairs, scoring = _problem(alphabet, rows * 31 + len(alphabet))
    for traceback in (True, False):
        args = (q.codes, t.codes, pairs, scoring.table, scoring.gap_open, scoring.gap_extend,
                MODES[mode], traceback)
        _same(batch.align(*args), cpu.align_pairs(*args))


def test_launches_split_by_memory(monkeypatch):
    """A small direction-byte budget cuts the pairs into several launches: same results."""
    from wavedp.engines.cuda import batch

    monkeypatch.setattr(batch, "DIRS_BYTES", 1 << 20)
    q, t, pairs, scoring = _problem("protein", 7)
    args = (q.codes, t.codes, pairs, scoring.table, scoring.gap_open, scoring.gap_extend,
            LOCAL, True)
    _same(batch.align(*args), cpu.align_pairs(*args))


def test_align_all_routes_small_pairs_to_the_batch_kernel(monkeypatch):
    """align_all on the GPU: small pairs in the batch kernel, larger ones in the multipass
    engine, empty ones on the boundary; all equal the CPU engine, in order."""
    from wavedp.engines.cuda import batch

    monkeypatch.setattr(batch, "MAX_CELLS", 200 * 200)
    rng = np.random.default_rng(3)
    scoring = SCORINGS["dna"]
    queries = [random_seq(rng, DNA, m) for m in (0, 1, 50, 150, 300)]
    targets = [random_seq(rng, DNA, n) for n in (0, 7, 120, 400)]
    for mode in MODE_NAMES:
        for traceback in (True, False):
            cpu_all = wavedp.align_all(queries, targets, scoring, mode=mode,
                                       traceback=traceback, device="cpu")
            gpu_all = wavedp.align_all(queries, targets, scoring, mode=mode,
                                       traceback=traceback, device="gpu")
            assert gpu_all == cpu_all, (mode, traceback)
