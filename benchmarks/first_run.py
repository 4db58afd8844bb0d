"""First and warm runs of the README's examples on the CPU, from fresh processes.

Run from the repository root:  python benchmarks/first_run.py [--repeats N] [--src DIR]
(with wavedp installed, or ``PYTHONPATH=src``). Each repeat runs ``wavedp align`` and
``wavedp search`` of examples/query.fa against examples/target.fa with ``--device cpu``,
first with an empty ``NUMBA_CACHE_DIR`` (every kernel the command needs compiles), then
again with the cache that run left (kernels load from disk). Wall time, the child's CPU
time (user + system) and whether the compile message came are printed per run; the table
gives medians. ``--src DIR`` runs another tree's sources (``PYTHONPATH=DIR``), e.g. an
earlier commit's ``src``, to compare two trees on one machine in one run.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMANDS = ("align", "search")
EXAMPLE = ("examples/query.fa", "examples/target.fa")
MESSAGE = "compiling the CPU kernels"


def run(command: str, cache: str, src: str | None) -> tuple[float, float, bool]:
    """(wall seconds, CPU seconds, compile message seen) of one fresh ``wavedp`` process."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    if src:
        env["PYTHONPATH"] = os.path.abspath(src)
    argv = [sys.executable, "-m", "wavedp.cli", command, *EXAMPLE, "--device", "cpu"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, MESSAGE in done.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="first/warm pairs per command")
    parser.add_argument("--src", default=None, help="run the sources of this folder instead")
    args = parser.parse_args()
    results: dict[tuple[str, str], list[tuple[float, float, bool]]] = {}
    for repeat in range(args.repeats):
        for command in COMMANDS:
            with tempfile.TemporaryDirectory(prefix="wavedp-numba-") as cache:
                for kind in ("first", "warm"):
                    wall, cpu, said = run(command, cache, args.src)
                    results.setdefault((command, kind), []).append((wall, cpu, said))
                    print(f"  run {repeat + 1}: {command} {kind}: {wall:.2f} s wall, "
                          f"{cpu:.2f} s CPU, message {'yes' if said else 'no'}",
                          file=sys.stderr, flush=True)
    print(f"sources: {os.path.abspath(args.src) if args.src else 'installed wavedp'}; "
          f"{os.cpu_count()} CPUs; median of {args.repeats} fresh processes per cell")
    print()
    print("| command | first run (empty cache) s | CPU s | message | warm run s | CPU s "
          "| message |")
    print("|---|---|---|---|---|---|---|")
    for command in COMMANDS:
        cells = []
        for kind in ("first", "warm"):
            rows = results[(command, kind)]
            said = {r[2] for r in rows}
            cells += [f"{statistics.median(r[0] for r in rows):.2f}",
                      f"{statistics.median(r[1] for r in rows):.2f}",
                      "yes" if said == {True} else "no" if said == {False} else "mixed"]
        print(f"| wavedp {command} {' '.join(EXAMPLE)} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
