"""wavedp.distributed: a search across a Dask cluster (two local worker processes) equals the
single-process search, hit for hit, also when a worker dies mid-run; its errors are
InputErrors; shard_ranges covers the database in balanced, non-empty shards."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import DNA, PROTEIN, random_seq, related

pytest.importorskip("distributed")

import wavedp  # noqa: E402
from wavedp.distributed import ClusterScanner, connect, shard_ranges  # noqa: E402
from wavedp.engines.common import LOCAL  # noqa: E402
from wavedp.search.database import Database  # noqa: E402
from wavedp.search.scan import CpuScanner  # noqa: E402

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
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as c:
        yield c


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
        want = CpuScanner(db, db.codes_for(PROT), PROT, LOCAL).top(queries, k, thresholds)
        for (gi, gs), (wi, ws) in zip(got, want, strict=True):
            assert gi.dtype == np.int64 and gs.dtype == np.int32
            np.testing.assert_array_equal(gi, wi)
            np.testing.assert_array_equal(gs, ws)
    assert sum(cells) == 3 * sum(q.size for q in queries) * db.total_residues


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
        connect(scheduler="tcp://127.0.0.1:1", timeout=1)


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
    client = connect(cluster="local", workers=1)
    try:
        assert len(client.nthreads()) == 1
        got = wavedp.search(prot_q, prot_db, PROT, device="cpu", client=client)
        assert got == wavedp.search(prot_q, prot_db, PROT, device="cpu")
    finally:
        client.close()
        client.cluster.close()


def test_missing_dask_is_an_input_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(wavedp.InputError, match=r"pip install 'wavedp\[cluster\]'"):
        connect(cluster="local")


def test_import_wavedp_does_not_import_dask():
    code = ("import sys, wavedp; "
            "assert not {'dask', 'distributed'} & set(sys.modules), 'dask imported'")
    subprocess.run([sys.executable, "-c", code], check=True,
                   env={**os.environ, "PYTHONPATH": str(Path(wavedp.__file__).parents[1])})


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
    want = CpuScanner(db, db.codes_for(PROT), PROT, LOCAL).top(codes, 5, thresholds)
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

