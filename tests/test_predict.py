"""The performance predictor and the partition parameter, on the host (no GPU needed): the
model's terms, the calibration file's checks, and the commands."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import covered_once

import wavedp
import wavedp.cli as cli_module
from wavedp.dbsearch import predict
from wavedp.engines import calibration
from wavedp.engines.cpu import scan as cpu_scan
from wavedp.engines.cpu.scan import DEFAULT_CPU
from wavedp.engines.cuda.scan import calibrate, cost, planner, ranges, shapes
from wavedp.engines.cuda.scan import model as gpu_model_mod
from wavedp.engines.cuda.scan import partition as part
from wavedp.engines.cuda.scan import waves as ticket_waves
from wavedp.engines.cuda.scan.lines import Subjects, runs_of

PROT = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for cached in (gpu_model_mod.gpu_model, cpu_scan.cpu_model):  # read in this cache only
        cached.cache_clear()
    yield tmp_path / "cache" / "wavedp"
    for cached in (gpu_model_mod.gpu_model, cpu_scan.cpu_model):
        cached.cache_clear()


def test_scan_need_grows_with_every_argument():
    need = shapes.scan_need(24, 132)
    base = need(300, 4, 500, 1000)
    assert need(3000, 4, 500, 1000) > base and need(300, 8, 500, 1000) > base
    assert need(300, 4, 500, 2000) > base and need(3000, 4, 5000, 1000) > need(3000, 4, 500, 1000)
    assert need(3000, 1, 10**6, 1) <= shapes.SCRATCH_BYTES + 10**6  # scratch is capped


def test_planner_weighs_shapes_by_their_rate_and_fill():
    """Without rates the fewest padded lane-cells win; with them, a shape's time at its
    calibrated rate and the fill of its grid (a long subject's scratch rows cap the grid of a
    multi-pass launch, and fewer lanes per group mean more groups, so fewer blocks)."""
    model = gpu_model_mod.DEFAULT_GPU
    assert shapes.plan(600, 350.0, 24) == (16, 20, 2)
    fast = shapes.plan(600, 350.0, 24, cost.shape_rate(model, True, 100, 10**6, 350))
    assert fast[0] < 16  # narrower groups run more lane-cells per second on the H100
    rate = cost.shape_rate(model, True, 100, 10**6, 17_000)
    g, r, passes = shapes.plan(3000, 2000.0, 24, rate)
    narrow = shapes.launch_blocks(4, 100, 10**6, -(-3000 // 128), 17_000, 132)
    assert narrow < shapes.launch_blocks(g, 100, 10**6, passes, 17_000, 132) or g == 4


def test_few_tickets_per_block_are_timed_in_waves():
    """Profiles x one 35,000-residue subject in two passes: its scratch rows leave room for
    119 blocks of (16, 20), so 119 profiles take as long as one, and the 9 tickets past them
    start only as the first ones finish (a second wave)."""
    kernel = calibration.kernel_only(gpu_model_mod.DEFAULT_GPU)
    assert shapes.launch_blocks(16, 128, 1, 2, 35_000, 132) == 119

    def seconds(units: int) -> float:
        return cost.gpu_seconds(kernel, np.full(units, 600), np.array([35_000.0]), 24,
                                   True, (16, 20, 2))

    assert seconds(119) == pytest.approx(seconds(1), rel=0.02)
    assert seconds(128) == pytest.approx(2 * seconds(1), rel=0.05)


def test_waves_run_a_full_grid_at_the_full_rate_while_tickets_are_queued(monkeypatch):
    """The packing is calibrated with one ticket per block, whose blocks end apart; with
    tickets queued an SM stays full, at the full rate's speed. So a full grid of equal
    tickets, six per block, timed in waves comes out as its work at the full rate (plus its
    last round's tail), where the packing's last k alone says several percent slower."""
    bare = calibration.kernel_only(gpu_model_mod.DEFAULT_GPU, start=False)
    g, r = 4, 24
    blocks = shapes.launch_blocks(g, 12, 10**6, 1, 1_000, 132)
    count = 6 * blocks * (shapes.BLOCK // g) // 12  # six tickets per block
    m, n = np.full(12, 90), np.full(count, 1_000.0)
    speed = cost.speeds(bare, g, r, True)
    full = cost._rate(bare, g, r, True)
    slow = full / (132 * (shapes.BLOCK // g) * speed.size * speed[-1])
    assert slow > 1.03  # the packing's last k is slower than the full rate
    later = cost.later_shared(bare, g, speed.size)[-1]
    steady = cost._steady(bare, g, r, True, speed, later)
    assert steady == pytest.approx(slow * (1 + later) / 2)
    waves = cost.gpu_seconds(bare, m, n, 24, True, (g, r, 1))
    work = cost.gpu_work(m, n, (g, r, 1))[0]
    assert work / (full * steady) < waves < 1.12 * work / (full * steady)
    monkeypatch.setattr(cost, "WAVE_TICKETS", 0)  # the same launch by the full rate
    assert cost.gpu_seconds(bare, m, n, 24, True, (g, r, 1)) == pytest.approx(
        work / full, rel=1e-6)


def _tickets_one_by_one(work, alone, blocks, sms, speed, older, sm_major, steady):
    """waves' queue by its definition, one ticket at a time: block b on SM b mod sms; the
    block that ends first (ties: the lower) takes the next ticket; then each SM's blocks
    finish, the SM shared by those still sweeping."""
    n, most = work.shape
    resident = min(blocks, most * sms, n)
    sm = [b % sms for b in range(resident)]
    slot = [b // sms for b in range(resident)]
    count = [sm.count(s) for s in range(sms)]
    weight = [0.0] * sms
    for b in range(resident):
        weight[sm[b]] += ticket_waves.power(older, slot[b])
    k = [count[sm[b]] - 1 for b in range(resident)]
    rate = [steady[k[b]] * speed[k[b]] * ticket_waves.power(older, slot[b]) * count[sm[b]]
            / weight[sm[b]] for b in range(resident)]
    order = sorted(range(resident), key=lambda b: (sm[b], b)) if resident > sm_major * sms \
        else list(range(resident))
    last = [0] * resident
    for i, b in enumerate(order):
        last[b] = i
    start = [0.0] * resident
    end = [work[last[b], k[b]] / rate[b] for b in range(resident)]
    for i in range(resident, n):
        b = min(range(resident), key=lambda c: (end[c], c))
        start[b], last[b] = end[b], i
        end[b] += work[i, k[b]] / rate[b]
    taken = max(start)
    result = 0.0
    for s in range(sms):
        left = sorted(max(work[last[b], k[b]] - (taken - start[b]) * rate[b], 0.0)
                      for b in range(resident) if sm[b] == s)
        left = [0.0] * (most - len(left)) + left
        t, before = taken, 0.0
        for j in range(most):
            t += (left[j] - before) / speed[most - j - 1]
            before = left[j]
        result = max(result, t)
    return max([result] + [start[b] + alone[last[b]] for b in range(resident)])


@pytest.mark.parametrize("seed", range(6))
def test_the_ticket_queue_is_its_definition(seed):
    """waves' heap of block ends takes the tickets as the definition does, one by one: the
    first block to end (ties: the lower) takes the next; ties are forced by equal tickets."""
    rng = np.random.default_rng(seed)
    sms, most = int(rng.integers(1, 6)), int(rng.integers(1, 5))
    blocks = int(rng.integers(1, 3 * sms * most))
    n = int(rng.integers(1, 8 * blocks + 2))
    base = rng.choice([1.0, 2.0, 3.5], n)[:, None] if seed % 2 else rng.random((n, 1)) + 0.1
    work = base * (1 + np.arange(most))[None, :]
    alone = rng.random(n) * 3
    speed = np.sort(rng.random(most) + 0.5)[::-1].copy()
    steady = 1 + 0.1 * np.arange(most) / max(most - 1, 1)
    args = (work, alone, blocks, sms, speed, 0.8, 1.5, steady)
    assert ticket_waves._queue(*args) == pytest.approx(_tickets_one_by_one(*args), rel=1e-12)


def test_a_launch_adds_the_longer_of_the_host_and_the_gpu():
    """The host prepares a launch while the one before runs: a launch adds the longer of
    the host's work and its GPU work (kernel, its start, the work besides it); the first of
    a scan adds both (the pipeline's tests below)."""
    bare = calibration.kernel_only(gpu_model_mod.DEFAULT_GPU, start=False)
    m, n = np.full(4, 300), np.full(2_000, 300.0)
    kernel = cost.gpu_seconds(bare, m, n, 24, True)
    slow_host = dataclasses.replace(bare, launch=1.0, side=1e-4, word=1e-9)
    assert cost.launch_parts(slow_host, m, n, 24, True) == pytest.approx(
        (1.0, 1e-4 + 8e-6 + kernel))
    assert cost.gpu_seconds(slow_host, m, n, 24, True) == pytest.approx(1.0)
    fast_host = dataclasses.replace(slow_host, launch=1e-9)
    assert cost.gpu_seconds(fast_host, m, n, 24, True) == pytest.approx(
        1e-4 + 8e-6 + kernel)


def test_the_pipeline_of_host_and_gpu_by_hand():
    """Host-bound: every launch after the first adds the host's 1 s, the last its 5 s on the
    GPU once enqueued. GPU-bound: short launches after a long one were enqueued during it;
    the second adds its GPU time alone, the third waited for the second's copy first."""
    assert cost.pipelined([1, 1, 1], [0.1, 0.1, 5], 0.5) == pytest.approx([1.1, 1.0, 5.9])
    assert cost.pipelined([0.1] * 3, [5, 0.01, 0.01], 0.5) == pytest.approx(
        [5.1, 0.01, 0.05])
    need = shapes.scan_need(24, 132)
    model = dataclasses.replace(gpu_model_mod.DEFAULT_GPU, launch=1.0)
    _, batches, seconds = planner.schedule(model, "static", np.full(40, 300),
                                           np.r_[np.full(2_000, 300), 9_000], 24, True,
                                           need, 1 << 30)
    parts = [cost.launch_parts(model, np.full(40, 300)[b.queries],
                                  np.r_[np.full(2_000, 300), 9_000][b.subjects], 24, True)
             for b in batches]
    assert len(batches) == 2 and seconds[0] == pytest.approx(sum(parts[0]))
    assert seconds == pytest.approx(cost.pipelined([h for h, _ in parts],
                                                      [g for _, g in parts]))


def test_launches_too_short_for_the_host_join_the_one_before():
    """dynamic2 cuts a skewed set's subjects into length classes, each its own launch of the
    same units; the short classes' launches take less GPU time than the host needs to
    enqueue one, so each joins the launch before it: every pair still once, every launch
    within the budget, none left shorter on the GPU than on the host where it could join,
    and the schedule predicted no slower."""
    rng = np.random.default_rng(5)
    unit_m = np.sort(rng.integers(60, 90, 12))[::-1]
    subj_n = np.clip(rng.lognormal(np.log(150), 1.0, 8_000), 20, 5_000).astype(np.int64)
    need, budget = shapes.scan_need(24, 132), 1 << 30
    model = dataclasses.replace(gpu_model_mod.DEFAULT_GPU, launch=5e-4)
    raw = part.partition("dynamic2", unit_m, subj_n, budget, need)
    _, batches, seconds = planner.schedule(model, "dynamic2", unit_m, subj_n, 24, True, need,
                                           budget)
    covered_once(batches, unit_m.size, subj_n.size)
    assert len(batches) < len(raw)
    parts = [cost.launch_parts(model, unit_m[b.queries], subj_n[b.subjects], 24, True)
             for b in batches]
    for before, b, (host, gpu) in zip(batches[:-1], batches[1:], parts[1:], strict=True):
        q, s = unit_m[b.queries], subj_n[b.subjects]
        assert need(int(q.max()), q.size, int(s.max()), s.size) <= budget
        assert gpu >= host or not np.array_equal(b.queries, before.queries)
    unjoined = [cost.launch_parts(model, unit_m[b.queries], subj_n[b.subjects], 24, True)
                for b in raw]
    assert sum(seconds) <= sum(cost.pipelined([h for h, _ in unjoined],
                                                 [g for _, g in unjoined]))

    def pairs(lq, nq, ls, ns):  # a budget of pairs per launch
        return nq * ns

    pairs.affine = True
    _, batches, _ = planner.schedule(model, "dynamic2", unit_m, subj_n, 24, True, pairs, 6_000)
    covered_once(batches, unit_m.size, subj_n.size)
    assert max(b.queries.size * b.subjects.size for b in batches) <= 6_000


def test_a_launch_of_one_to_two_blocks_per_sm_takes_the_grid_predicted_faster():
    """Between one and two blocks per SM on its own grid, a launch runs on one block per SM
    where that is predicted faster (six passes of 160 long tickets), and is priced on the
    grid it gets; elsewhere, or with a grid forced, on its own."""
    rng = np.random.default_rng(1)
    model = gpu_model_mod.DEFAULT_GPU
    unit_m = np.array([2831, 2700, 2650, 2600])
    subj_n = np.sort(rng.integers(8_700, 17_420, 317))[::-1]
    shape = (16, 32, 6)
    own = shapes.launch_blocks(16, 4, 317, 6, int(subj_n.max()), 132)
    assert 132 < own < 264
    assert cost.launch_grid(model, unit_m, subj_n, True, shape) == 132
    seconds = {b: cost._kernel(model, unit_m, subj_n, True, shape)(b) for b in (own, 132)}
    assert seconds[132] < seconds[own]
    host, gpu = cost.launch_parts(model, unit_m, subj_n, 24, True, shape)
    assert gpu == pytest.approx(cost.side_seconds(model, 4, 317) + seconds[132])
    assert cost.launch_grid(calibration.capped(model, 150), unit_m, subj_n, True, shape) == 150
    short = np.full(2_000, 300)  # single-pass, many blocks per SM: its own grid
    assert cost.launch_grid(model, np.full(8, 300), short, True, (4, 24, 1)) == \
        shapes.launch_blocks(4, 8, 2_000, 1, 300, 132)


def test_the_wide_grid_choice_weighs_two_whole_numbers_of_blocks_per_sm_below():
    """The engine's wide choice: a multi-pass launch of two or more blocks per SM and at most
    WIDE_TICKETS tickets per block also weighs the two whole numbers of blocks per SM below
    its own grid, takes the one predicted fastest and is priced on it; ``schedule(wide=True)``
    prices the launches so, and ``auto`` ranks its candidates so."""
    model = gpu_model_mod.DEFAULT_GPU
    rng = np.random.default_rng(3)
    unit_m = np.array([5200, 4100, 3300, 2500])
    subj_n = np.sort(rng.integers(100, 6000, 693))[::-1]
    shape = cost.launch_shape(model, unit_m, subj_n, 24, True)
    own = shapes.launch_blocks(shape[0], 4, 693, shape[2], int(subj_n.max()), 132)
    assert shape[2] > 1 and 2 * 132 < own < 3 * 132
    seconds = {b: cost._kernel(model, unit_m, subj_n, True, shape)(b) for b in (own, 264, 132)}
    fastest = min(seconds, key=seconds.get)
    assert fastest != own
    assert cost.launch_grid(model, unit_m, subj_n, True, shape) == own
    assert cost.launch_grid(model, unit_m, subj_n, True, shape, wide=True) == fastest
    assert weighed(model, unit_m, subj_n, shape) == [own, 264, 132]
    _, gpu = cost.launch_parts(model, unit_m, subj_n, 24, True, shape, wide=True)
    assert gpu == pytest.approx(cost.side_seconds(model, 4, 693) + seconds[fastest])
    many = np.full(20, 5200)  # many tickets per block: the ticket queue spreads them
    assert len(weighed(model, many, subj_n, cost.launch_shape(model, many, subj_n, 24, True))) == 1
    need = shapes.scan_need(24, 132)
    budget = shapes.OUT_BYTES + shapes.SCRATCH_BYTES
    totals = {}
    for name in ("none", "auto"):
        picked, batches, narrow = planner.schedule(model, name, unit_m, subj_n, 24, True, need,
                                                   budget)
        picked, batches, wide = planner.schedule(model, name, unit_m, subj_n, 24, True, need,
                                                 budget, wide=True)
        parts = [cost.launch_parts(model, unit_m[b.queries], subj_n[b.subjects], 24, True,
                                      wide=True) for b in batches]
        assert wide == pytest.approx(cost.pipelined([h for h, _ in parts],
                                                       [g for _, g in parts]))
        totals[name] = sum(wide), sum(narrow)
    assert totals["none"][0] < totals["none"][1]
    assert totals["auto"][0] <= totals["none"][0] < totals["auto"][1]  # auto ranks wide


def weighed(model, unit_m: np.ndarray, subj_n: np.ndarray, shape) -> list[int]:
    """The grids the wide choice weighs for a launch (``cost.grids``), its own first."""
    g, _, passes = shape
    found = cost.grids(model, g, unit_m.size, subj_n.size, passes, int(subj_n.max()), True)
    return found[found > 0].tolist()


def test_blocks_share_their_multiprocessor(monkeypatch):
    """A group's rate depends on the blocks of its SM: blocks spread one per SM first, so
    1.25 blocks per SM with one ticket each take as long as 2 (the SMs holding two set the
    time), and the fill of a grid counts each SM at its own k (blocks sharing evenly)."""
    monkeypatch.setattr(ticket_waves, "OLDER_SHARE", 1.0)
    speed = [4.0, 2.4, 1.8, 1.4]  # a group's rate with k = 1..4 blocks on its SM
    model = dataclasses.replace(gpu_model_mod.DEFAULT_GPU, sms=132,
                                packing={"4,32,packed": speed})

    def fill(blocks: int) -> float:
        return float(cost.fills(model, True, cost._shape_index(4, 32), blocks))

    assert fill(4 * 132) == 1.0
    assert fill(10**6) == 1.0
    assert fill(132) == pytest.approx(4.0 / (4 * 1.4))
    assert fill(165) == pytest.approx(
        (99 * 4.0 + 33 * 2 * 2.4) / (132 * 4 * 1.4))
    ones = np.ones(1)

    def waves(tickets: int, resident: int) -> float:
        return ticket_waves.waves(np.full(tickets, 1.0), ones, (1.0, 1.0), 1, resident,
                                  np.array(speed), 1e9, sms=132)

    assert waves(165, 165) == pytest.approx(1 / 2.4) == waves(264, 264)
    assert waves(132, 132) == pytest.approx(1 / 4.0)
    assert waves(2 * 528, 528) == pytest.approx(2 / 1.4)  # two rounds, every SM full


def test_older_blocks_take_more_of_their_multiprocessor(monkeypatch):
    """Two SMs of three blocks (consecutive tickets per SM): the three longer tickets on SM
    0, the shorter ones on SM 1, two more shorter ones queued. Shared evenly, SM 1's blocks
    end together (t = 2.25) and take both queued tickets, which then run on SM 1 at k = 2
    and 1 (t = 3.75). Shared by age (0.8 per place: rates 0.492, 0.393, 0.315), the oldest
    blocks of SM 1 (t = 1.83) and SM 0 (t = 2.03) take one each, and SM 0 ends last, its
    blocks' 0.2, 0.36 and 0.9 left at t = 2.03 sharing it: 2.03 + 0.2 / 0.4 + 0.16 / 0.6 +
    0.54 / 1.0 = 3.34."""
    one = np.ones(1)
    speed = np.array([1.0, 0.6, 0.4])
    costs = np.array([1.0, 1.0, 1.0, 0.9, 0.9, 0.9, 0.9, 0.9])
    monkeypatch.setattr(ticket_waves, "OLDER_SHARE", 1.0)
    assert ticket_waves.waves(costs, one, (1.0, 1.0), 1, 6, speed, 1e9,
                              sms=2) == pytest.approx(3.75)
    monkeypatch.setattr(ticket_waves, "OLDER_SHARE", 0.8)
    assert ticket_waves.waves(costs, one, (1.0, 1.0), 1, 6, speed, 1e9, sms=2) == pytest.approx(
        3.34, abs=2e-3)


def test_the_last_tickets_speed_up_as_their_multiprocessor_empties():
    """Two blocks on one SM: the short ticket ends first, then the long one runs alone, at
    the rate of one block; a sweep alone bounds every ticket from below."""
    speed = np.array([1.0, 0.5])
    one = np.ones(1)
    assert ticket_waves.waves(np.array([10.0, 1.0]), one, (1.0, 1.0), 1, 2, speed, 1e9,
                              sms=1) == pytest.approx(2.0 + 9.0)
    assert ticket_waves.waves(np.array([10.0, 1.0]), one, (1.0, 1.0), 1, 2, speed, 0.5,
                              sms=1) == pytest.approx(20.0)  # alone, 10 lane-cells at 0.5
    # three tickets: the third starts as the short one ends (t = 2) and shares the SM with
    # the long one (3 left) until t = 4; the long one then ends alone at 1 per second
    assert ticket_waves.waves(np.array([4.0, 1.0, 1.0]), one, (1.0, 1.0), 1, 2, speed, 1e9,
                              sms=1) == pytest.approx(2.0 + 2.0 + 2.0)


def test_packing_calibration_recovers_rates_start_and_later_passes(monkeypatch):
    """The k-blocks-per-SM calibration, on launch times made from known constants: each
    shape's rate per k, the kernel's fixed start (a line through two lengths) and the later
    pass per G and k come back as they went in."""
    start, single = 3e-5, 1e9

    def truth(g: int, r: int, k: int) -> float:  # a group's lane-cells/s with k blocks
        return single * (1 + r / 64) / (1 + 0.6 * (k - 1))

    def later(g: int, k: int) -> float:
        return 1.12 - 0.01 * k + 0.001 * g

    def fake(lengths, runs, seed=0, repeats=3):
        found = []
        for m, g, r, passes, packed, first, count, units, cap in runs:
            k = cap // 132
            assert packed and units == 1 and count == k * 132 * (shapes.BLOCK // g)
            assert m == passes * g * r  # a query of whole passes
            cells = cost.pass_cells(float(lengths[first]), g, g * r)
            found.append((start + cells / truth(g, r, k) * (1 + later(g, k) * (passes - 1)),
                          1.0))
        return found

    monkeypatch.setattr(calibrate, "occupancy", lambda g, r, packed, alphabet=24: 2 + r // 16)
    monkeypatch.setattr(calibrate, "calibration", fake)
    packing, shared, fitted = calibrate._packing(lambda _: None, 132)
    assert fitted == pytest.approx(start, rel=1e-6)
    assert set(packing) == {f"{g},{r},packed" for g in shapes.GROUPS
                            for r in shapes.ROWS if 4 * 24 * g * r <= shapes.PROFILE_BYTES}
    for key, rates in packing.items():
        g, r = (int(x) for x in key.split(",")[:2])
        assert rates == pytest.approx([truth(g, r, k) for k in range(1, 3 + r // 16)])
    for g, values in shared.items():
        assert values == pytest.approx([later(int(g), k) for k in range(1, len(values) + 1)])


def test_host_costs_are_fitted_non_negative():
    """The host-cost fit keeps every cost >= 0 and is the constrained optimum: no
    non-negative vector does better (checked against a dense grid), and clipping the free
    fit's negative term is worse where that term is negative."""
    rng = np.random.default_rng(3)
    a = np.c_[np.ones(40), rng.uniform(1, 50, 40), rng.uniform(0, 1e6, 40) / 1e5]
    b = a @ np.array([1.0, -0.02, 0.3]) + rng.normal(0, 0.05, 40)  # a negative true slope
    free = np.linalg.lstsq(a, b, rcond=None)[0]
    assert free[1] < 0
    x = calibrate.nonnegative_fit(a, b)
    assert np.all(x >= 0) and x[1] == 0

    def cost(v):
        return float(np.sum((a @ v - b) ** 2))

    assert cost(x) < cost(np.maximum(free, 0.0))
    grid = np.linspace(0, 2, 41)
    assert all(cost(x) <= cost(np.array([p, q, r])) + 1e-9
               for p in grid for q in grid[:5] / 10 for r in grid)
    # an unconstrained optimum that is already non-negative is returned as it is
    good = a @ np.array([1.0, 0.01, 0.3])
    assert np.allclose(calibrate.nonnegative_fit(a, good), [1.0, 0.01, 0.3])
    assert np.all(calibrate.nonnegative_fit(a, -good) == 0)


def test_model_terms():
    model = gpu_model_mod.DEFAULT_GPU
    short = np.full(10_000, 300)
    t1 = cost.gpu_seconds(model, np.array([500, 400]), short, 24, True)
    t2 = cost.gpu_seconds(model, np.array([500, 400]), np.full(20_000, 300), 24, True)
    assert model.launch < t1 < t2 < 2 * t1  # linear work plus a fixed cost
    shape = shapes.plan(5000, 35_000.0, 24, cost.shape_rate(model, True, 1, 1, 35_000))
    lone = cost.gpu_seconds(model, np.array([5000]), np.array([35_000]), 24, True)
    assert lone == cost.gpu_seconds(model, np.array([5000]), np.array([35_000]), 24, True,
                                       shape)  # the shape the engine plans
    work, critical = cost.gpu_work(np.array([5000]), np.array([35_000]), shape)
    g, r, _ = shape
    assert work == critical and lone >= critical / cost._single(model, g, r)  # its own path
    mixed = np.concatenate([short, [35_000]])
    assert cost.gpu_seconds(model, np.array([5000]), mixed, 24, True) >= lone


def test_skewed_sets_in_the_model():
    """One 35,000-residue subject among 20,000 of 200-600: in one launch (none, in file
    order, or dynamic1) its sweep for the last profiles starts late and runs alone, and in
    file order every block waits for its longest subject; static gives it a launch of its
    own, which the model ranks first; auto picks the least."""
    rng = np.random.default_rng(3)
    subjects = rng.integers(200, 601, 20_001)
    subjects[1234] = 35_000
    plans = predict.search_plan(gpu_model_mod.DEFAULT_GPU,
                                [int(x) for x in rng.integers(200, 601, 200)], subjects, 24,
                                True, 2e13)
    totals = {name: sum(r[3] for r in rows) for name, rows in plans.items()}
    assert set(totals) == {"none", *planner.CANDIDATES}
    assert totals["static"] < 0.8 * totals["none"] and totals["dynamic1"] < totals["none"]
    need = shapes.scan_need(24, 132)
    unit_m = np.sort(rng.integers(200, 600, 20))[::-1]
    best, _, seconds = planner.schedule(gpu_model_mod.DEFAULT_GPU, "auto", unit_m, subjects, 24,
                                        True, need, 1 << 30)
    found = planner.schedules(gpu_model_mod.DEFAULT_GPU, unit_m, subjects, 24, True, need, 1 << 30)
    assert sum(found[best][1]) == sum(seconds) == min(sum(s) for _, s in found.values())


def test_calibration_file_of_another_device_or_version_is_an_input_error(cache):
    model = dataclasses.replace(DEFAULT_CPU, device=calibration.device_name("cpu"),
                                version=calibration.model_version(), calibrated=True)
    path = calibration.save(model)
    assert calibration.load("cpu") == model
    for field, value, needle in (("device", "another CPU, 2 cores", "calibrated on another"),
                                 ("version", "0.0.1 (format 0)", "calibrated with wavedp")):
        with open(path, "w") as f:
            json.dump({**dataclasses.asdict(model), field: value}, f)
        with pytest.raises(wavedp.InputError, match=f"file {path}: {needle}"):
            calibration.load("cpu")
    with open(path, "w") as f:
        f.write("{not json")
    with pytest.raises(wavedp.InputError, match="not a wavedp calibration"):
        calibration.load("cpu")
    result = CliRunner().invoke(cli_module.cli, ["search", "--device", "cpu", "--explain",
                                                 str(path), str(path)])
    assert result.exit_code == 2


def test_calibrate_and_predict_commands(cache, tmp_path):
    result = CliRunner().invoke(cli_module.cli, ["calibrate", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert "GCUPS on every core" in result.output
    assert (cache / "calibration-cpu.json").exists()
    rng = np.random.default_rng(5)
    q, db = tmp_path / "q.fa", tmp_path / "db.fa"
    q.write_text("".join(f">q{k}\n{'ACDEFGHIKLMNPQRSTVWY' * int(n)}\n"
                         for k, n in enumerate(rng.integers(1, 40, 12))))
    db.write_text("".join(f">s{k}\n{'MKV' * int(n)}\n"
                          for k, n in enumerate(rng.integers(30, 200, 3000))) + ">long\n"
                  + "W" * 35_000 + "\n")
    result = CliRunner().invoke(cli_module.cli, ["predict", str(q), str(db)])
    assert result.exit_code == 0, result.output
    totals = [line for line in result.output.splitlines() if line.count("|") == 4]
    assert {line.split("|")[1].split()[0] for line in totals[2:]} == set(part.SCHEDULERS)
    assert sum("(auto)" in line for line in totals) == 1
    result = CliRunner().invoke(cli_module.cli, ["predict", "--device", "cpu", str(q), str(db)])
    assert result.exit_code == 0 and "predicted scan" in result.output
    result = CliRunner().invoke(cli_module.cli, ["search", "--device", "cpu", "--explain",
                                                 str(q), str(db)])
    assert result.exit_code == 0 and "CPU scan predicted" in result.output


@pytest.mark.parametrize("args", [["--partition", "fastest"], ["--partition", ""]])
def test_unknown_partition_is_one_line(tmp_path, args):
    q = tmp_path / "q.fa"
    q.write_text(">q\nACDEFGHIK\n")
    result = CliRunner().invoke(cli_module.cli, ["search", str(q), str(q), *args])
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1].startswith("wavedp: error: partition must be")
    with pytest.raises(wavedp.InputError, match="partition must be one of"):
        wavedp.search(["ACDE"], ["ACDE"], PROT, device="cpu", partition="fastest")


def test_collector_paused_restores_the_collector():
    """The launch timings pause Python's garbage collector and give it back as it was, also
    when the timed code raises."""
    import gc

    assert gc.isenabled()
    with calibrate.collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), calibrate.collector_paused():
        raise RuntimeError("launch failed")
    assert gc.isenabled()
    gc.disable()
    try:
        with calibrate.collector_paused():
            pass
        assert not gc.isenabled()  # left off, as it was
    finally:
        gc.enable()


def test_the_benchmark_sets_repeated_launches_against_each_other():
    """benchmarks/partitioning.py: where auto runs another partitioning's launches, one
    measurement of each launch is taken as the other's prediction (the best a model of one
    run could do on the other); nothing is said where the launches differ."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).parents[1] / "benchmarks" / "partitioning.py"
    spec = importlib.util.spec_from_file_location("partitioning_benchmark", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    named = [("dynamic2", 4, 100, 0.005, 0.0055), ("dynamic2", 3, 50, 0.010, 0.0100)]
    again = [("dynamic2", 4, 100, 0.005, 0.0045), ("dynamic2", 3, 50, 0.010, 0.0104)]
    line = bench.repeatability({"dynamic2": named, "auto": again})
    assert line.startswith("auto ran dynamic2's 2 launches again")
    assert "within 15% for 1/2" in line and "worst -18.2%" in line
    assert bench.repeatability({"dynamic2": named, "auto": again[:1]}) is None
    assert bench.repeatability({"static": named, "auto": [("static", 1, 1, 1.0, 1.0)]}) is None
    assert bench.repeatability({"dynamic2": named}) is None


def test_a_long_sorted_launch_is_priced_on_its_runs_as_on_all_its_subjects():
    """Launches of 300,000 subjects longest first and of a range of them, priced on the runs
    of their lengths: the GPU seconds within 1% of their pricing on every subject, the same
    kernel shape, grid and host seconds."""
    rng = np.random.default_rng(5)
    lengths = np.sort(np.clip(rng.lognormal(np.log(300), 0.65, 300_000), 8, 35_000)
                      .astype(np.int64))[::-1]
    units = np.array([1000, 700, 500, 400, 300, 250, 200, 150, 100, 50])
    model = gpu_model_mod.DEFAULT_GPU
    runs = ranges.Runs(runs_of(lengths))
    spans = [(0, lengths.size), (2_500, lengths.size)]
    found = ranges.priced(model, units, [(np.arange(units.size), *s) for s in spans], runs,
                          24, True, wide=True)
    for (start, stop), priced in zip(spans, found, strict=True):
        whole = cost.priced(model, units, lengths[start:stop], 24, True, wide=True)
        assert priced.gpu == pytest.approx(whole.gpu, rel=0.01)
        assert (priced.shape, priced.blocks, priced.host) == \
            (whole.shape, whole.blocks, whole.host)


def test_launches_priced_at_once_are_priced_as_each_alone():
    """The formula (``cost.kernel_seconds``) times many launches at once, each as if alone:
    launches of units in any order (fewer passes before more, and after), of ranges that
    overlap, priced on their runs all together and one by one."""
    rng = np.random.default_rng(9)
    lengths = np.sort(np.clip(rng.lognormal(np.log(300), 1.0, 200_000), 8, 35_000)
                      .astype(np.int64))[::-1]
    unit_m = np.array([300, 5000, 120, 2600, 2600, 900, 4100, 60])
    launches = [(np.arange(8), 0, 200_000), (np.array([2, 0, 5]), 1_000, 9_000),
                (np.array([6, 1, 3, 4]), 150_000, 200_000), (np.array([7]), 199_990, 200_000),
                (np.arange(8)[::-1].copy(), 20, 60_000), (np.array([2, 7]), 0, 40),
                (np.array([1, 0]), 10, 300), (np.array([3, 6]), 5, 200)]
    model, runs = gpu_model_mod.DEFAULT_GPU, ranges.Runs(runs_of(lengths))
    together = ranges.priced(model, unit_m, launches, runs, 24, True, wide=True)
    for launch, found in zip(launches, together, strict=True):
        alone = ranges.priced(model, unit_m, [launch], runs, 24, True, wide=True)[0]
        assert (found.shape, found.blocks) == (alone.shape, alone.blocks)
        assert (found.host, found.gpu) == pytest.approx((alone.host, alone.gpu), rel=1e-12)


def test_auto_ranks_the_candidates_on_their_runs(monkeypatch):
    """``auto`` prices each candidate's launches on their runs, all of them at once, and
    prices launches on their subjects only once it has chosen: those of at most EXACT
    subjects of the partitioning chosen, the plan as if named."""
    rng = np.random.default_rng(7)
    lengths = np.clip(rng.lognormal(np.log(300), 1.0, 300_000), 8, 35_000).astype(np.int64)
    unit_m = np.array([2400, 1800, 900, 600, 300, 150])
    need, budget = shapes.scan_need(24, 132), shapes.OUT_BYTES + shapes.SCRATCH_BYTES
    model = gpu_model_mod.DEFAULT_GPU
    calls: list[tuple[str, int]] = []
    on_runs, on_subjects, ranking = ranges.priced, planner.priced, planner._candidates
    monkeypatch.setattr(ranges, "priced",
                        lambda *a, **k: calls.append(("runs", len(a[2]))) or on_runs(*a, **k))
    monkeypatch.setattr(planner, "priced", lambda model, unit_m, subj_n, *a, **k:
                        calls.append(("subjects", subj_n.size)) or on_subjects(
                            model, unit_m, subj_n, *a, **k))
    monkeypatch.setattr(planner, "_candidates", lambda *a, **k: (
        ranking(*a, **k), calls.append(("chosen", 0)))[0])
    found = planner.plan(model, "auto", unit_m, lengths, Subjects.of(lengths), 24, True,
                         need, budget=budget, wide=True)
    chosen = calls.index(("chosen", 0))
    assert {kind for kind, _ in calls[:chosen]} == {"runs"}
    assert sum(n for _, n in calls[:chosen]) > 2 * len(found.batches)  # each candidate's
    later = [n for kind, n in calls[chosen + 1:] if kind == "subjects"]
    assert len(later) >= sum(b.subjects.size <= planner.EXACT for b in found.batches) > 0
    assert max(later) <= planner.EXACT
    named = planner.schedule(model, found.name, unit_m, lengths, 24, True, need, budget,
                             wide=True)
    assert named[2] == found.seconds


def test_a_stored_order_is_planned_without_sorting(monkeypatch):
    """Given the subjects sorted (as a database stores them), the planner sorts none of them:
    its launches are slices of that order, the same as :func:`schedule` cuts from the
    lengths."""
    rng = np.random.default_rng(2)
    lengths = rng.integers(1, 3000, 50_000)
    subjects = Subjects.of(lengths)
    unit_m = np.array([900, 400, 120])
    need, budget = shapes.scan_need(24, 132), 1 << 30
    model = gpu_model_mod.DEFAULT_GPU
    expected = planner.schedule(model, "auto", unit_m, lengths, 24, True, need, budget)

    def refused(*args, **kwargs):
        raise AssertionError("sorted the subjects")

    monkeypatch.setattr(Subjects, "of", refused)
    found = planner.plan(model, "auto", unit_m, lengths, subjects, 24, True, need,
                         budget=budget)
    assert found.name == expected[0] and found.seconds == expected[2]
    for batch, other in zip(found.batches, expected[1], strict=True):
        assert np.array_equal(batch.subjects, other.subjects)
        assert batch.subjects.base is subjects.order  # a slice of the stored order
    assert found.longest == [int(lengths[b.subjects].max()) for b in found.batches]


def test_auto_prices_every_candidate_once_per_database_build(tmp_path, monkeypatch):
    """A scanner of a database build keeps ``auto``'s choice (``choices.py``): a later one of
    the same build and query shape prices only that partitioning, with the same launches; a
    new build, or other query lengths, chooses again; an unreadable file is ignored."""
    from wavedp.engines.cuda.scan import choices
    from wavedp.engines.cuda.scan.chunks import Chunk
    from wavedp.engines.cuda.scan.scanner import Scanner

    monkeypatch.setattr(choices, "path", lambda: str(tmp_path / "choices.json"))
    rng = np.random.default_rng(4)
    offsets = np.concatenate([[0], np.cumsum(rng.integers(0, 900, 30_000))])
    priced = []
    candidates = planner._candidates
    monkeypatch.setattr(planner, "_candidates",
                        lambda *a, **k: priced.append(1) or candidates(*a, **k))

    def plan(identity, lengths=(300, 120, 60)):
        scanner = Scanner(np.zeros(int(offsets[-1]), np.uint8), offsets, None,
                          np.eye(24, dtype=np.int32), 11, 1, 0, model=gpu_model_mod.DEFAULT_GPU,
                          device=0, multiprocessors=132, identity=identity)
        units = [[np.zeros(n, np.uint8)] for n in lengths]
        return scanner.batches(Chunk(0, offsets.size - 1, offsets), units)

    first = plan("data-1")
    again = plan("data-1")
    assert len(priced) == 1 and again.name == first.name and again.seconds == first.seconds
    assert [b.subjects.tolist() for b in again.batches] == \
        [b.subjects.tolist() for b in first.batches]
    plan("data-2")
    plan("data-1", (300, 120, 80, 40))
    assert len(priced) == 3
    (tmp_path / "choices.json").write_text("{not json")
    plan("data-1")
    assert len(priced) == 4 and choices.lookup("nothing") is None
    # one or two units (a one-query search): static, nothing priced against it, nothing kept
    for lengths in ((300,), (300, 120)):
        assert plan("data-1", lengths).name == "static"
    assert len(priced) == 4
    plan(None)  # in memory: nothing kept
    assert len(priced) == 5


def test_auto_prunes_only_candidates_that_cannot_win():
    """``auto`` prices a candidate until its GPU seconds and its planning pass the best total
    so far: its choice is the least total (scan and planning) of every candidate priced in
    full, on skewed lengths where the candidates' launch counts differ tenfold."""
    rng = np.random.default_rng(9)
    lengths = np.clip(rng.lognormal(np.log(300), 0.65, 200_000), 8, 35_000).astype(np.int64)
    subjects = Subjects.of(lengths)
    unit_m = np.sort(rng.integers(100, 5000, 10))[::-1].astype(np.int64)
    need = shapes.scan_need(24, 132)
    budget = shapes.OUT_BYTES + shapes.SCRATCH_BYTES
    model = gpu_model_mod.DEFAULT_GPU
    price = planner._pricing(model, unit_m, lengths, subjects, 24, True, True)
    full = {name: planner._priced(price, name, need, budget, np.inf, False)
            for name in planner.CANDIDATES}
    want = min(full, key=lambda name: planner._total(full[name][1]))
    assert planner.plan(model, "auto", unit_m, lengths, subjects, 24, True, need,
                        budget=budget, wide=True).name == want
    pruned = planner._candidates(price, need, budget)
    assert any(parts is None for _, parts in pruned.values())  # something was pruned
    for name, (_, parts) in pruned.items():  # only what could not win
        assert parts is not None or planner._total(full[name][1]) > \
            planner._total(full[want][1])
