"""When a search command's planning child (``engines/cuda/scan/ahead.py``) sends each plan,
and where the child's time goes.

Run:  python benchmarks/plans_ahead.py QUERIES DB.wdb [--stats none|fitted] [--gpus 1]
(no GPU needed: the child plans without CuPy). After the command's own imports, as
``wavedp search`` makes them, :func:`wavedp.search.api.plan_ahead` forks the children as the
command does (the driver's GPU list taken to be ``--gpus`` GPUs), then spins in Python for
``--busy`` seconds, as the command's main thread holds the interpreter's lock while the
plans come; printed: the seconds after the fork at which each message (the promise, then
each plan) arrived, and the child's own steps (opening the database, reading the queries,
each plan made, pickled and written to its spill file) as the child itself timed them, with
the processor time and the page faults the child had taken by then. Then
the same work in this process, twice (each message's seconds), and a third time under
cProfile, its costliest calls. A plan that arrives after the command's
GPU is up (``--explain``'s "ahead" phase) is on the command's critical path.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pickle
import pstats
import resource
import tempfile
import threading
import time
import types

untimed: tuple = ()


def timed_steps(api, ahead, path: str, origin: float) -> None:
    """The child's steps, each appended to the file ``path`` as "what seconds" (seconds since
    ``origin``, the fork) when it ends: the database opened, the queries read, each plan
    made, pickled and written (the patches are inherited by the forked child)."""
    global untimed
    untimed = (api.open_database, api._queries, api.engines.plans_ahead, ahead.pickle)
    opened, queries, plans_ahead, real_pickle = untimed

    def stamp(what: str) -> None:
        with open(path, "a") as fh:
            use = resource.getrusage(resource.RUSAGE_SELF)
            fh.write(f"{what} {time.perf_counter() - origin:.3f} (cpu "
                     f"{use.ru_utime + use.ru_stime:.3f}, faults {use.ru_minflt})\n")

    def timed(name: str, call):
        def inner(*args, **kwargs):
            found = call(*args, **kwargs)
            stamp(f"{name} (pid {os.getpid()})" if name == "database" else name)
            return found
        return inner

    def timed_plans(*args, **kwargs):
        stamp("planning")
        for item in plans_ahead(*args, **kwargs):
            stamp("made")
            yield item

    def dumps(item, protocol=None):
        data = real_pickle.dumps(item, protocol=protocol)
        stamp(f"pickled {len(data) / 1e6:.1f} MB")
        return data

    api.open_database = timed("database", opened)
    api._queries = timed("queries", queries)
    api.engines.plans_ahead = timed_plans
    ahead.pickle = types.SimpleNamespace(dumps=dumps, loads=pickle.loads,
                                         HIGHEST_PROTOCOL=pickle.HIGHEST_PROTOCOL,
                                         UnpicklingError=pickle.UnpicklingError)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("queries")
    parser.add_argument("database")
    parser.add_argument("--stats", default="none")
    parser.add_argument("--gpus", type=int, default=1)
    parser.add_argument("--busy", type=float, default=1.5,
                        help="seconds this thread spins in Python after the fork, as the "
                             "command's main thread imports CuPy and reads its inputs")
    args = parser.parse_args()
    start = time.perf_counter()
    from wavedp.cli import search as _command  # noqa: F401  (the command's imports)
    from wavedp.engines.cuda.scan import ahead
    from wavedp.scoring import Scoring
    from wavedp.search import api

    print(f"the command's imports: {time.perf_counter() - start:.3f} s")
    api.gpus_ahead = lambda devices: list(range(args.gpus))
    arrivals: list[tuple[float, str]] = []
    scoring = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    steps = tempfile.NamedTemporaryFile("r", suffix=".steps")
    forked = time.perf_counter()
    timed_steps(api, ahead, steps.name, forked)
    if not api.plan_ahead(args.queries, args.database, scoring, stats=args.stats):
        raise SystemExit("no planning child forked")
    seen = promised = 0
    while time.perf_counter() - forked < args.busy or ahead.pending() and \
            ahead._planning:  # spinning holds the interpreter's lock, as the command does
        now = time.perf_counter() - forked
        if len(ahead._promised) > promised:
            promised = len(ahead._promised)
            arrivals.append((now, "promise"))
        if len(ahead._STORE) > seen:
            arrivals.extend((now, "plan") for _ in range(len(ahead._STORE) - seen))
            seen = len(ahead._STORE)
    for thread in threading.enumerate():
        if thread is not threading.current_thread():
            thread.join()
    print("after the fork: " + ", ".join(f"{what} {t:.3f} s" for t, what in arrivals))
    print("the child's steps (seconds after the fork): " + ", ".join(
        line.strip() for line in steps))
    api.open_database, api._queries, api.engines.plans_ahead, ahead.pickle = untimed
    work = api.plan_work(args.queries, args.database, scoring, stats=args.stats,
                         gpus=list(range(args.gpus)))
    for turn in ("first", "second"):  # the first pays what the process does once
        start = last = time.perf_counter()
        steps = []
        for content, _ in work(0):
            now = time.perf_counter()
            steps.append(f"{'promise' if content is None else 'plan'} {now - last:.3f} s")
            last = now
        print(f"the child's work in this process, {turn} time: {last - start:.3f} s ("
              + ", ".join(steps) + ")")
    profile = cProfile.Profile()
    profile.enable()
    for _ in work(0):
        pass
    profile.disable()
    pstats.Stats(profile).sort_stats("cumulative").print_stats(18)


if __name__ == "__main__":
    main()
