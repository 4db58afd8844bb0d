"""Plans made before CuPy is loaded (``plan_ahead``): the GPUs a command expects, and the
scanner made once they are up taking the very plan made ahead, or planning again where its
GPU is not the one expected. Host only: planning needs no GPU."""

from __future__ import annotations

import importlib
import threading

import numpy as np
import pytest

import wavedp.device as device_mod
from wavedp import Scoring
from wavedp.api import Prepared
from wavedp.device import Device, gpus_ahead
from wavedp.engines import scanner as make_scanner
from wavedp.engines.cuda.gpus import GpuScanner
from wavedp.engines.cuda.scan import scanner as scan_mod
from wavedp.engines.cuda.scan.model import DEFAULT_GPU
from wavedp.search.api import open_database, plan_ahead, search
from wavedp.trace import Trace

search_api = importlib.import_module("wavedp.search.api")  # the package, not the function


@pytest.fixture(autouse=True)
def _empty_store(monkeypatch, request):
    """Each test starts with no plan made ahead; off the GPU, the scanners' GPUs have the
    default model's multiprocessors."""
    monkeypatch.setattr(scan_mod, "_AHEAD", {})
    if request.node.get_closest_marker("gpu") is None:
        monkeypatch.setattr(scan_mod, "device_multiprocessors", lambda d: DEFAULT_GPU.sms)


def _lengths(n: int, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lengths = np.clip(rng.lognormal(np.log(300), 0.65, n), 8, 6000).astype(np.int64)
    lengths[::97] = 0  # empty subjects are left out of every launch
    return lengths


def _offsets(lengths: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


QUERIES = [np.zeros(n, np.uint8) for n in (144, 3000, 375, 1500, 2504)]


def _gpu_scanner(offsets: np.ndarray, devices=(0,), sms: int | None = None) -> GpuScanner:
    sub = np.eye(24, dtype=np.int32) * 6 - 1
    residues = np.zeros(int(offsets[-1]), np.uint8)
    return GpuScanner(residues, offsets, None, sub, 11, 1, 0, devices, model=DEFAULT_GPU,
                      multiprocessors=sms, trace=Trace())


def test_gpus_ahead_from_the_driver_list(tmp_path, monkeypatch):
    monkeypatch.setattr(device_mod, "DRIVER_GPUS", str(tmp_path / "gpus"))
    assert gpus_ahead() == ()  # no driver: no GPU expected
    for name in ("0000:18:00.0", "0000:2a:00.0"):
        (tmp_path / "gpus" / name).mkdir(parents=True)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert gpus_ahead() == (0, 1)
    assert gpus_ahead("1") == (1,)
    assert gpus_ahead([0, 1]) == (0, 1)
    assert gpus_ahead("x") == ()  # not valid: choose() reports it
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert gpus_ahead() == (0,)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert gpus_ahead() == ()


@pytest.mark.parametrize("devices", [(0,), (0, 1)])
def test_the_scanner_takes_the_plan_made_ahead(devices):
    offsets = _offsets(_lengths(40_000))
    ahead = _gpu_scanner(offsets, devices, sms=DEFAULT_GPU.sms)
    make = ahead.plan_ahead(QUERIES)
    assert len(scan_mod._AHEAD) == 2 * len(devices)  # promised: the first group and the rest
    assert not any(f.done() for f in scan_mod._AHEAD.values())
    make()
    assert len(scan_mod._AHEAD) == 2 * len(devices)
    assert ahead.trace.seconds.get("plan", 0) > 0
    made = [f.result() for f in scan_mod._AHEAD.values()]
    later = _gpu_scanner(offsets, devices)  # its multiprocessors asked of the GPU
    fresh = _gpu_scanner(offsets, devices, sms=DEFAULT_GPU.sms)
    for scanner, again in zip(later.scanners, fresh.scanners, strict=True):
        first = scanner._first_chunk()
        groups = scanner._groups(first, QUERIES, scanner._units(QUERIES))
        assert len(groups) == 2
        for group in groups:
            units = [[QUERIES[k] for k in u] for u in group]
            plan = scanner.launches(first, units)
            assert any(plan is p for p in made)
            assert "plan" not in scanner.trace.seconds
            # the same as the plan the scan makes itself
            name, batches, predicted, launches = again._planned(first, units)
            assert plan[0] == name and plan[2] == predicted
            for a, b in zip(plan[1], batches, strict=True):
                assert np.array_equal(a.queries, b.queries)
                assert np.array_equal(a.subjects, b.subjects)
            for a, b in zip(plan[3], launches, strict=True):
                assert a.shape == b.shape and a.blocks == b.blocks and a.longest == b.longest
                assert np.array_equal(a.subjects, b.subjects)
    assert scan_mod._AHEAD == {}  # each plan taken once


def test_the_scan_waits_for_a_plan_being_made():
    offsets = _offsets(_lengths(20_000))
    make = _gpu_scanner(offsets, sms=DEFAULT_GPU.sms).plan_ahead(QUERIES)
    promised = list(scan_mod._AHEAD.values())
    maker = threading.Timer(0.2, make)
    maker.start()
    scanner = _gpu_scanner(offsets).scanners[0]
    plan = scanner.launches(*scanner._first(QUERIES))  # waits for the maker
    maker.join()
    assert plan is promised[0].result() and "plan" not in scanner.trace.seconds


def test_another_gpu_plans_again():
    offsets = _offsets(_lengths(20_000))
    _gpu_scanner(offsets, sms=DEFAULT_GPU.sms).plan_ahead(QUERIES)()
    other = _gpu_scanner(offsets, sms=DEFAULT_GPU.sms - 18).scanners[0]
    other.launches(*other._first(QUERIES))
    assert "plan" in other.trace.seconds  # planned for its own GPU
    assert len(scan_mod._AHEAD) == 2  # the plans made ahead are left where no scanner took them
    shorter = _gpu_scanner(_offsets(_lengths(20_000, seed=4)),
                           sms=DEFAULT_GPU.sms).scanners[0]
    shorter.launches(*shorter._first(QUERIES))
    assert "plan" in shorter.trace.seconds  # another database


def _inputs(scoring: Scoring) -> tuple:
    """A database of 3,000 proteins and three queries (Prepared)."""
    rng = np.random.default_rng(5)
    letters = np.array(list("ACDEFGHIKLMNPQRSTVWY"))
    db = open_database(["".join(rng.choice(letters, int(n)))
                        for n in _lengths(3_000).clip(1)], scoring)
    texts = ["".join(rng.choice(letters, n)) for n in (90, 400, 250)]
    return db, Prepared.from_codes(texts, ["a", "b", "c"], [scoring.encode(t) for t in texts])


def test_search_plan_ahead_is_the_search_scanners_plan(monkeypatch):
    scoring = Scoring()
    db, queries = _inputs(scoring)
    monkeypatch.setattr(search_api, "gpus_ahead", lambda devices: ())
    assert plan_ahead(queries, db, scoring) is None
    assert scan_mod._AHEAD == {}  # no GPU seen: nothing planned
    monkeypatch.setattr(search_api, "gpus_ahead", lambda devices: (0,))
    trace = Trace()
    plan_ahead(queries, db, scoring, trace=trace).join()
    assert len(scan_mod._AHEAD) == 2 and trace.seconds["plan"] > 0  # packed: two units
    scanner = make_scanner(Device("gpu", (0,)), db.residues, db.offsets,
                           db.codes_for(scoring), scoring.table, scoring.gap_open,
                           scoring.gap_extend, 0, trace=Trace()).scanners[0]
    first = scanner._first_chunk()
    for group in scanner._groups(first, queries.codes, scanner._units(queries.codes)):
        scanner.launches(first, [[queries.codes[k] for k in u] for u in group])
    assert scan_mod._AHEAD == {} and "plan" not in scanner.trace.seconds


@pytest.mark.gpu
def test_a_gpu_search_takes_the_plans_made_ahead():
    assert gpus_ahead(), "the driver's list of GPUs is not seen"
    scoring = Scoring()
    db, queries = _inputs(scoring)
    options = {"device": "gpu", "devices": [0], "top": 5, "stats": "none"}
    expected = search(queries.texts, db, scoring, **options)
    plan_ahead(queries, db, scoring, devices=[0]).join()
    assert len(scan_mod._AHEAD) == 2
    trace = Trace()
    assert search(queries.texts, db, scoring, trace=trace, **options) == expected
    assert scan_mod._AHEAD == {}  # both taken: this GPU is the one expected
