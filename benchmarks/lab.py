"""The lab on one GPU: every synchronization strategy between thread blocks, the
barrier micro-benchmark and its time model, and FFT, bitonic sort and Smith-Waterman under
each, with their anchors (grid.sync, cuFFT, cupy.sort) measured in the same run. The same as
``wavedp lab all``.

Run on a machine with a CUDA GPU:  python benchmarks/lab.py --out DIR [--quick]
Writes DIR/report.md (tables, the papers' claims checked), PNG plots and DIR/report.json,
then prints the claims table. The full run takes a few minutes on one H100 (under 10).
"""

from __future__ import annotations

import argparse
import sys
import time

from wavedp.lab import suite


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for the report")
    parser.add_argument("--quick", action="store_true", help="small sizes, few rounds")
    args = parser.parse_args()
    start = time.time()
    path = suite.run(suite.EXPERIMENTS, suite.settings(args.quick), args.out,
                     " ".join(["python", *sys.argv]),
                     lambda text: print(f"lab: {text} ({time.time() - start:.0f} s)",
                                        file=sys.stderr, flush=True))
    text = open(path, encoding="utf-8").read()
    claims = text[text.index("## The papers' claims"):]
    print(claims[:claims.index("\n## ", 3)] if "\n## " in claims[3:] else claims)
    print(f"report: {path} ({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
