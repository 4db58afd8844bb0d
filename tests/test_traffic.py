"""The traffic lab (wavedp.lab.traffic, lab.ncu): the model's limits and hand-checked cases,
ncu's CSV read from recorded reports, the ncu subprocess (a stand-in script) and its
errors, the report and claims from recorded rows; ``gpu`` tests: the multipass engine's L2
persistence option is exact, every variant of the profiled program agrees, and (where ncu
is installed) a whole measurement."""

from __future__ import annotations

import json
import math
import os
import shutil
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

from wavedp.errors import InputError
from wavedp.lab import ncu, traffic
from wavedp.lab.report import Document

DATA = Path(__file__).parent / "data" / "traffic"
H100_L2 = 50 * 2**20


# --- the model --------------------------------------------------------------------------------

def test_overflow_limits_and_monotonicity():
    ws = np.geomspace(1e3, 1e10, 200)
    miss = traffic.overflow(ws, H100_L2)
    assert miss[0] < 1e-60 and miss[-1] == pytest.approx(1.0)
    assert np.all(np.diff(miss) >= 0)
    assert traffic.overflow(0.25 * H100_L2, H100_L2) < 1e-4  # a quarter of L2: all hits
    assert traffic.overflow(4 * H100_L2, H100_L2) > 0.999  # four times L2: all misses


@pytest.mark.parametrize("a, b", [(1, 1), (1, 7), (7, 1), (5, 5), (3, 9), (5000, 5000),
                                  (9000, 12_345), (1_000_000, 1_000_000)])
def test_diagonal_groups_cover_the_grid(a, b):
    lengths, counts = traffic.diagonals(a, b)
    assert counts.sum() == a + b - 1
    assert (lengths * counts).sum() == pytest.approx(a * b, rel=1e-12)
    assert lengths.max() == min(a, b)


def test_shapes_match_the_engines():
    from wavedp.engines.cuda import multipass, tiled

    assert traffic.TILE == tiled.TILE and traffic.ROWS == multipass.ROWS


def test_rows_per_thread_follow_the_engine(monkeypatch):
    from wavedp.engines.cuda import multipass

    monkeypatch.setattr(multipass, "multiprocessors", lambda: 132)
    for m in (1, 100_000, 270_335, 270_336, 540_671, 540_672, 10**7):
        assert traffic.rows_for(m, 132) == multipass.rows_for(m), m


def test_diagonal_by_hand_when_it_fits():
    # 1000 x 1000, simple storage: a diagonal is 34 KB, far inside 50 MiB
    p = traffic.predict("diagonal", 1000, 1000, l2_bytes=H100_L2, storage="simple")
    buffers, rows = 7 * 4 * 1001, 4 * 1001
    assert p.read_bytes == pytest.approx(buffers + rows + 2000 + 4 * 25)
    assert p.write_bytes == pytest.approx(buffers + 2 * rows)
    assert p.write_through_bytes == 12 * 10**6 + 2 * rows
    assert p.working_set == 34 * 1000
    assert p.hit_rate == pytest.approx(1 - p.read_bytes / (22 * 10**6))
    # coalesced storage pads each diagonal to 16 ints
    c = traffic.predict("diagonal", 1000, 1000, l2_bytes=H100_L2, storage="coalesced")
    assert c.read_bytes - p.read_bytes == pytest.approx(7 * 4 * (1008 - 1001))


def test_diagonal_overflows_a_small_l2():
    m = n = 20_000  # diagonals of up to 680 KB against 64 KB of L2: nearly every reuse misses
    p = traffic.predict("diagonal", m, n, l2_bytes=64 << 10, storage="simple")
    fits = traffic.predict("diagonal", m, n, l2_bytes=H100_L2, storage="simple")
    assert p.read_bytes == pytest.approx(fits.read_bytes + 22 * m * n, rel=0.01)
    assert p.write_bytes == pytest.approx(fits.write_bytes + 12 * m * n, rel=0.01)
    assert p.hit_rate < 0.02 < 0.99 < fits.hit_rate
    assert p.write_bytes <= p.write_through_bytes


def test_tiled_by_hand():
    m, n = 1000, 2000
    ntr, ntc = 8, 16  # 128-row tiles
    p = traffic.predict("tiled", m, n, l2_bytes=H100_L2)
    row, col, rows = 8 * ntc * 129, 8 * 1001, 4 * 1001
    assert p.read_bytes == pytest.approx(row + col + rows + m + n + 100)
    assert p.write_bytes == pytest.approx(row + col + 2 * rows)
    assert p.write_through_bytes == (16 * 128 + 8) * ntr * ntc + 2 * rows
    assert p.working_set == (26 * 128 + 8) * ntr
    tiny = traffic.predict("tiled", m, n, l2_bytes=1024)
    assert tiny.read_bytes == pytest.approx(p.read_bytes + (22 * 128 + 8) * ntr * ntc)


def test_multipass_by_hand():
    m, n = 100_000, 50_000  # 8 rows per thread: 391 strips of 256 rows, one pass
    p = traffic.predict("multipass", m, n, l2_bytes=H100_L2, sms=132)
    strips = 391
    assert p.read_bytes == m + n + 100 + 4 * (strips + 1)
    assert p.write_bytes == 16 * (n + 1) + 12 * strips
    assert p.write_through_bytes == 8 * n * strips + 12 * strips
    # three passes of 131 resident strips, the ring far larger than the L2: the first strip
    # of each later pass reads its row and t from DRAM, and the ring goes out each pass
    three = traffic.predict("multipass", m, n, l2_bytes=1 << 16, sms=132, resident=131)
    assert three.read_bytes == pytest.approx(p.read_bytes + 2 * (8 * (n + 1) + n), rel=1e-6)
    assert three.write_bytes == pytest.approx(p.write_bytes + 2 * 16 * (n + 1), rel=1e-6)
    # the same passes with a ring that fits: nothing more
    fits = traffic.predict("multipass", m, n, l2_bytes=H100_L2, sms=132, resident=131)
    assert fits.read_bytes == pytest.approx(p.read_bytes)


@pytest.mark.parametrize("strategy", ["multipass", "diagonal", "tiled"])
def test_traffic_grows_with_size(strategy):
    sizes = [1000, 10_000, 100_000, 300_000, 1_000_000, 3_000_000]
    preds = [traffic.predict(strategy, s, s, l2_bytes=H100_L2) for s in sizes]
    for key in ("read_bytes", "write_bytes", "write_through_bytes", "working_set"):
        values = [getattr(p, key) for p in preds]
        assert values == sorted(values), key


def test_model_factor_grows_once_a_diagonal_overflows():
    def factor(n):
        diag = traffic.predict("diagonal", n, n, l2_bytes=H100_L2)
        return diag.read_bytes / traffic.predict("multipass", n, n, l2_bytes=H100_L2).read_bytes

    assert factor(100_000) < 20 < factor(1_000_000)  # 3.4 MB diagonals fit, 34 MB do not


def test_predict_rejects_bad_arguments():
    with pytest.raises(InputError, match="strategy"):
        traffic.predict("wavefront", 10, 10, l2_bytes=H100_L2)
    with pytest.raises(InputError, match="storage"):
        traffic.predict("diagonal", 10, 10, l2_bytes=H100_L2, storage="packed")
    with pytest.raises(InputError, match="l2_bytes"):
        traffic.predict("tiled", 10, 10, l2_bytes=0)
    with pytest.raises(InputError, match="variant"):
        traffic.check_variants(["multipass", "wavefront"])


# --- ncu's CSV and the subprocess ---------------------------------------------------------------

def test_values_and_units():
    assert ncu.value("1,383,168", "byte") == 1_383_168
    assert ncu.value("805.12", "Kbyte") == pytest.approx(805_120)
    assert ncu.value("1.38", "Mbyte") == pytest.approx(1_380_000)
    assert ncu.value("2.5", "Gbyte") == pytest.approx(2.5e9)
    assert ncu.value("72,109,088", "ns") == pytest.approx(0.072109088)
    assert ncu.value("72.109088", "msecond") == pytest.approx(0.072109088)
    assert ncu.value("99.84", "%") == 99.84
    assert math.isnan(ncu.value("n/a", "byte"))
    with pytest.raises(ValueError, match="unit"):
        ncu.value("1", "furlong")


@pytest.mark.parametrize("name", ["diagonal_details.csv", "diagonal_raw.csv",
                                  "diagonal_raw_base.csv"])
def test_recorded_single_kernel_reports(name):
    (k,) = ncu.parse_csv((DATA / name).read_text())
    assert k["id"] == 0 and k["kernel"].startswith("void diagonal_sweep<1, 1>(")
    assert k["dram__bytes_read.sum"] == pytest.approx(805_120)
    assert k["dram__bytes_write.sum"] == pytest.approx(1.38e6, rel=0.003)
    assert k["lts__t_sector_hit_rate.pct"] == pytest.approx(99.84, abs=0.002)


def test_recorded_multi_kernel_report():
    kernels = ncu.parse_csv((DATA / "variants_raw_base.csv").read_text())
    names = [k["kernel"].split("<")[0].removeprefix("void ") for k in kernels]
    assert names == ["multipass", "multipass", "diagonal_sweep", "diagonal_sweep",
                     "tiled_sweep"]
    assert [k["id"] for k in kernels] == list(range(5))
    assert all(k["dram__bytes_read.sum"] > 0 and k["gpu__time_duration.sum"] > 0
               for k in kernels)
    # the same report's details page: a metric a row, in Kbyte, usecond, ... (3 digits)
    details = ncu.parse_csv((DATA / "variants_details.csv").read_text())
    assert [k["kernel"] for k in details] == [k["kernel"] for k in kernels]
    for raw, page in zip(kernels, details, strict=True):
        for metric in ncu.METRICS:
            assert page[metric] == pytest.approx(raw[metric], rel=2e-3), metric


def test_parse_skips_what_is_not_csv():
    text = "==PROF== Connected to process 1\nprogram output\n" + \
        (DATA / "diagonal_raw_base.csv").read_text() + "==PROF== Disconnected\n"
    assert len(ncu.parse_csv(text)) == 1
    assert ncu.parse_csv("==PROF== nothing profiled\n") == []


def _fake_ncu(folder: Path, body: str) -> None:
    script = folder / "ncu"
    script.write_text(f"#!{sys.executable}\nimport sys\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def test_missing_ncu_is_one_input_error(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(InputError, match="ncu .*not on PATH") as err:
        ncu.profile(["true"])
    assert "\n" not in str(err.value)
    with pytest.raises(InputError, match="not on PATH"):
        traffic.measure([1000])


def test_counters_not_permitted_is_one_input_error(tmp_path, monkeypatch):
    _fake_ncu(tmp_path, "print('==ERROR== ERR_NVGPUCTRPERM - The user does not have permission "
                        "to access NVIDIA GPU Performance Counters on the target device 0.')\n"
                        "sys.exit(1)")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(InputError, match="ERR_NVGPUCTRPERM") as err:
        ncu.profile(["true"])
    assert "\n" not in str(err.value)


def test_profile_exports_then_reads_the_report(tmp_path, monkeypatch):
    recorded = DATA / "variants_raw_base.csv"
    calls = tmp_path / "calls.txt"
    _fake_ncu(tmp_path, f"open({str(calls)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
                        "if '--import' in sys.argv:\n"
                        f"    print(open({str(recorded)!r}).read())")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    kernels = ncu.profile(["python", "-c", "pass"])
    assert len(kernels) == 5
    run, read = calls.read_text().splitlines()
    assert f"--metrics {','.join(ncu.METRICS)}" in run and "--export" in run
    assert run.endswith("python -c pass") and ncu.KERNELS in run
    assert "--page raw" in read and "--print-units base" in read


# --- report and claims from recorded rows -----------------------------------------------------

def _rows() -> list[dict]:
    return json.loads((DATA / "rows.json").read_text())


def test_section_from_recorded_rows(tmp_path):
    doc = Document(str(tmp_path), "traffic", "traffic")
    traffic.section(doc, _rows())
    text = Path(doc.write()).read_text()
    assert "## Off-chip traffic" in text and "Factor over multipass" in text
    assert "L2 persistence" in text and "Against the thesis" in text
    assert text.count("\n| ") > 10
    pytest.importorskip("matplotlib")
    assert (tmp_path / "traffic.png").stat().st_size > 1000


def test_claims_from_recorded_rows():
    found = traffic.claims(_rows())
    assert len(found) == 4
    assert all(c.verdict in ("yes", "partly", "no") for c in found)
    target = found[-1]
    assert target.source == "wavedp" and "x fewer bytes read" in target.measured
    assert [c.verdict for c in traffic.claims([])] == ["not measured"] * 4


# --- GPU ------------------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_l2_persistence_is_exact(mode, monkeypatch):
    import cupy

    from wavedp.engines.cuda import multipass
    from wavedp.lab.swat import SCORING, related_pair

    monkeypatch.setattr(multipass, "POISON", True)
    rng = np.random.default_rng(5 + mode)
    for m, n in ((1, 1), (300, 7000), (5000, 4999), (40_000, 3000)):
        q, t = related_pair(rng, m, n)
        p = multipass.upload(q, t, SCORING.table, SCORING.gap_open, SCORING.gap_extend, mode)
        want = multipass.end_cell(p, multipass.sweep(p, 0, m, 0, n))
        assert multipass.end_cell(p, multipass.sweep(p, 0, m, 0, n, persist=True)) == want
        with cupy.cuda.Stream(non_blocking=True):  # a stream of its own, left running
            out = multipass.sweep(p, 0, m, 0, n, persist=True, wait=False)
            multipass.check(out)
            assert multipass.end_cell(p, out) == want
        # later default sweeps are unaffected (the window is cleared after the launch)
        assert multipass.end_cell(p, multipass.sweep(p, 0, m, 0, n)) == want


@pytest.mark.gpu
def test_profiled_program_agrees_across_variants(tmp_path):
    from wavedp.lab import traffic_run

    out = tmp_path / "results.json"
    traffic_run.main(["--size", "3000", "--variants", ",".join(traffic.VARIANTS), "--sync",
                      "simple", "--out", str(out)])
    results = json.loads(out.read_text())
    assert list(results) == list(traffic.VARIANTS)
    assert len({tuple(v) for v in results.values()}) == 1


@pytest.mark.gpu
@pytest.mark.skipif(shutil.which("ncu") is None, reason="needs ncu (Nsight Compute) on PATH")
def test_measure_with_ncu(tmp_path):
    rows = traffic.measure([2000, 20_000], step_limit=2000)
    assert [(r["m"], r["variant"]) for r in rows] == \
        [(2000, v) for v in traffic.VARIANTS] + \
        [(20_000, "multipass"), (20_000, "multipass-persist")]
    assert all(r["exact"] and r["read_bytes"] > 0 and r["seconds"] > 0 for r in rows)
    json.dumps(rows)  # JSON-able
    doc = Document(str(tmp_path), "traffic", "traffic")
    traffic.section(doc, rows)
    assert "## Off-chip traffic" in Path(doc.write()).read_text()
