"""The program ``wavedp lab traffic`` profiles under ncu (``python -m wavedp.lab.traffic_run
--size N --variants LIST --sync S --out FILE``): one pair of the lab's (m = n = N), each
variant's sweep launched once, in the order given, and each end cell written to FILE as
JSON (variant -> [score, i, j])."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

import numpy as np

from ..engines.cuda.multipass import end_cell, sweep
from .swat import make_sweep, related_pair, upload
from .traffic import VARIANTS, check_variants


def run(p, variant: str, sync: str) -> tuple[int, int, int]:
    """(score, end_i, end_j) of one variant's score-only sweep of pair ``p``."""
    strategy, storage, persist = VARIANTS[variant]
    if strategy == "multipass":
        return end_cell(p, sweep(p, 0, p.m, 0, p.n, persist=persist))
    plan = make_sweep(p, storage or strategy, sync)
    plan.run()
    return plan.result()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m wavedp.lab.traffic_run")
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--variants", required=True)
    parser.add_argument("--sync", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    p = upload(*related_pair(np.random.default_rng(19), args.size, args.size))
    results = {v: list(run(p, v, args.sync)) for v in check_variants(args.variants.split(","))}
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(results, fh)


if __name__ == "__main__":
    main()
