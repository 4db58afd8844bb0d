"""GPU energy (wavedp.energy) and the energy lab (wavedp.lab.energy).

CPU tests fake NVML (a stand-in ``pynvml`` module) to check the measurement's counter and
sample paths and its errors, and check the fit, the model, the report and the claims on
synthetic rows, and ``--energy``'s errors; ``gpu`` tests measure for real."""

from __future__ import annotations

import math
import re
import sys
import time
import types
from dataclasses import replace
from importlib import resources

import numpy as np
import pytest
from helpers import assert_user_error, invoke

import wavedp
from wavedp import energy
from wavedp.errors import DeviceError, InputError
from wavedp.lab import energy as lab
from wavedp.lab import energy_model as model
from wavedp.lab import energy_report as reporting
from wavedp.lab import report


class FakeNVML(types.ModuleType):
    """A stand-in for ``pynvml``: every GPU draws ``watts``; its energy counter reads
    ``counter`` (millijoules) in turn, or is unsupported (None)."""

    class NVMLError(Exception):
        pass

    def __init__(self, watts: float = 200.0, counter: tuple[int, ...] | None = (1000, 5000),
                 fail_init: bool = False, power_reads: int | None = None) -> None:
        super().__init__("pynvml")
        self.watts, self.counter, self.fail_init = watts, counter, fail_init
        self.power_reads = power_reads  # reads that succeed before the rest fail
        self.readings: dict[str, list[int]] = {}
        self.open = 0

    def nvmlInit(self) -> None:
        if self.fail_init:
            raise self.NVMLError("Driver Not Loaded")
        self.open += 1

    def nvmlShutdown(self) -> None:
        self.open -= 1

    def nvmlDeviceGetHandleByPciBusId(self, bus: str) -> str:
        return bus

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: str) -> int:
        if self.counter is None:
            raise self.NVMLError("Not Supported")
        left = self.readings.setdefault(handle, list(self.counter))
        return left.pop(0)

    def nvmlDeviceGetPowerUsage(self, handle: str) -> int:
        if self.power_reads is not None:
            if self.power_reads == 0:
                raise self.NVMLError("Unknown Error")
            self.power_reads -= 1
        return int(self.watts * 1000)


@pytest.fixture
def nvml(monkeypatch):
    """Install a FakeNVML (returned; tests may change it) and a pretend GPU per ordinal."""
    fake = FakeNVML()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    monkeypatch.setattr(energy, "_bus_ids",
                        lambda devices: [(d, f"0000:{d + 1:02x}:00.0") for d in devices or [0]])
    monkeypatch.setattr(energy, "_synchronize", lambda devices: None)
    return fake


# --- wavedp.energy ------------------------------------------------------------------------------

def test_a_long_block_reports_the_energy_counter(nvml, monkeypatch):
    monkeypatch.setattr(energy, "COUNTER_MIN_S", 0.0)
    with energy.measure(interval=0.001) as m:
        time.sleep(0.01)
    assert m.source == "counter"
    assert m.joules == m.counter_joules == 4.0
    assert m.devices == (0,)
    assert m.mean_watts == pytest.approx(4.0 / m.seconds)
    assert m.peak_watts == 200.0
    assert len(m.samples) >= 2 and all(w == 200.0 for _, w in m.samples)
    assert m.sample_joules == pytest.approx(200.0 * m.seconds)
    assert nvml.open == 0  # NVML shut down again


def test_a_short_block_integrates_the_samples(nvml):
    with energy.measure(interval=0.001) as m:
        time.sleep(0.005)
    assert m.seconds < energy.COUNTER_MIN_S
    assert m.source == "samples"
    assert m.counter_joules == 4.0
    assert m.joules == m.sample_joules == pytest.approx(200.0 * m.seconds)


def test_a_gpu_without_an_energy_counter_integrates_the_samples(nvml, monkeypatch):
    monkeypatch.setattr(energy, "COUNTER_MIN_S", 0.0)
    nvml.counter = None
    with energy.measure(interval=0.001) as m:
        time.sleep(0.005)
    assert m.counter_joules is None
    assert m.source == "samples" and m.joules == pytest.approx(200.0 * m.seconds)


def test_several_gpus_add_up(nvml, monkeypatch):
    monkeypatch.setattr(energy, "COUNTER_MIN_S", 0.0)
    with energy.measure([0, 1], interval=0.001) as m:
        time.sleep(0.005)
    assert m.devices == (0, 1)
    assert m.joules == 8.0
    assert m.peak_watts == 400.0


def test_a_failed_power_read_holds_the_last_reading(nvml):
    nvml.power_reads = 1  # the first read works, every later one fails
    with energy.measure(interval=0.001) as m:
        time.sleep(0.005)
    assert [w for _, w in m.samples] == [200.0, 200.0]
    assert m.joules == pytest.approx(200.0 * m.seconds)


def test_an_error_in_the_block_still_shuts_nvml_down(nvml):
    with pytest.raises(RuntimeError, match="boom"), energy.measure():
        raise RuntimeError("boom")
    assert nvml.open == 0


def test_missing_nvml_is_one_clear_input_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    with pytest.raises(InputError, match="nvidia-ml-py"):
        with energy.measure():
            pass


def test_nvml_that_cannot_start_is_an_input_error(nvml):
    nvml.fail_init = True
    with pytest.raises(InputError, match="NVML.*Driver Not Loaded"):
        with energy.measure():
            pass


def test_no_gpu_is_an_input_error(monkeypatch):

    monkeypatch.setitem(sys.modules, "pynvml", FakeNVML())
    monkeypatch.setattr(energy, "gpu_status", lambda: (False, "no CUDA device"))
    with pytest.raises(InputError, match="needs a GPU.*no CUDA device"):
        with energy.measure():
            pass


def test_integrate_and_choose():
    assert energy.integrate([(0.0, 100.0), (1.0, 300.0), (3.0, 300.0)]) == 800.0
    assert energy.integrate([(0.0, 100.0)]) == 0.0
    assert energy.choose(2.0, 10.0, 9.0) == (10.0, "counter")
    assert energy.choose(0.5, 10.0, 9.0) == (9.0, "samples")
    assert energy.choose(2.0, None, 9.0) == (9.0, "samples")
    assert energy.choose(2.0, 0.0, 9.0) == (9.0, "samples")  # the counter never moved


def test_summary_is_one_line_with_joules_and_gcups_per_watt():
    m = energy.Measurement((0,), seconds=2.0, joules=500.0, source="counter",
                           samples=[(0.0, 240.0), (2.0, 260.0)])
    line = energy.summary(m, 4 * 10**12)
    assert "\n" not in line and line.startswith("wavedp: energy: 500 J in 2 s on GPU 0")
    assert "mean 250 W, peak 260 W" in line and energy.SOURCES["counter"] in line
    assert line.endswith("2000 GCUPS, 8 GCUPS/W")


# --- the command line ---------------------------------------------------------------------------

@pytest.fixture
def pair(tmp_path):
    (tmp_path / "q.fa").write_text(">q\nMKTAYIAKQRQISFVKSHFSRQ\n")
    (tmp_path / "t.fa").write_text(">t\nMKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQ\n")
    return str(tmp_path / "q.fa"), str(tmp_path / "t.fa")


@pytest.mark.parametrize("command", ["align", "search"])
def test_energy_on_the_cpu_is_one_line_and_status_2(pair, command, tmp_path):
    out = tmp_path / "out.txt"
    result = invoke(command, *pair, "--device", "cpu", "--energy", "-o", out)
    assert_user_error(result, "--energy", "CPU")
    assert not out.exists()


@pytest.mark.parametrize("command", ["align", "search"])
def test_energy_without_nvml_is_one_line_and_status_2(pair, command, monkeypatch, tmp_path):
    from wavedp import device

    monkeypatch.setitem(sys.modules, "pynvml", None)
    monkeypatch.setattr(device, "_kind", lambda name: "gpu")  # as if a GPU were present
    out = tmp_path / "out.txt"
    result = invoke(command, *pair, "--energy", "-o", out)
    assert_user_error(result, "nvidia-ml-py")
    assert not out.exists()


def test_energy_with_a_cluster_is_refused(pair):
    result = invoke("search", *pair, "--energy", "--cluster", "local")
    assert_user_error(result, "--energy", "--cluster")


# --- the energy lab on synthetic rows -----------------------------------------------------------

P_STATIC = 150.0
E_OP = {"add": 8e-12, "max": 12e-12, "max16": 17e-12, "shared": 20e-12, "shared16": 60e-12,
        "l2": 5e-12, "dram": 15e-12}


def micro_rows(f: model.Fit | None = None) -> list[dict]:
    """Micro-benchmark rows whose joules follow ``f`` (default P_STATIC and E_OP) exactly."""
    f = f or model.Fit(P_STATIC, E_OP)
    rows = []
    for k, (op, micro) in enumerate(lab.MICROS.items()):
        for level, steps, seconds in (("high", 1e12, 2.0 + k / 10), ("low", 1e11, 2.5)):
            counts = {name: v * steps for name, v in micro.per_step.items()}
            rows.append({"kind": "micro", "op": op, "intensity": level,
                         "kernel": micro.kernel, "blocks": 1056 if level == "high" else 132,
                         "threads": 256 if level == "high" else 32, "steps": steps,
                         "counts": counts, "seconds": seconds,
                         "joules": f.joules(seconds, counts), "watts": 0.0,
                         "peak_watts": 0.0, "source": "counter"})
    return rows


def strategy_row(name: str, error: float = 0.0) -> dict:
    """A strategy row whose joules are the model's times (1 + error)."""
    size = {"multipass": 1_000_000, "tiled": 1_000_000}.get(name, 300_000)
    row = {"kind": "strategy", "strategy": name, "m": size, "n": size, "rows_per_thread": 32,
           "sync": None if name == "multipass" else "cpu-implicit", "runs": 3,
           "cells": 3 * size * size, "seconds": 2.0, "l2_cache": 50 << 20,
           "peak_watts": 400.0, "source": "counter"}
    if name == "search":
        row.update(queries=20, sequences=400_000, length=512, residues=400_000 * 512,
                   overhead=1.1, scans=40, cells=41752 * 400_000 * 512, runs=1)
    row["joules"] = model.predict(model.Fit(P_STATIC, E_OP), row)["total"] * (1 + error)
    row["watts"] = row["joules"] / row["seconds"]
    return row


#: the capped searches' power: this many watts at no cells, this many joules per cell
INTERCEPT, PER_CELL = 160.0, 90e-12


def capped_rows(blocks: tuple[int, ...] = (33, 66, 132)) -> list[dict]:
    """Searches capped at ``blocks`` blocks whose power is INTERCEPT + PER_CELL x rate."""
    rows = []
    for b in blocks:
        row = {**strategy_row("search"), "blocks": b}
        row["seconds"] = 132 / b * 4.0
        row["watts"] = INTERCEPT + PER_CELL * row["cells"] / row["seconds"]
        row["joules"] = row["watts"] * row["seconds"]
        rows.append(row)
    return rows


def peak_row(length: int, gcups_per_watt: float, database: str = "repeated",
             kind: str = "peak") -> dict:
    """A peak search (or CUDASW++4.0's, ``kind`` anchor) at ``length`` reaching
    ``gcups_per_watt`` at 4,600 GCUPS."""
    cells = sum(lab.QUERY_LENGTHS) * (1 << 28)
    seconds = cells / 4.6e12
    joules = cells / 1e9 / gcups_per_watt
    return {"kind": kind, "length": length, "database": database, "queries": 20,
            "sequences": (1 << 28) // length, "runs": 1, "cells": cells, "seconds": seconds,
            "joules": joules, "watts": joules / seconds, "peak_watts": 600.0,
            "source": "counter"}


def all_rows(errors: dict[str, float] | None = None) -> list[dict]:
    errors = errors or {}
    return [{"kind": "warmup", "window": 1.0, "watts": [300.0, 320.0, 321.0, 321.6],
             "settled": True},
            {"kind": "static", "seconds": 3.0, "joules": 270.0, "watts": 90.0,
             "peak_watts": 92.0, "source": "counter"},
            *micro_rows(), *(strategy_row(s, errors.get(s, 0.0)) for s in lab.STRATEGIES),
            *capped_rows()]


def test_the_fit_recovers_known_energies():
    f = model.fit(micro_rows())
    assert f.static_watts == pytest.approx(P_STATIC, rel=1e-6)
    for op, e in E_OP.items():
        assert f.energy[op] == pytest.approx(e, rel=1e-6), op
    assert model.fit([]) is None


def test_the_model_adds_static_and_operation_energy():
    f = model.Fit(100.0, {op: 1e-12 for op in model.OPS})
    row = strategy_row("coalesced")
    parts = model.predict(f, row, dram_bytes=1e9)
    assert parts["static"] == 200.0
    assert parts["dram"] == pytest.approx(1e-3)
    counts = model.CELL_COUNTS["coalesced"]
    assert parts["add"] == pytest.approx(counts["add"] * row["cells"] * 1e-12)
    assert parts["total"] == pytest.approx(sum(v for k, v in parts.items() if k != "total"))
    # the default DRAM estimate: a 300k pair's diagonals fit in L2, read once per run
    assert model.dram_estimate(row) == model.working_set(row) * row["runs"]
    big = {**row, "l2_cache": 1 << 20}
    assert model.dram_estimate(big) == pytest.approx(row["cells"] * counts["l2"])


def test_multipass_counts_follow_its_rows_per_thread():
    eight, wide = model.multipass_counts(8), model.multipass_counts(32)
    assert sum(v for k, v in eight.items() if k != "l2") - eight["shared"] \
        == pytest.approx(17.25)  # Nsight Compute: 17.3 instructions per cell at 8 rows
    assert all(wide[op] < eight[op] for op in eight)
    assert model.cell_counts(strategy_row("multipass")) == wide


def test_search_counts_scale_with_the_cells_the_scan_computes():
    overhead, scans = lab.search_shape(lab.QUERY_LENGTHS, 512, 24)
    assert overhead >= 1.0 and scans >= len(lab.QUERY_LENGTHS) // 2
    row = strategy_row("search")
    assert model.cell_counts(row)["max16"] == pytest.approx(
        1.1 * model.CELL_COUNTS["search"]["max16"])
    assert model.dram_estimate(row) == 400_000 * 512 * 40


def test_micro_counts_match_the_kernels_loops():
    text = resources.files("wavedp.kernels").joinpath(lab.FILE).read_text()
    known = {k: int(v) for k, v in re.findall(r"^#define (\w+) (\d+)", text, re.M)}
    chains, unroll = known["CHAINS"], known["UNROLL"]
    assert lab.MICROS["add"].per_step["add"] == 2 * chains * unroll + 2
    assert lab.MICROS["max"].per_step["max"] == 2 * chains * unroll
    assert lab.MICROS["max16"].per_step["max16"] == 2 * chains * unroll
    assert lab.MICROS["shared"].per_step["shared"] == chains * unroll
    assert lab.MICROS["shared16"].per_step["shared16"] == chains * unroll
    assert lab.MICROS["shared16"].per_step["add"] == 3 * chains * unroll + 2
    assert known["STREAM_UNROLL"] == 4  # lab.energy's stream quantum
    from wavedp.engines.cuda.module import KERNELS

    assert set(KERNELS[lab.FILE]) == {m.kernel for m in lab.MICROS.values()}


def test_the_capped_searches_give_slope_and_intercept():
    rows = all_rows({"search": -0.1})
    slope, intercept = model.search_power(rows)
    assert slope == pytest.approx(PER_CELL) and intercept == pytest.approx(INTERCEPT)
    assert model.errors(rows)["search"] == pytest.approx(1 / 0.9 - 1)  # the full grid's row
    assert model.search_power(all_rows()[:-2]) is None  # one capped row: no line


def test_a_grid_cap_caps_every_launch_of_its_model_only():
    from wavedp.engines.calibration import capped
    from wavedp.engines.cuda.scan import cost, model, shapes

    full = shapes.launch_blocks(16, 100, 10**6, 1, 500, 132)
    assert shapes.launch_blocks(16, 100, 10**6, 1, 500, 132, cap=33) == 33
    assert shapes.launch_blocks(16, 1, 16, 1, 500, 132, cap=33) == 2
    assert full > 33
    base = model.DEFAULT_GPU
    unit_m, subj_n = np.array([500] * 100), np.full(10**6 // 100, 500.0)
    shape = (16, 20, 1)
    assert cost.launch_grid(capped(base, 33), unit_m, subj_n, True, shape) == 33
    assert cost.launch_grid(base, unit_m, subj_n, True, shape) > 33  # the model unchanged
    assert capped(base, None) is base and base.grid_cap is None


def test_the_search_traffic_comes_from_ncu_where_it_is(monkeypatch):
    notes, calls = [], []
    monkeypatch.setattr(lab.ncu.shutil, "which", lambda name: None)
    assert lab.search_traffic(lab.QUICK, notes.append) is None and "not on PATH" in notes[-1]
    monkeypatch.setattr(lab.ncu.shutil, "which", lambda name: "/usr/bin/ncu")
    l2, read, write = "lts__t_bytes.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"
    kernels = [{"id": 0, "kernel": "void scan<0, 32, 1>(const unsigned char *, int)",
                l2: 2e10, read: 3e9, write: 4e9},
               {"id": 1, "kernel": "cupy_scan_naive", l2: 9e9, read: 1e9, write: 1e9},
               {"id": 2, "kernel": "scan<1, 8, 0>", l2: 1e10, read: 1e9, write: 0.0}]

    def profile(command, metrics, name):
        calls.append((command, metrics, name))
        return kernels

    monkeypatch.setattr(lab.ncu, "profile", profile)
    assert lab.search_traffic(lab.QUICK, notes.append) == {"l2": 3e10, "dram": 8e9}
    command, metrics, _ = calls[-1]
    assert command[1:3] == ["-m", "wavedp.lab.energy_run"] and str(lab.QUICK.sequences) in command
    assert set(metrics) == {l2, read, write}
    assert "2 scan launch(es) moved 30.0 GB through L2 and 8.0 GB" in notes[-1]
    kernels[:] = kernels[1:2]
    with pytest.raises(DeviceError, match="no scan launch"):
        lab.search_traffic(lab.QUICK, notes.append)
    # a row with counted L2 bytes uses them, not the counts per cell
    row = {**strategy_row("search"), "l2_bytes": 7e11}
    f = model.Fit(0.0, {op: 1.0 for op in model.OPS})
    assert model.predict(f, row)["l2"] == 7e11
    # a row with counted bytes uses them, not the estimate
    row = {**strategy_row("search"), "dram_bytes": 5e11}
    assert model.dram_estimate(row) == 5e11


def test_settled_needs_three_close_windows():
    assert not lab.settled([300.0, 300.0])
    assert lab.settled([300.0, 301.0, 301.5])
    assert not lab.settled([280.0, 300.0, 301.0])


def test_section_writes_the_report(tmp_path):
    rows = all_rows({"tiled": 0.05})
    doc = report.Document(str(tmp_path), "energy", "wavedp lab: energy")
    reporting.section(doc, rows)
    text = open(doc.write(), encoding="utf-8").read()
    assert "## Energy (Ranasinghe 2014, chapter 5)" in text
    assert "P_static" in text and "| 150 | W |" in text
    for name in lab.STRATEGIES:
        assert lab.LABELS[name] in text
    assert "CUDASW++4.0" in text and "15.7" in text
    assert "settled at 322 W" in text and "Idle power" in text and "90 W" in text
    assert "energy_warmup.png" in text
    assert "search, 33 blocks" in text and "capped at 33, 66, 132 blocks" in text
    assert "90.0 pJ per real cell and 160 W at no cells" in text
    assert "the miss is in the static power" not in text
    assert "counted by Nsight Compute" not in text  # no counted bytes: estimated
    rows[[r.get("strategy") for r in rows].index("search")]["dram_bytes"] = 2.5e11
    reporting.section(doc, rows)
    assert "the search's counted by Nsight Compute (250.0 GB" in open(
        doc.write(), encoding="utf-8").read()


def test_section_without_micro_benchmarks_says_so(tmp_path):
    doc = report.Document(str(tmp_path), "energy", "t")
    reporting.section(doc, [r for r in all_rows() if r["kind"] != "micro"])
    assert "no model" in open(doc.write(), encoding="utf-8").read()


def test_claims_check_both_targets():
    model, search = reporting.claims(all_rows({"tiled": 0.05, "search": -0.02}))
    assert model.verdict == "yes" and "5 of 5 within" in model.measured
    row = strategy_row("search", -0.02)
    per_watt = row["cells"] / 1e9 / row["joules"]
    assert f"{per_watt:.1f} GCUPS/W" in search.measured
    assert search.verdict == ("yes" if per_watt >= lab.CUDASW_GCUPS_PER_WATT else "no")
    model, _ = reporting.claims(all_rows({"simple": 0.4}))  # measured 40% above the model
    assert model.verdict == "partly" and "diagonal, simple storage -29%" in model.measured
    model, search = reporting.claims([])
    assert model.verdict == search.verdict == "not measured"


def test_the_peak_searches_are_judged_like_the_published_peak(tmp_path):
    """CUDASW++4.0's 15.7 GCUPS/W is its peak benchmark's ("up to"): the claim judges the best
    peak search and shows the search's figure beside it; the report lists every peak run."""
    rows = all_rows() + [peak_row(256, 9.0), peak_row(512, 9.6), peak_row(1024, 9.3)]
    _, search = reporting.claims(rows)
    assert search.verdict == "no"
    assert "at its peak (length 512" in search.measured and "9.6 GCUPS/W" in search.measured
    assert search.measured.startswith("the search ") and "4,600 GCUPS" in search.measured
    _, search = reporting.claims(rows + [peak_row(128, 16.0)])
    assert search.verdict == "yes" and "length 128" in search.measured
    doc = report.Document(str(tmp_path), "energy", "t")
    reporting.section(doc, rows)
    text = open(doc.write(), encoding="utf-8").read()
    assert 'published "up to 15.7 GCUPS/W"' in text
    assert "| 512 | repeated | 20 x 524,288 |" in text and "| 20 x 262,144 |" in text
    assert model.errors(rows) == model.errors(all_rows())  # the model leaves the peak rows out


def test_the_peak_is_judged_on_the_anchors_kind_of_database():
    """CUDASW++4.0's pseudo-database repeats one sequence: the claims judge the peak searches
    on that kind of database where there are any, the distinct ones shown beside them."""
    rows = all_rows() + [peak_row(256, 9.0), peak_row(256, 12.0, "distinct")]
    _, search = reporting.claims(rows)
    assert "9.0 GCUPS/W" in search.measured and "12.0" not in search.measured
    _, search = reporting.claims(all_rows() + [peak_row(256, 12.0, "distinct")])
    assert "12.0 GCUPS/W" in search.measured


def test_the_anchor_run_here_is_a_claim_of_its_own(tmp_path):
    """With CUDASW++4.0 run on this GPU, a third claim sets wavedp's best peak against its
    best, with the ratio at each length; the published claim stays as it was."""
    ours = [peak_row(128, 9.6), peak_row(256, 9.9), peak_row(512, 9.4)]
    theirs = [peak_row(128, 10.5, kind="anchor"), peak_row(256, 9.4, kind="anchor"),
              peak_row(512, 9.1, kind="anchor")]
    model, search, anchored = reporting.claims(all_rows() + ours + theirs)
    assert search.verdict == "no"  # 9.9 < 15.7
    assert anchored.verdict == "partly" and "10.5 GCUPS/W at length 128" in anchored.paper
    assert "0.94x" in anchored.measured and "128 0.91x, 256 1.05x, 512 1.03x" in anchored.measured
    *_, anchored = reporting.claims(all_rows() + ours + theirs[1:])
    assert anchored.verdict == "yes"
    *_, anchored = reporting.claims(all_rows() + ours[:1] + theirs[:1])
    assert anchored.verdict == "no"
    assert len(reporting.claims(all_rows() + ours)) == 2  # no anchor run: no third claim
    doc = report.Document(str(tmp_path), "energy", "t")
    reporting.section(doc, all_rows() + ours + theirs)
    text = open(doc.write(), encoding="utf-8").read()
    assert "CUDASW++4.0 itself on this GPU" in text and "| wavedp / CUDASW++4.0 |" in text


def test_the_anchor_comparison_reads_wavedps_power_as_the_anchors():
    """Where a peak row has the power read as the anchor's (NVML's samples), the third claim
    compares that; the energy counter's figure is shown beside it."""
    ours = peak_row(128, 9.6)
    ours["sample_watts"] = ours["watts"] * 9.6 / 10.0  # reads 10.0 GCUPS/W alike
    *_, anchored = reporting.claims(all_rows() + [ours, peak_row(128, 10.5, kind="anchor")])
    assert "10.0 GCUPS/W at length 128" in anchored.measured
    assert "energy counter 9.6" in anchored.measured and "0.95x" in anchored.measured


def test_peak_inputs_have_one_length():
    queries, db = lab.peak_inputs(300, 10_000, "distinct")
    assert queries == lab.search_queries()
    assert [len(q) for q in queries] == list(lab.QUERY_LENGTHS)
    assert len(db) == 33 and set(db.lengths.tolist()) == {300} and db.longest == 300
    assert db.total_residues == 9_900 and db.residues.dtype == np.uint8
    assert set(db.residues.tolist()) <= set(range(20)) and len(set(db.residues.tolist())) == 20
    again, db2 = lab.peak_inputs(300, 10_000, "distinct")
    assert again == queries and np.array_equal(db.residues, db2.residues)  # seeded
    _, same = lab.peak_inputs(300, 10_000)  # CUDASW++4.0's kind: one sequence repeated
    rows = same.residues.reshape(33, 300)
    assert (rows == rows[0]).all() and not np.array_equal(rows[0], db.residues[:300])
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    found = wavedp.search(queries, db, scoring, top=10, device="cpu", stats="blast")
    scanned = lab.peak_scan(queries, db, "cpu")()  # the scan alone, as the lab times it
    assert len(scanned) == len(queries)
    for hits, (indices, scores) in zip(found, scanned, strict=True):
        assert [h.score for h in hits] == scores.tolist()
        assert [h.target_id for h in hits] == [f"s{k}" for k in indices.tolist()]


def test_claims_take_dram_bytes():
    rows = all_rows()
    base = model.errors(rows)["coalesced"]
    more = model.errors(rows, {"coalesced": 1e15})["coalesced"]
    assert abs(base) < 1e-9 and more > 0.1


def test_settings_are_checked():
    lab.validate(lab.QUICK)
    for bad in (replace(lab.QUICK, strategies=("nope",)), replace(lab.QUICK, sync="nope"),
                replace(lab.QUICK, tiled=0), replace(lab.QUICK, seconds=0),
                replace(lab.QUICK, slope=(0, 132)), replace(lab.QUICK, peak=(0,)),
                replace(lab.QUICK, peak=(512,), peak_residues=100),
                replace(lab.QUICK, peak=(512,), anchor_residues=100),
                replace(lab.QUICK, peak_databases=("nope",)),
                replace(lab.QUICK, cudasw4="/no/such/align")):
        with pytest.raises(InputError):
            lab.validate(bad)


# --- on the GPU ---------------------------------------------------------------------------------

@pytest.mark.gpu
def test_a_real_measurement():
    import cupy

    x = cupy.arange(1 << 24, dtype=cupy.float32)
    with energy.measure() as m:
        for _ in range(20):
            x = cupy.sqrt(x * x + 1)
    assert m.devices == (cupy.cuda.Device().id,)
    assert m.seconds > 0 and m.joules > 0 and not math.isnan(m.joules)
    assert m.source in energy.SOURCES and m.peak_watts > 0


@pytest.mark.gpu
def test_a_tiny_energy_lab_run(tmp_path):
    tiny = replace(lab.QUICK, seconds=0.2, warmup=0.0, idle=0.2, multipass=3000,
                   diagonal=1000, tiled=1000, sequences=2000, stream_bytes=64 << 20)
    notes = []
    rows = lab.measure(tiny, notes.append)
    kinds = [r["kind"] for r in rows]
    assert kinds.count("micro") == 2 * len(lab.MICROS)
    assert kinds.count("strategy") == len(lab.STRATEGIES) + len(tiny.slope)
    assert kinds.count("peak") == len(tiny.peak) * len(tiny.peak_databases)
    assert model.search_power(rows) is not None
    assert all(r["joules"] > 0 and r["seconds"] >= 0.2 for r in rows if "joules" in r)
    doc = report.Document(str(tmp_path), "energy", "t")
    reporting.section(doc, rows)
    assert "GCUPS/W" in open(doc.write(), encoding="utf-8").read()
    assert len(reporting.claims(rows)) == 2 and notes
