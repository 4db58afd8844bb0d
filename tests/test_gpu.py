"""The CUDA engine returns exactly the CPU engine's alignments (run with ``pytest -m gpu``)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DNA, MODE_NAMES, PROTEIN, random_seq, related

import wavedp

pytestmark = pytest.mark.gpu

# strip heights are 256-1024 (score-only) and 128 (direction bytes); checkpoints and
# traceback tiles every 2048 rows and columns for small pairs (4096 for large ones)
SHAPES = [(1, 1), (1, 60), (60, 1), (0, 7), (7, 0), (0, 0), (31, 33), (255, 257), (256, 256),
          (511, 513), (512, 512), (513, 1025), (1023, 1), (1, 2049), (2047, 9), (3000, 40),
          (40, 3000), (4095, 1100), (4097, 1023), (4096, 2048), (9000, 200), (200, 9000)]
SCORINGS = {
    "dna": wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2),
    "protein": wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1),
    "odd": wavedp.Scoring(match=1, mismatch=-1, gap_open=3, gap_extend=3),
}


@pytest.fixture(autouse=True)
def poison(monkeypatch):
    """Poisoned output buffers; every pair in the multipass engine (the batch kernel that
    takes small pairs by default has its own tests, test_batch_gpu.py)."""
    from wavedp.engines.cuda import batch, multipass

    monkeypatch.setattr(multipass, "POISON", True)
    monkeypatch.setattr(batch, "MAX_CELLS", 0)


def _pair(rng, m, n, letters, kind):
    if kind == "related" and m and n:
        a = random_seq(rng, letters, m)
        b = related(rng, a, letters, 0.2)[:n]
        return a, b + random_seq(rng, letters, n - len(b))
    return random_seq(rng, letters, m), random_seq(rng, letters, n)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("alphabet", ["dna", "protein", "odd"])
def test_gpu_equals_cpu(shape, alphabet):
    rng = np.random.default_rng(shape[0] * 7919 + shape[1])
    scoring = SCORINGS[alphabet]
    letters = PROTEIN if alphabet == "protein" else DNA
    for kind in ("related", "random"):
        q, t = _pair(rng, *shape, letters, kind)
        for mode in MODE_NAMES:
            for traceback in (True, False):
                cpu = wavedp.align(q, t, scoring, mode=mode, traceback=traceback, device="cpu")
                gpu = wavedp.align(q, t, scoring, mode=mode, traceback=traceback, device="gpu")
                assert gpu == cpu, (kind, mode, traceback)
            if max(shape) <= 4100:
                diag = wavedp.align(q, t, scoring, mode=mode, traceback=False, device="gpu",
                                    strategy="diagonal")
                assert diag == cpu, (kind, mode, "diagonal")


def test_gpu_align_all_and_ties():
    """Many equal-scoring cells: the tie rule (smallest i, then j) must hold on the GPU."""
    scoring = wavedp.Scoring(match=1, mismatch=-1, gap_open=2, gap_extend=1)
    queries = ["ACGT" * 300, "A" * 700, "AC" * 600 + "T" * 50]
    targets = ["ACGT" * 250, "A" * 1500, "CA" * 900]
    for mode in MODE_NAMES:
        cpu = wavedp.align_all(queries, targets, scoring, mode=mode, device="cpu")
        gpu = wavedp.align_all(queries, targets, scoring, mode=mode, device="gpu")
        assert gpu == cpu


def test_gpu_long_pair_traceback_rescores():
    from helpers import check_traceback_against_score_only

    rng = np.random.default_rng(5)
    a = random_seq(rng, DNA, 60000)
    b = related(rng, a, DNA, 0.1)
    scoring = SCORINGS["dna"]
    check_traceback_against_score_only(a, b, scoring, "gpu")
    cpu = wavedp.align(a[:20000], b[:20000], scoring, device="cpu")
    assert wavedp.align(a[:20000], b[:20000], scoring, device="gpu") == cpu


def test_diagonal_strategy_is_score_only():
    with pytest.raises(wavedp.InputError):
        wavedp.align("ACGT", "ACGT", SCORINGS["dna"], device="gpu", strategy="diagonal")


def test_gpu_memory_is_checked_before_launch():
    from wavedp.engines.cuda.traceback import check_memory

    with pytest.raises(wavedp.InputError, match="GPU memory"):
        check_memory(10**12, 10**12, True)


@pytest.mark.parametrize("where", ["device", "host"])
@pytest.mark.parametrize("tile", [2048, 4096])
@pytest.mark.parametrize("rows", [16, 32])
@pytest.mark.parametrize("shape", [(1023, 700), (1025, 3000), (2048, 2048), (4097, 1500)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
def test_gpu_strip_heights(monkeypatch, rows, shape, tile, where):
    """Every rows-per-thread variant (strips of 512 and 1024 rows), both traceback tile sizes
    and checkpoints in GPU or in host memory give the CPU answer."""
    from wavedp.engines.cuda import multipass
    from wavedp.engines.cuda import traceback as gpu_traceback

    monkeypatch.setattr(multipass, "ROWS", (rows,))
    monkeypatch.setattr(gpu_traceback, "SMALL_CELLS", 10**18 if tile == 2048 else 0)
    monkeypatch.setattr(gpu_traceback, "DEVICE_CHECKPOINTS", 1 << 40 if where == "device" else 0)
    rng = np.random.default_rng(rows + shape[0])
    q, t = _pair(rng, *shape, DNA, "related")
    for mode in MODE_NAMES:
        for traceback in (True, False):
            cpu = wavedp.align(q, t, SCORINGS["dna"], mode=mode, traceback=traceback,
                               device="cpu")
            gpu = wavedp.align(q, t, SCORINGS["dna"], mode=mode, traceback=traceback,
                               device="gpu")
            assert gpu == cpu, (mode, traceback)


@pytest.mark.parametrize("alphabet", ["dna", "protein"])
@pytest.mark.parametrize("shape", [(1, 1), (40, 3000), (1500, 700), (3100, 2049)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
def test_sweep_options_agree(shape, alphabet):
    """Every score-only kernel option (rows per thread, int8 or int32 profile, keyed or
    branching end-cell tracking, capped residency) finds the CPU engine's end cell."""
    from wavedp.engines.common import LOCAL
    from wavedp.engines.cuda import multipass

    rng = np.random.default_rng(shape[0] + shape[1])
    scoring = SCORINGS[alphabet]
    letters = PROTEIN if alphabet == "protein" else DNA
    for kind in ("related", "random"):
        q, t = _pair(rng, *shape, letters, kind)
        cpu = wavedp.align(q, t, scoring, traceback=False, device="cpu")
        want = (cpu.score, cpu.query_end, cpu.target_end) if cpu.score else (0, 0, 0)
        p = multipass.upload(scoring.encode(q), scoring.encode(t), scoring.table,
                             scoring.gap_open, scoring.gap_extend, LOCAL)
        for r in multipass.ROWS:
            for profile in ("int8", "int32"):
                for keyed in (False, True):
                    for cap in (None, 8):
                        out = multipass.sweep(p, 0, p.m, 0, p.n, rows_per_thread=r,
                                              profile=profile, keyed=keyed, blocks_per_sm=cap)
                        got = multipass.end_cell(p, out)
                        assert got == want, (kind, r, profile, keyed, cap)


@pytest.fixture
def pinning_in_small_steps(monkeypatch):
    """Checkpoints in host memory, pinned in 2 MB steps from scratch; yields hostmem."""
    from wavedp.engines.cuda import hostmem, multipass
    from wavedp.engines.cuda import traceback as gpu_traceback

    monkeypatch.setattr(multipass, "POISON", False)  # poisoning pins everything first
    monkeypatch.setattr(hostmem, "FIRST_CHUNK", 2 << 20)
    monkeypatch.setattr(hostmem, "LAST_CHUNK", 2 << 20)
    monkeypatch.setattr(gpu_traceback, "DEVICE_CHECKPOINTS", 0)
    hostmem.release()
    return hostmem


def test_traceback_while_host_memory_is_pinned(monkeypatch, pinning_in_small_steps):
    """A first traceback pins its checkpoint memory on a background thread in small steps
    while the forward sweep already writes the blocks pinned so far."""
    from helpers import rescore

    from wavedp.engines.cuda import traceback as gpu_traceback

    hostmem = pinning_in_small_steps
    monkeypatch.setattr(gpu_traceback, "SMALL_CELLS", 10**18)  # 2048-row blocks: 30 here
    rng = np.random.default_rng(11)
    a = random_seq(rng, DNA, 60000)
    b = related(rng, a, DNA, 0.1)
    real, calls = hostmem._register, []
    monkeypatch.setattr(hostmem, "_register", lambda ptr, size: (calls.append(size),
                                                                  real(ptr, size)))
    scoring = SCORINGS["dna"]
    first = wavedp.align(a, b, scoring, device="gpu")
    assert len(calls) >= 15  # the 30 blocks took 15 steps or more
    so = wavedp.align(a, b, scoring, device="gpu", traceback=False)
    assert (first.score, first.query_end, first.target_end) == (so.score, so.query_end,
                                                                 so.target_end)
    assert rescore(first, scoring) == first.score
    assert wavedp.align(a, b, scoring, device="gpu") == first  # the region reused


def test_failed_pinning_is_an_error_not_a_hang(monkeypatch, pinning_in_small_steps):
    """If page-locking fails part way, the running forward sweep is cancelled and the call
    raises at once; the next call starts a fresh region."""
    import time

    from wavedp.errors import DeviceError

    hostmem = pinning_in_small_steps
    real, calls = hostmem._register, []

    def register(ptr, size):
        calls.append(size)
        if len(calls) > 2:
            raise RuntimeError("out of page-locked memory")
        real(ptr, size)

    monkeypatch.setattr(hostmem, "_register", register)
    rng = np.random.default_rng(12)
    a = random_seq(rng, DNA, 60000)
    b = related(rng, a, DNA, 0.1)
    t0 = time.perf_counter()
    with pytest.raises(DeviceError, match="page-lock"):
        wavedp.align(a, b, SCORINGS["dna"], device="gpu")
    assert time.perf_counter() - t0 < 10
    monkeypatch.setattr(hostmem, "_register", real)
    cpu = wavedp.align(a[:9000], b[:9000], SCORINGS["dna"], device="cpu")
    assert wavedp.align(a[:9000], b[:9000], SCORINGS["dna"], device="gpu") == cpu


def test_cancelled_sweep_stops_within_32_columns():
    """A sweep whose only strip never waits still stops soon after the host cancels it (the
    traceback cancels the tiles the path has moved past this way)."""
    import time

    import cupy

    from wavedp.engines.common import LOCAL
    from wavedp.engines.cuda import multipass

    rng = np.random.default_rng(3)
    q = rng.integers(0, 4, 1024).astype(np.uint8)
    t = rng.integers(0, 4, 20_000_000).astype(np.uint8)  # one strip: about 8 s on an H100
    dna = SCORINGS["dna"]
    p = multipass.upload(q, t, dna.table, dna.gap_open, dna.gap_extend, LOCAL)
    cupy.cuda.Device().synchronize()
    t0 = time.perf_counter()
    out = multipass.sweep(p, 0, p.m, 0, p.n, rows_per_thread=32, wait=False)
    time.sleep(0.05)  # the flags' zeroing (on the sweep's stream) is done
    stream = cupy.cuda.Stream(non_blocking=True)
    multipass.cancel(out, stream)
    multipass.check(out)  # a cancel is not an error
    assert time.perf_counter() - t0 < 1.0


def test_best_cell_reduction_keeps_the_tie_rule():
    """The GPU reduction of end-cell candidates picks the largest score, then the smallest
    i, then the smallest j, across threads and warps."""
    import cupy

    from wavedp.engines.cuda import multipass

    rng = np.random.default_rng(8)
    for count in (1, 31, 1024, 5000):
        t = np.stack([rng.integers(0, 4, count), rng.integers(0, 50, count),
                      rng.integers(0, 50, count)], axis=1).astype(np.int32)
        want = t[np.lexsort((t[:, 2], t[:, 1], -t[:, 0]))[0]]
        got = multipass.best_cell(multipass.TRIPLES, cupy.asarray(t.ravel()), count=count)
        assert got == tuple(int(v) for v in want)
    m, n = 700, 900  # semi-global edges: many equal scores, row candidates after columns
    col, row = rng.integers(0, 3, m).astype(np.int32), rng.integers(0, 3, n).astype(np.int32)
    cand = [(0, 0, n)] + [(int(col[i - 1]), i, n) for i in range(1, m)] + \
        [(0, m, 0)] + [(int(row[j - 1]), m, j) for j in range(1, n + 1)]
    want = min(cand, key=lambda c: (-c[0], c[1], c[2]))
    assert multipass.best_cell(multipass.EDGES, cupy.asarray(col), cupy.asarray(row), m, n,
                               m + n + 1) == want
