"""Plans made ahead (``engines/cuda/scan/ahead.py``): the GPUs a command expects, the plans
a child process makes before CuPy is loaded, and the scanner made once the GPUs are up
taking those very plans, or planning itself where its GPU or database is not the one
expected. Host only but the last: planning needs no GPU."""

from __future__ import annotations

import os
import textwrap
import threading

import numpy as np
import pytest
from helpers import fresh

import wavedp.device as device_mod
from wavedp import Scoring
from wavedp.db.database import Database
from wavedp.device import gpus_ahead
from wavedp.engines.cuda.gpus import GpuScanner
from wavedp.engines.cuda.scan import ahead
from wavedp.engines.cuda.scan import scanner as scan_mod
from wavedp.engines.cuda.scan.model import DEFAULT_GPU
from wavedp.search.api import plan_ahead
from wavedp.trace import Trace


@pytest.fixture(autouse=True)
def _empty_store(monkeypatch, request):
    """Each test starts with no plan made ahead; off the GPU, the scanners' GPUs have the
    default model's multiprocessors."""
    monkeypatch.setattr(ahead, "_STORE", {})
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


def _inputs_on_disk(folder, subjects: int, queries: tuple[int, ...], seed: int
                    ) -> tuple[str, str]:
    """(q.fa, db.wdb) in ``folder``: queries of these lengths and a database of
    ``subjects`` random proteins."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("ACDEFGHIKLMNPQRSTVWY"))
    for name, lengths in (("db.fa", _lengths(subjects).clip(1)), ("q.fa", queries)):
        with open(folder / name, "w") as f:
            for k, n in enumerate(lengths):
                f.write(f">{name[0]}{k}\n{''.join(rng.choice(letters, int(n)))}\n")
    Database.build(folder / "db.fa", folder / "db.wdb", progress=False)
    return str(folder / "q.fa"), str(folder / "db.wdb")


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


class _FakeDriver:
    """The driver's C calls open_contexts makes, recorded (status 0 each, or ``failing``'s)."""

    def __init__(self, failing: str = "") -> None:
        self.calls: list[str] = []
        self.failing = failing

    def __getattr__(self, name: str):
        def call(*args) -> int:
            self.calls.append(name)
            return 100 if name == self.failing else 0
        return call


def test_open_contexts_starts_the_driver_then_each_context(monkeypatch):
    fake = _FakeDriver()
    monkeypatch.setattr(device_mod, "driver", lambda: fake)
    assert device_mod.open_contexts((0, 1))
    assert fake.calls == ["cuInit"] + ["cuDeviceGet", "cuDevicePrimaryCtxRetain"] * 2
    assert not device_mod.open_contexts(())  # no GPU expected: nothing called
    assert len(fake.calls) == 5
    for failing, calls in (("cuInit", 1), ("cuDeviceGet", 2)):
        fake = _FakeDriver(failing)
        monkeypatch.setattr(device_mod, "driver", lambda fake=fake: fake)
        assert not device_mod.open_contexts((0, 1))  # CuPy meets the failure and says it
        assert len(fake.calls) == calls


def test_open_contexts_without_a_driver(monkeypatch):
    monkeypatch.setattr(device_mod, "DRIVER_LIBRARY", "libwavedp-no-such-driver.so")
    device_mod.driver.cache_clear()
    try:
        assert not device_mod.open_contexts((0,))
    finally:
        device_mod.driver.cache_clear()


@pytest.mark.gpu
def test_cupy_works_in_the_context_opened_first():
    assert device_mod.open_contexts((0,))
    import cupy

    assert int(cupy.arange(10).sum()) == 45


@pytest.mark.parametrize("devices", [(0,), (0, 1)])
def test_the_scanner_takes_the_plan_made_ahead(devices):
    offsets = _offsets(_lengths(40_000))
    promise, *made = ahead.plans([scanner.ahead(QUERIES) for scanner in
                                  _gpu_scanner(offsets, devices, sms=DEFAULT_GPU.sms).scanners])
    assert len(made) == 2 * len(devices)  # every shard's first group, then their rest
    assert promise == (None, [content for content, _ in made])
    for content, plan in made:
        ahead._STORE[content] = plan
    later = _gpu_scanner(offsets, devices)  # its multiprocessors asked of the GPU
    fresh = _gpu_scanner(offsets, devices, sms=DEFAULT_GPU.sms)
    for scanner, again in zip(later.scanners, fresh.scanners, strict=True):
        first, groups = scanner._first_groups(QUERIES)
        assert len(groups) == 2
        for units in groups:
            plan = scanner.launches(first, units)
            assert any(plan is p for _, p in made)
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
    assert later.trace.counts["plans made ahead"] == 2 * len(devices)
    assert not ahead.pending()  # each plan taken once


def test_another_gpu_or_database_plans_itself():
    offsets = _offsets(_lengths(20_000))
    _, *made = ahead.plans([scanner.ahead(QUERIES) for scanner in
                            _gpu_scanner(offsets, sms=DEFAULT_GPU.sms).scanners])
    for item in made:
        ahead._STORE[item[0]] = item[1]
    other = _gpu_scanner(offsets, sms=DEFAULT_GPU.sms - 18).scanners[0]
    ch, groups = other._first_groups(QUERIES)
    other.launches(ch, groups[0])
    assert "plan" in other.trace.seconds  # planned for its own GPU
    assert len(ahead._STORE) == 2  # the plans made ahead stay where no scanner took them
    another = _gpu_scanner(_offsets(_lengths(20_000, seed=4)),
                           sms=DEFAULT_GPU.sms).scanners[0]
    ch, groups = another._first_groups(QUERIES)
    another.launches(ch, groups[0])
    assert "plan" in another.trace.seconds


def test_no_fork_where_the_system_refuses_one(monkeypatch):
    def refused():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(ahead.os, "fork", refused)
    monkeypatch.setattr(ahead.threading, "active_count", lambda: 1)  # as a command's start
    opened = len(os.listdir("/proc/self/fd"))
    assert not ahead.fork([lambda: iter(())])
    assert len(os.listdir("/proc/self/fd")) == opened  # the pipe closed again
    assert not ahead.pending()


def test_no_fork_beside_other_threads():
    hold = threading.Event()
    other = threading.Thread(target=hold.wait)
    other.start()
    try:
        assert not ahead.fork([lambda: iter(())])
    finally:
        hold.set()
        other.join()


def test_no_plan_ahead_without_a_gpu_or_the_files(tmp_path, monkeypatch):
    query, database = _inputs_on_disk(tmp_path, 50, (30,), 7)
    monkeypatch.setattr(device_mod, "DRIVER_GPUS", str(tmp_path / "none"))
    assert not plan_ahead(query, database, Scoring())
    (tmp_path / "none" / "0000:18:00.0").mkdir(parents=True)
    assert not plan_ahead("-", database, Scoring())  # standard input is read once
    assert not plan_ahead(query, query, Scoring())  # a FASTA database: built in each child
    assert not plan_ahead(query, database, Scoring(), strand="plus")  # said by the search


CHILD = textwrap.dedent("""
    import importlib
    import sys
    from wavedp import Scoring
    from wavedp.device import Device
    from wavedp.engines import scanner as make_scanner
    from wavedp.engines.cuda.scan import ahead
    from wavedp.engines.cuda.scan import scanner as scan_mod
    from wavedp.engines.cuda.scan.model import DEFAULT_GPU
    from wavedp.stats.significance import Method, Sample
    from wavedp.trace import Trace

    api = importlib.import_module("wavedp.search.api")
    query, database, stats = sys.argv[1:4]
    api.gpus_ahead = lambda devices: (0, 1)
    scan_mod.device_multiprocessors = lambda d: DEFAULT_GPU.sms
    scoring = Scoring()
    db = api.open_database(database, scoring)
    api.BATCH_CELLS["gpu"] = 400 * db.total_residues  # three batches of queries
    assert api.plan_ahead(query, database, scoring, stats=stats)  # before any thread
    q = api._queries(query, scoring)
    batches = list(api.query_batches(list(range(len(q.codes))), [c.size for c in q.codes],
                                     db.total_residues, api.BATCH_CELLS["gpu"]))
    lut = db.codes_for(scoring)
    scans = [(db.residues, db.offsets, lut)]
    if stats != "none":  # the sample's scan first, as the search's (fitted.py)
        scans.insert(0, (*Sample.of(db, lut, Method.of(stats, scoring, "local")).residues(
            db, lut), None))
    scanners = [make_scanner(Device("gpu", (0, 1)), *scan, scoring.table, scoring.gap_open,
                             scoring.gap_extend, 0, trace=Trace()) for scan in scans]
    for k, batch in enumerate(batches):
        asked = [codes for *_, codes in api.batch_jobs(q, batch, (0,))[1]]
        made = []
        for gpus in scanners:
            for scanner in gpus.scanners:  # each waits while its child still plans
                scanner.trace = Trace()
                first, groups = scanner._first_groups(asked)
                for group in groups:
                    scanner.launches(first, group)
                made.append((len(groups), scanner.trace.counts.get("plans made ahead", 0),
                             "plan" in scanner.trace.seconds))
        print(k, made)
    print(len(ahead._STORE))
""")


def _planned_by_children(folder, subjects: int, seed: int, stats: str) -> list[str]:
    """What CHILD prints: a search's scanners taking the plans of its children (two GPUs)
    for a database of ``subjects`` random proteins in ``folder``."""
    query, database = _inputs_on_disk(folder, subjects, (90, 120, 250, 1200, 30, 700), seed)
    done = fresh(["-c", CHILD, query, database, stats], capture_output=True, text=True,
                 timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_child_plans_what_the_scanners_take(tmp_path):
    # the first two batches (AHEAD_BATCHES) planned by the children, each shard's first
    # unit and then the rest; the third planned by the scanners themselves
    assert _planned_by_children(tmp_path, 3_000, 5, "none") == [
        "0 [(2, 2, False), (2, 2, False)]", "1 [(1, 1, False), (1, 1, False)]",
        "2 [(1, 0, True), (1, 0, True)]", "0"]


def test_a_child_plans_the_statistics_sample_scans_too(tmp_path):
    # per batch: the sample's two shards, then the database's; a third batch planned here
    assert _planned_by_children(tmp_path, 12_000, 8, "fitted") == [
        "0 [(2, 2, False), (2, 2, False), (2, 2, False), (2, 2, False)]",
        "1 [(1, 1, False), (1, 1, False), (1, 1, False), (1, 1, False)]",
        "2 [(1, 0, True), (1, 0, True), (1, 0, True), (1, 0, True)]", "0"]


WAITS = textwrap.dedent("""
    import time
    from wavedp.engines.cuda.scan import ahead

    def work():
        yield None, [("a",)]
        time.sleep(2)
        yield ("a",), "plan a"

    assert ahead.fork([work])
    start = time.monotonic()
    print(ahead.take(("b",)), time.monotonic() - start < 1)  # not promised: no wait
    print(ahead.take(("a",)), time.monotonic() - start > 1)  # promised: waited for
""")


def test_a_scanner_waits_only_for_what_the_child_promised():
    done = fresh(["-c", WAITS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["None True", "plan a True"]


@pytest.mark.gpu
def test_a_gpu_search_takes_the_plans_made_ahead(tmp_path):
    query, database = _inputs_on_disk(tmp_path, 5_000, (90, 400, 250), 6)
    script = textwrap.dedent("""
        import sys
        from wavedp import Scoring
        from wavedp.search.api import plan_ahead, search
        from wavedp.trace import Trace

        query, database = sys.argv[1:3]
        scoring = Scoring()  # no fitted statistics: their sample, all 5,000, would take them
        options = {"device": "gpu", "devices": [0], "top": 5, "stats": "none"}
        ahead = plan_ahead(query, database, scoring, devices=[0])
        trace = Trace()
        got = search(query, database, scoring, trace=trace, **options)
        expected = search(query, database, scoring, **options)
        print(ahead, trace.counts.get("plans made ahead", 0), got == expected)
    """)
    done = fresh(["-c", script, query, database], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "2", "True"]
