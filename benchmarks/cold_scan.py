"""What a fresh process's first GPU search costs beyond a warm one: where the whole command's
time goes.

Run from the repository root:  python benchmarks/cold_scan.py [--sequences N] [--profile]
[--floors-only]
(wavedp installed with its GPU extra). A seeded Swiss-Prot-sized database
(``seeded_fasta.py``, 570,000 sequences by default) is built once; the queries are
``allqueries.fasta``. Printed: the floors of a fresh process (the interpreter, NumPy, CuPy
and its CUDA context, Numba's first cached kernel, wavedp's command line; each alone, best of
three); ``wavedp search --score-only --stats none --explain`` from fresh processes (wall and
phases); in one process, a :class:`wavedp.Searcher` searching three times (the first pays for
loading kernels, allocating and planning), with the packages its first search imports and
the kernel modules it loads, then every hit (``top=0``) against the best 10 (scores only,
default statistics); the GPU's SM clock sampled every 50 ms during the first command (NVML);
with ``--profile``, the whole command (one query, then all; ``--stats none``) under cProfile
in a fresh process with its imports by cumulative time (and what the hits' stage calls),
the first search's calls by cumulative time, and the stack that first imports cupyx's
optimizing module, SciPy or Numba during it.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from importlib.abc import MetaPathFinder

from search import QUERIES, read_fasta

HERE = os.path.dirname(os.path.abspath(__file__))


def clocks(stop: threading.Event, out: list[tuple[float, int]]) -> None:
    """The SM clock (MHz) every 50 ms until ``stop``, through NVML (if installed)."""
    try:
        import pynvml
    except ImportError:
        return
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    start = time.perf_counter()
    while not stop.is_set():
        out.append((time.perf_counter() - start,
                    pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)))
        time.sleep(0.05)


#: what a fresh process pays before any search: each line run alone, from a fresh interpreter
FLOORS = {
    "interpreter": "pass",
    "import numpy": "import numpy",
    "import cupy": "import cupy",
    "CUDA context (cupy)": "import cupy; cupy.zeros(1); cupy.cuda.Device().synchronize()",
    "CUDA context, the driver started first on a thread (wavedp.device.open_contexts)":
    "import threading; from wavedp.device import open_contexts; threading.Thread("
    "target=open_contexts, args=((0,),)).start(); import cupy; cupy.zeros(1); "
    "cupy.cuda.Device().synchronize()",
    "the driver and context alone (wavedp.device.open_contexts)":
    "from wavedp.device import open_contexts; open_contexts((0,))",
    "the driver and every GPU's context, one thread a GPU":
    "import threading; from wavedp.device import gpus_ahead, open_contexts; threads = ["
    "threading.Thread(target=open_contexts, args=((g,),)) for g in gpus_ahead()]; "
    "[t.start() for t in threads]; [t.join() for t in threads]",
    "the driver and every GPU's context, one thread":
    "from wavedp.device import gpus_ahead, open_contexts; open_contexts(gpus_ahead())",
    "import numba": "import numba",
    "Numba: first cached kernel": "import numpy as np; from wavedp.stats import likelihood; "
    "likelihood.log_gammas_of(1.0, np.ones(3))",
    "import wavedp.cli": "import wavedp.cli",
    "wavedp search --help": "import sys; from wavedp.cli import main; sys.argv = ['wavedp', "
    "'search', '--help']; main()",
}


def floors() -> None:
    """Each of FLOORS from a fresh interpreter, best of three (seconds, wall)."""
    for label, code in FLOORS.items():
        best = min(timed_python(code) for _ in range(3))
        print(f"floor: {label}: {best:.3f} s")


def timed_python(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], capture_output=True, check=False)
    return time.perf_counter() - start


PROFILED = """
import cProfile, pstats, sys
profile = cProfile.Profile()
profile.enable()
from wavedp.cli import cli
try:
    cli(sys.argv[1:])
except SystemExit:
    pass
profile.disable()
stats = pstats.Stats(profile, stream=sys.stdout).sort_stats("cumulative")
stats.print_stats(25)
stats.print_stats("wavedp/", 45)
stats.print_callees("align_ranked|run_pairs|align_pairs")
stats.print_callees("gpus.py:[0-9]+[(](__init__|run)[)]|scanner.py:[0-9]+[(]__init__[)]|"
                    "device.py:[0-9]+[(]choose[)]")
"""


def command_profile(args: list[str]) -> None:
    """The whole command ``wavedp ARGS`` in a fresh process under cProfile (imports
    included), its calls by cumulative time; then its imports by cumulative time."""
    done = subprocess.run([sys.executable, "-c", PROFILED, *args], capture_output=True,
                          text=True, check=False)
    print(done.stdout[-30000:])
    if done.returncode:
        print(f"(exit status {done.returncode}) {done.stderr[-3000:]}")
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", PROFILED, *args],
                          capture_output=True, text=True, check=False)
    rows = [line.split("|") for line in done.stderr.splitlines()
            if line.startswith("import time:") and "|" in line]
    rows = [(int(r[1]), r[2].rstrip()) for r in rows if r[1].strip().isdigit()]
    print("imports by cumulative microseconds:")
    for us, name in sorted(rows, reverse=True)[:30]:
        print(f"  {us:>9} {name}")


class WhoImports(MetaPathFinder):
    """Prints the stack that first imports one of ``names`` (an import a search should not
    need, such as CuPy's ``cupyx`` and SciPy behind it)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = set(names)

    def find_spec(self, name, path, target=None):
        if name in self.names and name not in sys.modules:
            self.names.discard(name)
            frames = [f for f in traceback.format_stack()[:-1] if "<frozen" not in f]
            print(f"first import of {name}:\n" + "".join(frames[-12:]))
        return None


def modules_loaded() -> list[tuple[str, float]]:
    """From here on, every kernel module CuPy compiles or loads (its first kernel's name, the
    seconds): a list to read after the search."""
    from cupy.cuda import compiler

    loaded: list[tuple[str, float]] = []
    original = compiler._compile_with_cache_cuda

    def timed(source, *args, **kwargs):
        start = time.perf_counter()
        found = original(source, *args, **kwargs)
        expressions = kwargs.get("name_expressions") or (args[5] if len(args) > 5 else None)
        names = expressions or [
            line.split("(")[0].split()[-1] for line in source.splitlines()
            if "__global__" in line][:1]
        loaded.append((", ".join(names)[:60], time.perf_counter() - start))
        return found

    compiler._compile_with_cache_cuda = timed
    return loaded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=570_000)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--floors-only", action="store_true",
                        help="print the fresh process's floors and stop")
    args = parser.parse_args()
    floors()
    if args.floors_only:
        return
    found = next((q for q in QUERIES if os.path.exists(q)), None)
    if found is None:
        raise SystemExit(f"no queries: looked for {', '.join(QUERIES)}")
    work = tempfile.mkdtemp(prefix="wavedp-cold-")
    fasta, wdb = os.path.join(work, "db.fa"), os.path.join(work, "db.wdb")
    subprocess.run([sys.executable, os.path.join(HERE, "seeded_fasta.py"), fasta,
                    "--sequences", str(args.sequences), "--plant", found], check=True)
    subprocess.run([sys.executable, "-m", "wavedp.cli", "makedb", fasta, "-o", wdb],
                   check=True)
    command = [sys.executable, "-m", "wavedp.cli", "search", found, wdb, "--device", "gpu",
               "--score-only", "--stats", "none", "--explain", "-o", os.devnull]
    subprocess.run(command, capture_output=True, check=True)  # the file cache warm
    if args.profile:
        one = os.path.join(work, "one.fa")
        with open(one, "w") as fh:
            fh.write(f">q0\n{read_fasta(found)[0]}\n")
        for qf in (one, found):
            print(f"\n# the whole command under cProfile: {os.path.basename(qf)}")
            command_profile(["search", qf, wdb, "--device", "gpu", "--score-only",
                             "--stats", "none", "-o", os.devnull])
    for turn in range(3):
        samples: list[tuple[float, int]] = []
        stop = threading.Event()
        sampler = threading.Thread(target=clocks, args=(stop, samples))
        sampler.start()
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        wall = time.perf_counter() - start
        stop.set()
        sampler.join()
        print(f"command {turn + 1}: {wall:.2f} s wall; "
              f"{done.stderr.split('phases:')[-1].strip()}")
        if samples and turn == 0:
            print("  SM clock (s: MHz): " + ", ".join(
                f"{t:.2f}: {mhz}" for t, mhz in samples[::4]))
    import wavedp  # here: the commands above ran in fresh processes
    from wavedp.trace import Trace

    queries = read_fasta(found)
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    trace = Trace()
    start = time.perf_counter()
    searcher = wavedp.Searcher(wavedp.Database.open(wdb), scoring, device="gpu", trace=trace)
    print(f"\nin one process: Searcher made in {time.perf_counter() - start:.2f} s")
    profile = cProfile.Profile() if args.profile else None
    sys.meta_path.insert(0, WhoImports(("cupyx.optimizing", "scipy", "numba")))
    loaded = modules_loaded()
    before = set(sys.modules)
    for turn in range(3):
        trace.clear()
        start = time.perf_counter()
        if profile is not None and turn == 0:
            profile.runcall(searcher.search, queries, stats="none", traceback=False)
        else:
            searcher.search(queries, stats="none", traceback=False)
        phases = ", ".join(f"{k} {v:.3f} s" for k, v in trace.seconds.items())
        print(f"search {turn + 1}: {time.perf_counter() - start:.3f} s ({phases})")
        if turn == 0:
            new = sorted({m.split(".")[0] for m in set(sys.modules) - before})
            print(f"  packages first imported by the search: {', '.join(new)}")
            print(f"  {len(loaded)} kernel modules, {sum(t for _, t in loaded):.3f} s: " +
                  "; ".join(f"{n} {t * 1e3:.0f} ms" for n, t in loaded))
    # every hit (top 0) against the best 10, scores only, default statistics (E <= 10)
    times: dict[int, list[float]] = {10: [], 0: []}
    hits = {}
    for _ in range(3):
        for top in (10, 0):
            start = time.perf_counter()
            found = searcher.search(queries, top=top, traceback=False)
            times[top].append(time.perf_counter() - start)
            hits[top] = sum(map(len, found))
    t10, t0 = min(times[10]), min(times[0])
    print(f"top 10: {t10:.3f} s ({hits[10]} hits); top 0: {t0:.3f} s ({hits[0]} hits); "
          f"{t0 / t10:.3f}x (default statistics, scores only, best of 3)")
    if profile is not None:
        stats = pstats.Stats(profile).sort_stats("cumulative")
        stats.print_stats(45)
        print("the first search's CuPy calls (kernel modules compiled or loaded):")
        stats.print_stats("cupy", 20)
        print("who loads the lazily imported modules:")
        stats.print_callers("__getattribute__|hasattr")


if __name__ == "__main__":
    main()
