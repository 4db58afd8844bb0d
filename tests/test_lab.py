"""The lab (wavedp.lab): synchronization strategies, their kernels, the time model, reports.

CPU tests check the model, the argument handling, the co-residency logic and report writing
from synthetic numbers; ``gpu`` tests check every strategy on the device (exact FFT, sort and
Smith-Waterman, barrier stress, the co-residency refusal, a stuck barrier raising)."""

from __future__ import annotations

import math
import re
import shutil
from importlib import resources

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import DNA, MODE_NAMES, PROTEIN, random_seq, related

import wavedp
from wavedp.cli import cli
from wavedp.engines.cuda import sync as syncs
from wavedp.errors import DeviceError, InputError
from wavedp.lab import barriers, claims, commands, model, suite

IN_KERNEL = ("simple", "tree2", "tree3", "lockfree", "grid", *syncs.TUNED)
TIMEOUT_CAPABLE = ("simple", "tree2", "tree3", "lockfree", *syncs.TUNED)


def defines(name: str) -> dict[str, str]:
    text = resources.files("wavedp.kernels").joinpath(name).read_text()
    return dict(re.findall(r"^#define (\w+) (.+?)(?:\s*//.*)?$", text, re.M))


def evaluate(expr: str, known: dict[str, str]) -> int:
    return eval(re.sub(r"[A-Z_]+", lambda m: f"({evaluate(known[m[0]], known)})", expr))


# --- CPU: constants, model, arguments, co-residency, reports --------------------------------

def test_barrier_constants_match_the_header():
    known = defines("barriers.cuh")
    assert evaluate("BAR_WORDS", known) == syncs.BAR_WORDS
    assert evaluate("BAR_MAX_BLOCKS", known) == syncs.BAR_MAX_BLOCKS
    kinds = {k[len("SYNC_"):].lower(): int(v) for k, v in known.items() if k.startswith("SYNC_")}
    assert kinds == {**syncs.KINDS, **syncs.TUNED_KINDS}
    assert syncs.BARRIER_SYNCS == syncs.SYNCS + syncs.TUNED == (*syncs.SYNCS, *syncs.TUNED_KINDS)
    assert evaluate("ERR_NO_GRID", known) == syncs.ERR_NO_GRID
    assert evaluate("SPREAD_LINES", known) == model.SPREAD_LINES["spread"]
    # the tree levels' counters fit their slots for the largest grid served
    assert math.isqrt(syncs.BAR_MAX_BLOCKS - 1) + 1 <= evaluate("BAR_GROUPS", known)


def test_every_launched_instance_is_compiled():
    from wavedp.engines.cuda.module import KERNELS

    kinds = syncs.KINDS.values()
    wanted = {
        "lab_barriers.cu": {"mean_step", "stress_step", *(f"mean_rounds<{k}>" for k in kinds),
                            *(f"stress_rounds<{k}>" for k in kinds if k)},
        "lab_fft.cu": {"fft_stage", *(f"fft_stages<{k}>" for k in kinds)},
        "lab_sort.cu": {f"sort_step<{t}>" for t in ("int", "float")}
        | {f"sort_steps<{t}, {k}>" for t in ("int", "float") for k in kinds},
        "diagonal.cu": {f"diagonal_step<{s}>" for s in (0, 1)}
        | {f"diagonal_sweep<{s}, {k}>" for s in (0, 1) for k in kinds},
        "tiled.cu": {"tiled_step", *(f"tiled_sweep<{k}>" for k in kinds)},
    }
    for name, expressions in wanted.items():
        assert expressions <= set(KERNELS[name]), name
    # wavedp's own barriers: plain-named kernels of lab_barriers.cu, outside the instances
    text = resources.files("wavedp.kernels").joinpath("lab_barriers.cu").read_text()
    for sync in syncs.TUNED:
        assert re.search(rf"^TUNED_KERNELS\({sync}, SYNC_{sync.upper()}\)$", text, re.M), sync
        for kernel in ("mean_rounds", "stress_rounds"):
            assert barriers.expression(kernel, sync) == f"{kernel}_{sync}"
    assert barriers.expression("mean_rounds", "lockfree") == "mean_rounds<4>"


def test_tree_widths_follow_the_sqrt_grouping():
    assert model.tree_widths(1, 2) == [1, 1]
    assert model.tree_widths(132, 2) == [11, 12]
    assert model.tree_widths(1056, 3) == [32, 6, 6]
    for blocks in (1, 2, 7, 132, 1056, syncs.BAR_MAX_BLOCKS):
        for levels in (2, 3):
            widths = model.tree_widths(blocks, levels)
            assert math.prod(widths) >= blocks and len(widths) == levels


def test_fits_recover_the_equations_parameters():
    n = np.array([1, 2, 4, 8, 16, 32, 64, 132, 264, 528, 1056])
    simple = model.fit("simple", n, 0.004 * n + 0.6)
    assert np.allclose(simple.coef, [0.004, 0.6]) and simple.r2 > 0.999
    widths = np.array([sum(model.tree_widths(int(b), 2)) for b in n])
    tree = model.fit("tree2", n, 0.01 * widths + 2 * 0.3)
    assert np.allclose(tree.coef, [0.01, 0.3]) and tree.equation == "(7)"
    lockfree = model.fit("lockfree", n, 0.2 * np.ceil(n / 256) + 0.7, threads=256)
    assert np.allclose(lockfree.coef, [0.2, 0.7])
    for sync, lines in model.SPREAD_LINES.items():
        spread = model.fit(sync, n, 0.001 * np.ceil(n / lines) + 0.5)
        assert np.allclose(spread.coef, [0.001, 0.5]) and spread.equation == "(6) / K"
    launch = model.fit("cpu-implicit", n, np.full(n.size, 4.0))
    assert np.allclose(launch.predict([3, 3000]), 4.0) and math.isnan(launch.r2)
    assert "t_a = 0.004 us" in simple.describe()


def test_speedup_and_kernel_time():
    assert model.speedup(0.5, 2.0) == pytest.approx(4 / 3)
    assert model.speedup(1.0, 10.0) == 1.0
    assert model.speedup(0.0, 3.0) == pytest.approx(3.0)
    assert model.kernel_time(5.0, 1.0, 2.0, 10) == 35.0
    assert model.flat([1, 8, 64, 1056], [9.0, 1.0, 1.1, 1.2])
    assert not model.flat([8, 64, 1056], [1.0, 1.1, 2.0])
    assert not model.flat([1, 2, 4], [1.0, 1.0, 1.0])  # nothing from 8 blocks on


def test_co_resident_limit_and_refusal(monkeypatch):
    assert syncs.co_resident_limit(8, 132) == 1056
    assert syncs.co_resident_limit(64, 1000) == syncs.BAR_MAX_BLOCKS
    syncs.check_blocks(264, 264, "lockfree")
    with pytest.raises(InputError, match="at most 264 blocks"):
        syncs.check_blocks(265, 264, "lockfree")
    with pytest.raises(InputError, match="at least 1"):
        syncs.check_blocks(0, 264, "simple")
    # a launcher asks the occupancy API first and refuses before touching the GPU
    monkeypatch.setattr(syncs, "co_resident", lambda kern, threads, shared=0: 264)
    with pytest.raises(InputError, match="at most 264 blocks"):
        syncs.Persistent("tree3", None, 265, 256, ())


def test_argument_validation():
    with pytest.raises(InputError, match="sync must be one of"):
        syncs.check_sync("fast")
    with pytest.raises(InputError, match="sync must be one of"):
        syncs.HostSteps("lockfree", [])
    from wavedp.lab import fft, sort, swat

    assert fft.log2_length(1 << 20) == 20
    for bad in (0, 1, 1000):
        with pytest.raises(InputError, match="power of two"):
            fft.log2_length(bad)
    assert len(sort.merge_steps(3)) == 6 and sort.merge_steps(0) == []
    with pytest.raises(InputError, match="implementation"):
        swat.check_implementation("striped")
    from wavedp.engines.cuda import diagonal

    with pytest.raises(InputError, match="storage"):
        diagonal.check_storage("packed")
    with pytest.raises(InputError):
        suite.validate(suite.Settings(fft_sizes=(1000,)))
    with pytest.raises(InputError):
        suite.validate(suite.Settings(dtypes=("int64",)))
    suite.validate(suite.Settings())
    suite.validate(suite.QUICK)


def test_parse_counts():
    assert commands.parse_counts("1,2,2^3", "--blocks") == (1, 2, 8)
    assert commands.parse_counts("2^2..2^5", "--sizes") == (4, 8, 16, 32)
    assert commands.parse_counts("3000, 100000", "--sizes") == (3000, 100000)
    for bad in ("", "0", "x", "2^", "-4", "3..8", "2^5..2^2"):
        with pytest.raises(InputError):
            commands.parse_counts(bad, "--blocks")
    assert commands.parse_names("simple,grid", syncs.SYNCS, "--syncs") == ("simple", "grid")
    with pytest.raises(InputError, match="'fast' is not one of"):
        commands.parse_names("simple,fast", syncs.SYNCS, "--syncs")


@pytest.mark.parametrize("args", [
    ["lab", "barriers", "--out", "OUT", "--blocks", "1,x"],
    ["lab", "fft", "--out", "OUT", "--sizes", "1000"],
    ["lab", "sort", "--out", "OUT", "--syncs", "simple,fast"],
    ["lab", "swat", "--out", "OUT", "--sweep-size", "2^10,2^12"],
    ["lab", "barriers", "--out", "OUT", "--threads", "2000"],
    ["lab", "energy", "--out", "OUT", "--cudasw4", "/no/such/align"],
    ["lab", "all", "--out", "OUT", "--quick", "--cudasw4", "/no/such/align"],
])
def test_cli_bad_input_is_one_line(args, tmp_path):
    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("wavedp: error: "), result.stderr
    assert not (tmp_path / "out").exists()


def test_cli_lab_without_gpu_is_one_line(monkeypatch, tmp_path):
    from wavedp import device

    monkeypatch.setattr(device, "gpu_status", lambda: (False, "no CUDA device"))
    result = CliRunner().invoke(cli, ["lab", "all", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "wavedp: error: device 'gpu' requested but no GPU is usable: no CUDA device"]


def test_lab_options_need_the_gpu_engine():
    scoring = wavedp.Scoring(match=1, mismatch=-1, gap_open=2, gap_extend=1)
    for options in ({"sync": "lockfree"}, {"strategy": "tiled"}, {"storage": "simple"}):
        with pytest.raises(InputError, match="GPU engine only"):
            wavedp.align("ACGT", "ACGT", scoring, device="cpu", traceback=False, **options)


def _synthetic() -> dict[str, list[dict]]:
    """Measurement rows shaped like the lab's, from the model with made-up parameters."""
    costs = {"cpu-explicit": lambda n: 14.0, "cpu-implicit": lambda n: 3.5,
             "graph": lambda n: 1.6, "simple": lambda n: 0.5 + 0.004 * n,
             "tree2": lambda n: 0.9 + 0.01 * sum(model.tree_widths(n, 2)),
             "tree3": lambda n: 1.2 + 0.01 * sum(model.tree_widths(n, 3)),
             "lockfree": lambda n: 0.8 + 0.02 * math.ceil(n / 256),
             "grid": lambda n: 0.9 + 0.0012 * n,
             "spread": lambda n: 0.6 + 0.001 * math.ceil(n / 8)}
    barriers = [{"sync": s, "blocks": n, "threads": 256, "rounds": 1000,
                 "seconds": (0.3 + f(n)) * 1e-3, "round_us": 0.3 + f(n), "compute_us": 0.3,
                 "barrier_us": f(n)}
                for n in (1, 2, 4, 8, 16, 32, 64, 132, 264, 528, 1056) for s, f in costs.items()]

    def algorithm(size: int, blocks: int, steps: int, compute: float, sweep: str, **extra):
        return [{**extra, "size": size, "m": size, "n": size, "blocks": blocks, "sync": s,
                 "seconds": compute + steps * f(blocks) * 1e-6, "compute": compute,
                 "anchor": compute / 4, "steps": steps, "exact": True, "sweep": sweep,
                 "gcups": size * size / (compute + steps * f(blocks) * 1e-6) / 1e9}
                for s, f in costs.items()]

    fft = [r for b in (8, 132, 1056) for r in algorithm(1 << 20, b, 21, 2e-4, "blocks")]
    fft += [r for k in (10, 16, 20) for r in algorithm(1 << k, 132, k + 1, k * 1e-5, "sizes")]
    sort = [r for k in (12, 20) for r in algorithm(1 << k, 132, k * (k + 1) // 2, k * 1e-4,
                                                   "sizes", dtype="int32")]
    swat = []
    for impl, speed in (("simple", 1.0), ("coalesced", 0.8), ("tiled", 0.1)):
        swat += [r for b in (1, 4, 12) for r in algorithm(3000, b, 6000, speed * 1e-2,
                                                          "blocks", implementation=impl)]
        swat += [r for m in (3000, 10000) for r in algorithm(m, 12, 2 * m, speed * m * 4e-6,
                                                             "sizes", implementation=impl)]
    return {"barriers": barriers, "fft": fft, "sort": sort, "swat": swat}


def test_claims_from_synthetic_numbers():
    rows = _synthetic()
    found = {c.claim: c for c in claims.evaluate(rows["barriers"], rows["fft"], rows["sort"],
                                                 rows["swat"])}
    assert found["simple barrier cost grows linearly with blocks"].verdict == "yes"
    assert found["tree-based beats simple at large block counts"].verdict == "yes"
    assert found["CPU implicit beats CPU explicit synchronization"].verdict == "yes"
    assert found["lock-free is the fastest of the paper's barriers"].verdict == "yes"
    assert found["coalesced storage beats simple storage (same synchronization)"].verdict == "yes"
    assert found["the tiled wavefront is the fastest implementation"].verdict == "yes"
    target = [c for c in found.values() if c.source == "wavedp"][0]
    assert target.verdict == "yes" and target.measured.startswith("met by lockfree (at most 0.90")
    assert "grid.sync 2.17 us at 1056 blocks" in target.measured
    slower = [{**r, "barrier_us": 3 * r["barrier_us"]} for r in rows["barriers"]]
    assert [c for c in claims.barrier_claims(slower) if c.source == "wavedp"][0].verdict == "no"
    assert all(c.verdict in ("yes", "partly", "no") for c in found.values())
    empty = claims.evaluate([], [], [], [])
    assert {c.verdict for c in empty} == {"not measured"}


def test_report_from_synthetic_numbers(tmp_path):
    rows = _synthetic()
    path = suite.write(str(tmp_path), "report", rows, rows["barriers"], "Device: synthetic.")
    text = open(path, encoding="utf-8").read()
    assert text.startswith("# wavedp lab: barrier micro-benchmark, FFT, bitonic sort")
    assert "## The papers' claims on this GPU" in text
    assert "| blocks | cpu-explicit | cpu-implicit | graph | simple |" in text
    assert "S_T model" in text and "Smith-Waterman, tiled" in text
    assert (tmp_path / "report.json").exists()
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert not pngs and "matplotlib is not installed" in text
    else:
        assert "barriers_cost.png" in pngs and "swat_tiled_blocks.png" in pngs
        assert all((tmp_path / p).stat().st_size > 1000 for p in pngs)


def test_report_with_traffic_and_energy(tmp_path):
    """The traffic rows recorded on the H100 and synthetic energy rows: the report holds
    both sections and their claims, and the energy model takes each strategy's DRAM bytes
    from the traffic experiment where it measured the same strategy at the same size."""
    import json
    import os

    with open(os.path.join(os.path.dirname(__file__), "data", "traffic", "rows.json")) as fh:
        traffic_rows = json.load(fh)
    one = next(r for r in traffic_rows if r["variant"] == "coalesced")
    energy_rows = [{"kind": "strategy", "strategy": "coalesced", "m": one["m"], "runs": 3},
                   {"kind": "strategy", "strategy": "tiled", "m": 7, "runs": 2}]
    assert suite.energy_dram(traffic_rows, energy_rows) == {
        "coalesced": 3 * (one["read_bytes"] + one["write_bytes"])}
    path = suite.write(str(tmp_path), "traffic", {"traffic": traffic_rows}, [],
                       "Device: recorded.")
    text = open(path, encoding="utf-8").read()
    assert text.startswith("# wavedp lab: off-chip traffic")
    assert "multipass reads >= 20x fewer DRAM bytes" in text and "Table 6.5" in text


# --- GPU: every strategy on the device --------------------------------------------------------

gpu = pytest.mark.gpu


@gpu
@pytest.mark.parametrize("sync", syncs.SYNCS)
def test_fft_equals_numpy(sync):
    from wavedp.lab import fft

    rng = np.random.default_rng(3)
    for size, blocks in ((2, None), (1024, 1), (1024, 3), (1 << 17, None), (1 << 17, 64)):
        x = (rng.standard_normal(size) + 1j * rng.standard_normal(size)).astype(np.complex64)
        got = fft.fft(x, sync, blocks)
        expected = np.fft.fft(x.astype(np.complex128))
        assert fft.close(got, expected), (size, blocks)
        assert np.linalg.norm(got - expected) <= 1e-5 * np.linalg.norm(expected) * 17


@gpu
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
@pytest.mark.parametrize("sync", syncs.SYNCS)
def test_sort_equals_numpy(sync, dtype):
    from wavedp.lab import sort

    rng = np.random.default_rng(5)
    for size, blocks in ((1, None), (2, None), (1000, 1), (1000, 5), ((1 << 16) + 3, None),
                         (1 << 18, 40)):
        x = sort.keys(rng, size, dtype)
        assert np.array_equal(sort.sort(x, sync, blocks), np.sort(x)), (size, blocks)


@gpu
def test_sort_refuses_nan():
    from wavedp.lab import sort

    with pytest.raises(InputError, match="NaN"):
        sort.sort(np.array([1.0, np.nan], np.float32))


SW_SHAPES = [(1, 1), (1, 300), (300, 1), (127, 129), (128, 128), (129, 257), (700, 1100)]


@gpu
@pytest.mark.parametrize("sync", syncs.SYNCS)
@pytest.mark.parametrize("implementation", ["simple", "coalesced", "tiled"])
def test_smith_waterman_equals_cpu(implementation, sync, poison):
    rng = np.random.default_rng(7)
    scorings = [wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2),
                wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)]
    options = ({"strategy": "tiled"} if implementation == "tiled" else
               {"strategy": "diagonal", "storage": implementation})
    for k, (m, n) in enumerate(SW_SHAPES):
        scoring = scorings[k % 2]
        letters = DNA if scoring.matrix is None else PROTEIN
        q = random_seq(rng, letters, m)
        t = (related(rng, q, letters, 0.2) + random_seq(rng, letters, n))[:n]
        for mode in MODE_NAMES:
            cpu = wavedp.align(q, t, scoring, mode=mode, traceback=False, device="cpu")
            got = wavedp.align(q, t, scoring, mode=mode, traceback=False, device="gpu",
                               sync=sync, **options)
            assert got == cpu, (m, n, mode)


@gpu
@pytest.mark.parametrize("sync", syncs.SYNCS)
@pytest.mark.parametrize("implementation", ["simple", "coalesced", "tiled"])
def test_smith_waterman_any_block_count(implementation, sync):
    from wavedp.lab import swat

    q, t = swat.related_pair(np.random.default_rng(9), 1500, 1300)
    p = swat.upload(q, t)
    expected = swat.reference(p)
    for blocks in (1, 3, 16):
        sweep = swat.make_sweep(p, implementation, sync, blocks)
        for _ in range(2):  # a run repeats from fresh buffers
            sweep.run()
            assert sweep.result() == expected, blocks


def _stress_limit(sync: str) -> int:
    """The co-resident maximum of the stress kernel of ``sync`` (its in-kernel variant for a
    CPU-side strategy, which has no limit of its own)."""
    name = barriers.expression("stress_rounds", "grid" if sync in syncs.HOST_SYNCS else sync)
    return syncs.co_resident(syncs.kernel(barriers.FILE, name, "simple"), barriers.THREADS)


@gpu
@pytest.mark.parametrize("sync", syncs.BARRIER_SYNCS)
def test_barrier_stress(sync):
    sms = syncs.multiprocessors()
    for blocks in sorted({1, 2, 7, sms, 2 * sms, _stress_limit(sync)}):
        rounds = 300 if sync == "cpu-explicit" else 3000
        assert barriers.stress(sync, blocks, rounds=rounds) == 0, blocks


@gpu
@pytest.mark.parametrize("sync", IN_KERNEL)
def test_co_residency_refusal(sync):
    limit = _stress_limit(sync)
    with pytest.raises(InputError, match=f"at most {limit} blocks"):
        barriers.stress(sync, limit + 1)


@gpu
@pytest.mark.parametrize("sync", TIMEOUT_CAPABLE)
def test_stuck_barrier_raises(sync):
    for blocks, block in ((2, 0), (16, 0), (16, 15)):
        with pytest.raises(DeviceError, match="waited longer"):
            barriers.stuck(sync, blocks, block, timeout_ns=100_000_000)
    assert barriers.stress(sync, 16, rounds=100) == 0  # the device is fine afterwards


@gpu
def test_stuck_hook_refuses_the_grid_barrier():
    with pytest.raises(InputError, match="cannot|can time out"):
        barriers.stuck("grid", 4)


@gpu
def test_api_and_cli_strategy_and_sync(tmp_path):
    scoring = wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    q, t = "ACGTTGCAAC" * 40, "ACGTGCAAC" * 45
    cpu = wavedp.align(q, t, scoring, traceback=False, device="cpu")
    assert wavedp.align(q, t, scoring, traceback=False, device="gpu", strategy="tiled",
                        sync="lockfree") == cpu
    with pytest.raises(InputError, match="score-only"):
        wavedp.align(q, t, scoring, device="gpu", strategy="tiled")
    with pytest.raises(InputError, match="sync applies"):
        wavedp.align(q, t, scoring, device="gpu", traceback=False, sync="simple")
    (tmp_path / "q.fa").write_text(f">q\n{q}\n")
    (tmp_path / "t.fa").write_text(f">t\n{t}\n")
    args = ["align", str(tmp_path / "q.fa"), str(tmp_path / "t.fa"), "--match", "2",
            "--mismatch", "-3", "--score-only", "--device", "gpu", "--format", "json"]
    plain = CliRunner().invoke(cli, args)
    tiled = CliRunner().invoke(cli, [*args, "--strategy", "tiled", "--sync", "tree2"])
    diag = CliRunner().invoke(cli, [*args, "--strategy", "diagonal", "--storage", "simple",
                                    "--sync", "graph"])
    assert plain.exit_code == tiled.exit_code == diag.exit_code == 0
    assert plain.stdout == tiled.stdout == diag.stdout


@gpu
def test_lab_run_writes_a_report(tmp_path):
    """Every experiment at its smallest (traffic at one small size, energy with 0.2 s runs and
    no warm-up: the full ones take minutes) into one report."""
    from dataclasses import replace

    from wavedp.lab import energy

    tiny = replace(energy.QUICK, seconds=0.2, warmup=0.0, idle=0.2, multipass=3000,
                   diagonal=1000, tiled=1000, sequences=2000, stream_bytes=64 << 20)
    settings = suite.Settings(repeats=1, rounds=50, barrier_blocks=(1, 2), blocks=(1, 2),
                              fft_sizes=(1 << 10,), fft_sweep=1 << 10, sort_sizes=(1 << 10,),
                              sort_sweep=1 << 10, dtypes=("int32",), swat_sizes=(300,),
                              swat_sweep=300, traffic_sizes=(3_000,), energy=tiny)
    path = suite.run(suite.EXPERIMENTS, settings, str(tmp_path), "test", lambda text: None)
    text = open(path, encoding="utf-8").read()
    assert "## The papers' claims on this GPU" in text
    assert "## Energy (Ranasinghe 2014" in text
    if shutil.which("ncu"):
        assert "## Off-chip traffic (Ranasinghe 2014" in text
    assert "did not match" not in text
