"""``threads=`` and ``--threads``: 1 runs every CPU kernel on one thread, any count gives the
same results as the default (every core)."""

from __future__ import annotations

import os
from pathlib import Path

import numba
import numpy as np
import pytest
from click.testing import CliRunner

import wavedp
from wavedp.cli import cli
from wavedp.engines.cpu import threads as pool_threads
from wavedp.threads import limited

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
Q, T = str(EXAMPLES / "query.fa"), str(EXAMPLES / "target.fa")
PROT = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)


def test_limited_sets_and_restores_numbas_threads():
    before = numba.get_num_threads()
    with limited(1):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    with limited(None):
        assert numba.get_num_threads() == before


@pytest.fixture
def no_pool(monkeypatch):
    """Fail if a kernel is sent to a pool of more than one thread."""
    pool = pool_threads._pool

    def one(threads):
        assert threads == 1, f"a pool of {threads} threads was asked for"
        return pool(threads)

    monkeypatch.setattr(pool_threads, "_pool", one)


def _workload():
    rng = np.random.default_rng(2)
    letters = list("ACDEFGHIKLMNPQRSTVWY")
    queries = ["".join(rng.choice(letters, 150)) for _ in range(3)]
    texts = ["".join(rng.choice(letters, int(n))) for n in rng.integers(50, 300, 400)]
    return queries, texts


def test_one_thread_is_one_thread_and_the_same_results(no_pool, monkeypatch):
    queries, texts = _workload()
    one = {
        "search": wavedp.search(queries, texts, PROT, device="cpu", threads=1),
        "align_all": wavedp.align_all(queries, texts[:20], PROT, device="cpu", threads=1),
        "scores": wavedp.scores(queries, texts, PROT, device="cpu", threads=1),
    }
    monkeypatch.undo()  # every core again
    every = {
        "search": wavedp.search(queries, texts, PROT, device="cpu"),
        "align_all": wavedp.align_all(queries, texts[:20], PROT, device="cpu"),
        "scores": wavedp.scores(queries, texts, PROT, device="cpu"),
    }
    assert one["search"] == every["search"] and one["align_all"] == every["align_all"]
    assert np.array_equal(one["scores"], every["scores"])


COMMANDS = (["search", Q, T], ["align", Q, T, "--format", "blast6"], ["scores", Q, T])


def test_the_command_lines_one_thread(no_pool, tmp_path):
    runner = CliRunner()
    for args in COMMANDS:
        one = runner.invoke(cli, [*args, "--device", "cpu", "--threads", "1"])
        assert one.exit_code == 0 and one.stdout, one.output
    db = tmp_path / "t.wdb"
    assert runner.invoke(cli, ["makedb", T, "-o", str(db), "--threads", "1"]).exit_code == 0
    assert runner.invoke(cli, ["search", Q, str(db), "--device", "cpu", "--threads",
                               "1"]).stdout == runner.invoke(
        cli, ["search", Q, T, "--device", "cpu", "--threads", "1"]).stdout


def test_the_command_lines_outputs_do_not_depend_on_threads():
    runner = CliRunner()
    for args in COMMANDS:
        outputs = {runner.invoke(cli, [*args, "--device", "cpu", *extra]).stdout
                   for extra in ([], ["--threads", "1"], ["--threads", "2"])}
        assert len(outputs) == 1 and outputs != {""}


@pytest.mark.parametrize("value", ["0", "-2", "many"])
def test_bad_thread_counts_are_one_line(value):
    got = CliRunner().invoke(cli, ["search", Q, T, "--threads", value])
    assert got.exit_code == 2 and got.stderr.count("\n") == 1 and "--threads" in got.stderr


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "2"])
def test_bad_threads_in_python(value):
    with pytest.raises(wavedp.InputError, match="threads must be a positive integer"):
        wavedp.search(["MKV"], ["MKV"], PROT, device="cpu", threads=value)


@numba.njit(nogil=True)
def _busy(first, step, seconds, out):
    """Spins about ``seconds`` (a slow kernel)."""
    total = 0
    for k in range(int(seconds * 3e8)):
        total += k % 7
    out[first] = total


class _Stopped(Exception):
    pass


def test_a_signal_interrupts_the_wait_for_a_kernel():
    """The calling thread waits for the pool's slices in a wait a signal interrupts: a stop
    takes effect at once, not when the kernel ends."""
    import os
    import signal
    import threading
    import time

    out = np.zeros(2, np.int64)
    pool_threads.spread(_busy, 1, 0.001, out)  # compiled
    fired = []

    def stop(signum, frame):
        raise _Stopped

    old = signal.signal(signal.SIGUSR1, stop)
    timer = threading.Timer(0.3, lambda: (fired.append(time.perf_counter()),
                                          os.kill(os.getpid(), signal.SIGUSR1)))
    try:
        timer.start()
        with pytest.raises(_Stopped):
            pool_threads.spread(_busy, 1, 3.0, out)
        assert time.perf_counter() - fired[0] < 0.5
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, old)


def test_a_pool_left_by_an_exception_drops_its_queued_work():
    """A stop inside a block of wavedp.threads.pool waits for the running task only: the
    queued ones never run (a stopped search had waited for every query's queued fit)."""
    import threading

    from wavedp.threads import pool

    started, release, ran = threading.Event(), threading.Event(), []

    def task(k):
        if k == 0:
            started.set()
            release.wait(10)
        ran.append(k)

    with pytest.raises(KeyboardInterrupt):
        with pool(1, "test") as executor:
            for k in range(5):
                executor.submit(task, k)
            started.wait(10)
            threading.Timer(0.2, release.set).start()  # once the queue is dropped
            raise KeyboardInterrupt
    assert ran == [0]
    with pool(2, "test") as executor:
        assert sorted(executor.map(lambda k: k * k, range(4))) == [0, 1, 4, 9]


def test_pieces_cover_the_range_in_order(monkeypatch):
    """in_pieces: consecutive pieces, in order, covering 0..size once, on several threads
    where the size allows it; the sides' extremes and the records' lengths made from them
    equal NumPy's own, also the extremes taken with the lengths."""
    import wavedp.threads as threads
    from wavedp.engines.common import Sides
    from wavedp.pairs import Sequences

    monkeypatch.setattr(threads, "PIECE", 1000)
    monkeypatch.setattr(threads, "cores", lambda: 4)
    for size in (0, 1, 999, 1000, 4001, 12345):
        pieces = threads.in_pieces(lambda a, b: (a, b), size)
        assert pieces[0][0] == 0 and pieces[-1][1] == size
        assert all(p[1] == q[0] for p, q in zip(pieces, pieces[1:], strict=False))
        assert len(pieces) == max(1, min(4, size // 1000))
    rng = np.random.default_rng(3)
    m, n = rng.integers(0, 10**6, 12345), rng.integers(5, 9, 12345)
    assert Sides.of(m, n)[2:] == (m.min(), m.max(), n.min(), n.max())
    swapped = Sides.of(m, n).exchanged()
    assert swapped.m is n and swapped[2:] == (n.min(), n.max(), m.min(), m.max())
    offsets = np.concatenate([[0], np.cumsum(m)])
    seqs = Sequences(np.zeros(0, np.uint8), offsets, [])
    assert np.array_equal(seqs.lengths, m) and not seqs.lengths.flags.writeable
    assert seqs.extremes == (m.min(), m.max())
    for few in ([], [7], [0, 3, 0]):  # none, one, and empty records among them
        seqs = Sequences(np.zeros(0, np.uint8), np.concatenate([[0], np.cumsum(few)]), [])
        assert seqs.extremes == ((min(few), max(few)) if few else (0, 0))
    given = Sides.of(m, n, (*Sequences(np.zeros(0, np.uint8), offsets, []).extremes, 5, 8))
    assert given == Sides.of(m, n)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_pieces_in_a_forked_child(monkeypatch):
    """A child forked after the helper threads started makes its own (the parent's are not
    in it): its in_pieces returns instead of waiting for threads that do not exist."""
    import signal
    import warnings

    import wavedp.threads as threads

    monkeypatch.setattr(threads, "PIECE", 1000)
    monkeypatch.setattr(threads, "cores", lambda: 4)
    monkeypatch.setattr(threads, "HELPERS", 4)
    threads._helpers.cache_clear()  # a pool of 4, every thread started by the parent
    assert threads.in_pieces(lambda a, b: b - a, 4000) == [1000] * 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads running
        pid = os.fork()
    if pid == 0:
        signal.alarm(20)
        ok = threads.in_pieces(lambda a, b: b - a, 4000) == [1000] * 4
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    threads._helpers.cache_clear()  # the next user makes a pool of HELPERS again
    assert os.waitstatus_to_exitcode(status) == 0
