"""wavedp.dbsearch.cluster: a search across a Dask cluster (two local worker processes) equals the
single-process search, hit for hit, also when a worker dies mid-run; its errors are
InputErrors; shard_ranges covers the database in balanced, non-empty shards."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import DNA, PROTEIN, cpu_scanner, fresh, random_seq, related

pytest.importorskip("distributed")

from test_search_cli import interrupt_after  # noqa: E402

import wavedp  # noqa: E402
import wavedp.cli as cli_module  # noqa: E402
from wavedp.db.database import Database  # noqa: E402
from wavedp.dbsearch import api as search_api  # noqa: E402
from wavedp.dbsearch import cluster as cluster_module  # noqa: E402
from wavedp.dbsearch import hitlist  # noqa: E402
from wavedp.dbsearch.cluster import (  # noqa: E402
    LOCAL_START_ATTEMPTS,
    ClusterScanner,
    _client_of,
    _start_local,
    close,
    connect,
)
from wavedp.dbsearch.journal import journal_path  # noqa: E402
from wavedp.engines.common import LOCAL, shard_ranges  # noqa: E402

PROT = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
DNA_SCORING = wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
COMPLEMENT = str.maketrans("ACGT", "TGCA")


def _write(path: Path, texts: list[str]) -> Path:
    path.write_text("".join(f">s{k} record {k}\n{t}\n" for k, t in enumerate(texts)))
    return path


def _texts(rng, letters: str, count: int, seed: str) -> list[str]:
    """Random sequences, some related to ``seed`` and repeated across the database (ties
    between shards), an empty one and a one-letter one."""
    texts = [random_seq(rng, letters, int(rng.integers(1, 150))) for _ in range(count)]
    texts[3], texts[7] = "", letters[0]
    twin = related(rng, seed, letters, 0.2)
    for k in (10, count // 3, count // 2, count - 5):
        texts[k] = twin
    for k in rng.integers(0, count, count // 10):
        texts[int(k)] = related(rng, seed, letters, 0.35)
    return texts


@pytest.fixture(scope="module")
def client():
    """A client of two local worker processes, started as connect starts one (a slow event
    loop is tried again)."""
    import distributed

    c = _start_local(lambda: _client_of(distributed, distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")))
    yield c
    close(c)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """(protein queries, protein .wdb, DNA queries, DNA .wdb)."""
    tmp = tmp_path_factory.mktemp("dbs")
    rng = np.random.default_rng(2024)
    prot_q = [random_seq(rng, PROTEIN, int(n)) for n in (60, 120, 35)]
    dna_q = [random_seq(rng, DNA, int(n)) for n in (80, 40)]
    prot = _write(tmp / "prot.fa", _texts(rng, PROTEIN, 300, prot_q[0]))
    dna_texts = _texts(rng, DNA, 250, dna_q[0])
    for k in (20, 150):  # minus-strand hits
        dna_texts[k] = related(rng, dna_q[0], DNA, 0.1)[::-1].translate(COMPLEMENT)
    dna = _write(tmp / "dna.fa", dna_texts)
    Database.build(prot, tmp / "prot.wdb", progress=False)
    Database.build(dna, tmp / "dna.wdb", alphabet="dna", progress=False)
    return prot_q, str(tmp / "prot.wdb"), dna_q, str(tmp / "dna.wdb")


@pytest.mark.parametrize("mode, top, min_score", [
    ("local", 5, None), ("local", 0, 30), ("global", 5, None), ("global", 0, -150),
    ("semiglobal", 3, None),
])
@pytest.mark.parametrize("dna", [False, True])
def test_cluster_search_equals_local_search(client, data, mode, top, min_score, dna):
    prot_q, prot_db, dna_q, dna_db = data
    queries, db, scoring = (dna_q, dna_db, DNA_SCORING) if dna else (prot_q, prot_db, PROT)
    kwargs = dict(top=top, min_score=min_score, mode=mode, device="cpu")
    want = wavedp.search(queries, db, scoring, **kwargs)
    got = wavedp.search(queries, db, scoring, client=client, **kwargs)
    assert got == want
    assert any(want)
    if dna:
        assert {h.strand for hits in got for h in hits} == {"+", "-"}


def test_scanner_many_shards_and_progress(client, data):
    prot_q, prot_db, _, _ = data
    db = Database.open(prot_db)
    queries = [PROT.encode(q) for q in prot_q]
    thresholds = [None, 20, None]
    cells = []
    scanner = ClusterScanner(client, db, PROT, LOCAL, "cpu", shards=9)
    assert len(scanner.ranges) == 9
    for k in (0, 1, 4):
        got = scanner.top(queries, k, thresholds, cells.append)
        want = cpu_scanner(db, db.codes_for(PROT), PROT, LOCAL).top(queries, k, thresholds)
        for (gi, gs), (wi, ws) in zip(got, want, strict=True):
            assert gi.dtype == np.int64 and gs.dtype == np.int32
            np.testing.assert_array_equal(gi, wi)
            np.testing.assert_array_equal(gs, ws)
    assert sum(cells) == 3 * sum(q.size for q in queries) * db.total_residues


def _nowhere(client, monkeypatch, times: int) -> list[str]:
    """The next ``times`` shard tasks ``client`` submits go to a worker that does not
    exist (the scheduler holds them, nobody runs them: a stall); the keys submitted."""
    real, keys = client.submit, []

    def submit(*args, **kwargs):
        keys.append(kwargs["key"])
        if len(keys) <= times:
            kwargs.update(workers=["tcp://127.0.0.1:9"], allow_other_workers=False)
        return real(*args, **kwargs)

    monkeypatch.setattr(client, "submit", submit)
    monkeypatch.setattr(cluster_module, "STALL_CHECK", 0.3)
    return keys


def test_a_stalled_round_is_submitted_again(client, data, monkeypatch):
    """A shard task the cluster holds but never runs (every worker idle) is submitted again
    under a new key, and the search equals the local one."""
    prot_q, prot_db, _, _ = data
    db = Database.open(prot_db)
    queries = [PROT.encode(q) for q in prot_q]
    scanner = ClusterScanner(client, db, PROT, LOCAL, "cpu", shards=3)
    keys = _nowhere(client, monkeypatch, 1)
    got = scanner.top(queries, 0, [None] * len(queries))
    want = cpu_scanner(db, db.codes_for(PROT), PROT, LOCAL).top(queries, 0, [None] * 3)
    for (gi, gs), (wi, ws) in zip(got, want, strict=True):
        np.testing.assert_array_equal(gi, wi)
        np.testing.assert_array_equal(gs, ws)
    assert len(keys) == 4 and keys[3].endswith("-1-0") and keys[0].endswith("-0-0")
    assert not [k for ks in client.processing().values() for k in ks if k in keys]


def test_a_round_that_stays_stalled_fails_in_one_line(client, data, monkeypatch):
    prot_q, prot_db, _, _ = data
    db = Database.open(prot_db)
    queries = [PROT.encode(q) for q in prot_q]
    scanner = ClusterScanner(client, db, PROT, LOCAL, "cpu", shards=2)
    keys = _nowhere(client, monkeypatch, 99)
    with pytest.raises(wavedp.DeviceError, match=r"ran none of 2 shard task\(s\) for 0.6 s, "
                       r"3 times \(the first: sequences 0 to \d+\)$") as info:
        scanner.top(queries, 5, [None] * len(queries))
    assert "\n" not in str(info.value) and len(keys) == 6
    deadline = time.monotonic() + 10  # the failed round's tasks are cancelled
    while any(k in keys for ks in client.processing().values() for k in ks):
        assert time.monotonic() < deadline
        time.sleep(0.05)


# ---- errors -----------------------------------------------------------------------------------

def test_in_memory_database_is_an_input_error(client):
    with pytest.raises(wavedp.InputError, match="wavedp makedb"):
        wavedp.search(["ACDEFG"], ["ACDEFGH", "KLMN"], PROT, device="cpu", client=client)


def test_path_a_worker_cannot_read(client, data, tmp_path):
    prot_q, prot_db, _, _ = data
    path = tmp_path / "gone.wdb"
    shutil.copytree(prot_db, path)
    db = Database.open(path)  # the client maps it; the workers will not find it
    shutil.rmtree(path)
    with pytest.raises(wavedp.InputError) as info:
        wavedp.search(prot_q, db, PROT, device="cpu", client=client)
    message = str(info.value)
    assert str(path) in message and "worker tcp://" in message and "\n" not in message


def test_another_database_at_the_path(client, data, tmp_path):
    prot_q, prot_db, _, _ = data
    path = tmp_path / "moved.wdb"
    shutil.copytree(prot_db, path)
    db = Database.open(path)
    Database.build(_write(tmp_path / "other.fa", ["ACDEFGHIK", "LMNPQ"]), path, progress=False)
    with pytest.raises(wavedp.InputError, match="not the database the client opened"):
        wavedp.search(prot_q, db, PROT, device="cpu", client=client)


def test_unreachable_scheduler():
    with pytest.raises(wavedp.InputError, match=r"tcp://127\.0\.0\.1:1\b"):
        connect(scheduler="tcp://127.0.0.1:1", timeout=0.5)


@pytest.mark.parametrize("kwargs", [
    {}, {"scheduler": "tcp://127.0.0.1:1", "cluster": "local"}, {"cluster": "slurm"},
    {"cluster": "local", "workers": 0}, {"scheduler": "tcp://127.0.0.1:1", "workers": 2},
    {"scheduler": "nonsense://x"},
])
def test_connect_rejects_bad_arguments(kwargs):
    with pytest.raises(wavedp.InputError):
        connect(**kwargs)


def test_connect_starts_a_local_cluster(data):
    prot_q, prot_db, _, _ = data
    before = _children()
    client = connect(cluster="local", workers=1)
    try:
        assert len(client.nthreads()) == 1
        got = wavedp.search(prot_q, prot_db, PROT, device="cpu", client=client)
        assert got == wavedp.search(prot_q, prot_db, PROT, device="cpu")
    finally:
        close(client)
    assert _children() == before


def test_connect_retries_a_slow_event_loop(monkeypatch):
    """Dask asserts that its IO-loop thread came up within 10 s; connect tries again, and after
    LOCAL_START_ATTEMPTS misses it raises one InputError."""
    import distributed

    real, calls = distributed.LocalCluster, []

    def slow_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise AssertionError
        return real(*args, **kwargs)

    monkeypatch.setattr(cluster_module, "gpu_status", lambda: (False, "no GPU here (test)"))
    monkeypatch.setattr(distributed, "LocalCluster", slow_once)
    before = _children()
    client = connect(cluster="local", workers=1)
    try:
        assert len(client.nthreads()) == 1 and len(calls) == 2
    finally:
        close(client)
    assert _children() == before

    def never(*args, **kwargs):
        calls.append(1)
        raise AssertionError

    calls.clear()
    monkeypatch.setattr(distributed, "LocalCluster", never)
    with pytest.raises(wavedp.InputError, match="event loop did not come up in 3 attempts"):
        connect(cluster="local", workers=1)
    assert len(calls) == LOCAL_START_ATTEMPTS


@pytest.mark.gpu
def test_local_cuda_cluster_has_a_worker_per_gpu(data):
    """With dask-cuda, cluster='local' starts one worker per GPU, each with its own GPU first
    in CUDA_VISIBLE_DEVICES; a GPU search across them equals one GPU's and the CPU's."""
    pytest.importorskip("dask_cuda")
    prot_q, prot_db, dna_q, dna_db = data
    client = connect(cluster="local")
    try:
        visible = client.run(lambda: os.environ.get("CUDA_VISIBLE_DEVICES", ""))
        firsts = sorted(v.split(",")[0] for v in visible.values())
        assert len(firsts) == wavedp.device.gpu_count() and len(set(firsts)) == len(firsts)
        for queries, db, scoring in ((prot_q, prot_db, PROT), (dna_q, dna_db, DNA_SCORING)):
            got = wavedp.search(queries, db, scoring, top=0, device="gpu", client=client)
            assert got == wavedp.search(queries, db, scoring, top=0, device="gpu", devices=[0])
            assert got == wavedp.search(queries, db, scoring, top=0, device="cpu") and any(got)
    finally:
        close(client)


def test_missing_dask_is_an_input_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(wavedp.InputError, match=r"pip install 'wavedp\[cluster\]'"):
        connect(cluster="local")


def test_import_wavedp_does_not_import_dask():
    code = ("import sys, wavedp; "
            "assert not {'dask', 'distributed'} & set(sys.modules), 'dask imported'")
    fresh(["-c", code], check=True)


# ---- shard_ranges -----------------------------------------------------------------------------

def _offsets(lengths) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


def _check_cover(ranges: list[tuple[int, int]], n: int) -> None:
    assert ranges[0][0] == 0 and ranges[-1][1] == n
    assert all(a < b for a, b in ranges)
    assert all(b == c for (_, b), (c, _) in zip(ranges, ranges[1:], strict=False))


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("parts", [1, 2, 3, 7, 64])
def test_shard_ranges_balance_residues(seed, parts):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 500, int(rng.integers(200, 2000)))
    offsets = _offsets(lengths)
    ranges = shard_ranges(offsets, parts)
    assert len(ranges) == parts
    _check_cover(ranges, lengths.size)
    share, longest = offsets[-1] / parts, int(lengths.max())
    for a, b in ranges:
        assert abs(int(offsets[b] - offsets[a]) - share) <= longest


def test_shard_ranges_more_parts_than_sequences():
    offsets = _offsets([5, 0, 7])
    assert shard_ranges(offsets, 10) == [(0, 1), (1, 2), (2, 3)]
    assert shard_ranges(offsets, 1) == [(0, 3)]


@pytest.mark.parametrize("lengths", [[1000, 1, 1, 1, 1], [0] * 9, [0, 0, 0, 50], [3]])
def test_shard_ranges_never_empty(lengths):
    for parts in range(1, len(lengths) + 2):
        ranges = shard_ranges(_offsets(lengths), parts)
        assert len(ranges) == min(parts, len(lengths))
        _check_cover(ranges, len(lengths))


@pytest.mark.parametrize("parts", [0, -1, 2.5, True])
def test_shard_ranges_rejects_bad_parts(parts):
    with pytest.raises(wavedp.InputError):
        shard_ranges(_offsets([1, 2]), parts)


# ---- batches, devices ---------------------------------------------------------------------------

def test_one_round_of_shard_tasks_carries_a_batch_of_queries(client, data, monkeypatch):
    _, _, dna_q, dna_db = data
    rounds = []
    real = ClusterScanner.top

    def top(self, queries, *args, **kwargs):
        rounds.append(len(queries))
        return real(self, queries, *args, **kwargs)

    monkeypatch.setattr(ClusterScanner, "top", top)
    # BLAST's tables: a fit's sample would hold this small database whole, and its scores
    # stand for the cluster's scan
    kw = {"top": 0, "device": "cpu", "stats": "blast"}
    want = wavedp.search(dna_q, dna_db, DNA_SCORING, **kw)
    assert wavedp.search(dna_q, dna_db, DNA_SCORING, client=client, **kw) == want
    assert rounds == [4]  # both queries, both strands
    rounds.clear()
    monkeypatch.setitem(search_api.BATCH_CELLS, "cluster", 1)  # a query per round
    assert wavedp.search(dna_q, dna_db, DNA_SCORING, client=client, **kw) == want
    assert rounds == [2, 2]


def test_partition_reaches_the_workers(client, data, monkeypatch):
    """--partition travels with the shard tasks: the cluster's spec carries it, and a worker
    builds its scanner with it (the engine call of a worker, run here in this process)."""
    prot_q, prot_db, _, _ = data
    specs = []
    real_init = ClusterScanner.__init__

    def init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        specs.append(self.spec)

    monkeypatch.setattr(ClusterScanner, "__init__", init)
    got = wavedp.search(prot_q, prot_db, PROT, device="cpu", client=client,
                        partition="dynamic1")
    assert got == wavedp.search(prot_q, prot_db, PROT, device="cpu")
    assert [spec.partition for spec in specs] == ["dynamic1"]
    built = []
    monkeypatch.setattr(cluster_module.engines, "scanner",
                        lambda *args, **kwargs: built.append((args, kwargs)) or "a scanner")
    assert cluster_module._scanner.__wrapped__(specs[0], 0, 3) == "a scanner"
    assert built[0][0][0].kind == "cpu" and built[0][1]["partition"] == "dynamic1"
    with pytest.raises(wavedp.InputError, match="partition must be one of"):
        wavedp.search(prot_q, prot_db, PROT, device="cpu", client=client, partition="best")


def test_gpu_workers_for_a_client_without_gpu(client, data, monkeypatch):
    """device='gpu' with a client: the workers scan on 'gpu' (here CPU workers stand in for
    GPU ones); this process has no GPU, so it aligns the hits on its CPU."""
    prot_q, prot_db, _, _ = data
    monkeypatch.setattr(wavedp.device, "gpu_status", lambda: (False, "no GPU here (test)"))
    with pytest.raises(wavedp.InputError, match="no GPU here"):
        wavedp.search(prot_q, prot_db, PROT, device="gpu")  # no client: no fallback
    scanned, aligned = [], []
    real_init, real_pairs = ClusterScanner.__init__, hitlist.pair_results

    def init(self, client, db, scoring, mode, device, partition="auto", shards=None):
        scanned.append(device)
        real_init(self, client, db, scoring, mode, "cpu", partition, shards)

    def run_pairs(*args, **kwargs):
        aligned.append(args[6].kind)
        return real_pairs(*args, **kwargs)

    monkeypatch.setattr(ClusterScanner, "__init__", init)
    monkeypatch.setattr(hitlist, "pair_results", run_pairs)
    got = wavedp.search(prot_q, prot_db, PROT, device="gpu", client=client)
    assert got == wavedp.search(prot_q, prot_db, PROT, device="cpu") and any(got)
    assert scanned == ["gpu"] and set(aligned) == {"cpu"}


def test_workers_without_gpu_refuse_device_gpu(client, data):
    if wavedp.device.gpu_status()[0]:
        pytest.skip("the workers have a GPU")
    prot_q, prot_db, _, _ = data
    with pytest.raises(wavedp.InputError, match=r"worker tcp://.*device 'gpu'"):
        wavedp.search(prot_q, prot_db, PROT, device="gpu", client=client)


# ---- the command line: --cluster local, --scheduler --------------------------------------------

def _cli(*args: object):
    return CliRunner().invoke(cli_module.cli, [str(a) for a in args])


def _children() -> set[int]:
    """The processes this one started (multiprocessing's resource tracker aside)."""
    psutil = pytest.importorskip("psutil")
    found = set()
    for child in psutil.Process().children(recursive=True):
        try:
            if "resource_tracker" not in " ".join(child.cmdline()):
                found.add(child.pid)
        except psutil.Error:  # gone meanwhile
            pass
    return found


def test_cli_local_cluster_writes_the_same_file(data, tmp_path):
    prot_q, prot_db, _, _ = data
    q = _write(tmp_path / "q.fa", prot_q)
    plain, spread = tmp_path / "plain.tsv", tmp_path / "cluster.tsv"
    args = ["search", q, prot_db, "--device", "cpu", "--top", "0"]
    assert _cli(*args, "-o", plain).exit_code == 0
    before = _children()
    result = _cli(*args, "--cluster", "local", "--workers", "2", "-o", spread)
    assert result.exit_code == 0, result.output
    assert "using the Dask cluster at tcp://" in result.stderr and "(2 workers" in result.stderr
    assert plain.stat().st_size > 0 and spread.read_bytes() == plain.read_bytes()
    assert _children() == before  # the local cluster is closed


def test_cli_resume_across_cluster_options(client, data, tmp_path, monkeypatch):
    """A --cluster local run stopped by Ctrl-C closes its cluster; resumed on another cluster
    (--scheduler: the cluster options are not part of the signature), it writes the file of
    an uninterrupted run."""
    prot_q, prot_db, _, _ = data
    q = _write(tmp_path / "q.fa", prot_q)
    args = ["search", q, prot_db, "--device", "cpu", "--top", "3"]
    expected = _cli(*args).stdout
    out = tmp_path / "out.tsv"
    before = _children()
    skips = interrupt_after(monkeypatch, 1)
    result = _cli(*args, "--cluster", "local", "--workers", "1", "-o", out, "--resume")
    assert result.exit_code == 130 and not out.exists()
    assert _children() == before
    monkeypatch.undo()
    resumed = interrupt_after(monkeypatch, 1000)
    result = _cli(*args, "--scheduler", client.scheduler.address, "-o", out, "--resume")
    assert result.exit_code == 0, result.output
    assert skips + resumed == [set(), {0}]
    assert expected and out.read_text() == expected
    assert not os.path.exists(journal_path(str(out)))
    assert len(client.nthreads()) == 2  # the scheduler's cluster is left running


# ---- Database.slice ---------------------------------------------------------------------------

@pytest.mark.parametrize("in_memory", [False, True])
def test_database_slice_is_a_view(data, in_memory):
    prot_q, prot_db, _, _ = data
    db = Database.open(prot_db)
    if in_memory:
        db = Database.from_sequences([db.text(k) for k in range(len(db))], list(db.ids))
    n = len(db)
    for start, stop in [(0, n), (0, 1), (n - 1, n), (3, 8), (n // 3, n // 2)]:
        part = db.slice(start, stop)
        assert part.path is None and (part.alphabet, part.letters) == (db.alphabet, db.letters)
        assert len(part) == stop - start and part.offsets[0] == 0
        assert part.total_residues == db.offsets[stop] - db.offsets[start]
        assert np.shares_memory(part.residues, db.residues)
        assert np.shares_memory(part.lengths, db.lengths)
        assert list(part.ids) == db.ids[start:stop] and part.ids[-1] == db.id(stop - 1)
        for k in range(len(part)):
            np.testing.assert_array_equal(part.codes(k), db.codes(start + k))
        texts = [db.text(k) for k in range(start, stop)]
        assert [part.text(k) for k in range(len(part))] == texts
        alone = Database.from_sequences(texts, db.ids[start:stop])
        np.testing.assert_array_equal(part.composition, alone.composition)
        np.testing.assert_array_equal(part.offsets, alone.offsets)
        assert part.longest == alone.longest
    inner = db.slice(5, 60).slice(2, 10)
    assert list(inner.ids) == db.ids[7:15] and inner.ids[1:3] == db.ids[8:10]
    assert np.shares_memory(inner.residues, db.residues)
    part = db.slice(10, 200)
    alone = Database.from_sequences([db.text(k) for k in range(10, 200)], db.ids[10:200])
    assert wavedp.search(prot_q[:1], part, PROT, device="cpu") == \
        wavedp.search(prot_q[:1], alone, PROT, device="cpu")


@pytest.mark.parametrize("start, stop", [(0, 0), (5, 3), (-1, 2), (0, 301)])
def test_database_slice_out_of_range(data, start, stop):
    db = Database.open(data[1])  # 300 sequences
    with pytest.raises(wavedp.InputError, match="slice"):
        db.slice(start, stop)


# ---- a worker dies mid-run (last: the cluster restarts the worker) ----------------------------

def test_worker_killed_mid_run(client, tmp_path):
    """A worker process killed while it holds shard tasks: Dask reruns them elsewhere and the
    results equal the single-process scanner's."""
    rng = np.random.default_rng(7)
    queries = [random_seq(rng, PROTEIN, 700) for _ in range(40)]
    texts = [random_seq(rng, PROTEIN, int(n)) for n in rng.integers(50, 350, 3000)]
    db = Database.build(_write(tmp_path / "big.fa", texts), tmp_path / "big.wdb",
                        progress=False)
    codes = [PROT.encode(q) for q in queries]
    thresholds = [None] * len(codes)
    want = cpu_scanner(db, db.codes_for(PROT), PROT, LOCAL).top(codes, 5, thresholds)
    pids = client.run(os.getpid)
    scanner = ClusterScanner(client, db, PROT, LOCAL, "cpu", shards=6)
    killed = {}

    def busy() -> list[str]:
        return [address for address, keys in client.processing().items()
                if any(str(key).startswith("wavedp-scan-") for key in keys)]

    def kill_when_busy() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            first = busy()
            if first:
                time.sleep(0.2)  # into its task
                if first[0] in busy():
                    os.kill(pids[first[0]], signal.SIGKILL)
                    killed[first[0]] = time.monotonic()
                    return
            time.sleep(0.005)

    killer = threading.Thread(target=kill_when_busy)
    killer.start()
    got = scanner.top(codes, 5, thresholds)
    finished = time.monotonic()
    killer.join()
    assert killed and next(iter(killed.values())) < finished
    for (gi, gs), (wi, ws) in zip(got, want, strict=True):
        np.testing.assert_array_equal(gi, wi)
        np.testing.assert_array_equal(gs, ws)
    client.wait_for_workers(2, timeout=60)



def test_a_profile_or_iterations_on_a_cluster_searcher_is_one_line(client, data):
    prot_q, prot_db, _, _ = data
    searcher = wavedp.Searcher(prot_db, PROT, device="cpu", client=client)
    profile = wavedp.Profile.from_matrix(prot_q[0], PROT)
    for ask in (lambda: searcher.search([profile]),
                lambda: searcher.search(prot_q[:1], iterations=2)):
        with pytest.raises(wavedp.InputError, match="drop the cluster"):
            ask()
