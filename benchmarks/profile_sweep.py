"""One multipass score-only sweep on an N x N related DNA pair, for Nsight Compute.

    ncu --kernel-name regex:multipass --launch-skip 1 --launch-count 1 \\
        python benchmarks/profile_sweep.py 200000 16
"""

from __future__ import annotations

import sys

import numpy as np
from gpu_align import DNA, related_pair

from wavedp.engines.common import LOCAL
from wavedp.engines.cuda import multipass


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    r = int(sys.argv[2]) if len(sys.argv) > 2 else None
    a, b = related_pair(np.random.default_rng(1), n, "ACGT")
    p = multipass.upload(DNA.encode(a), DNA.encode(b), DNA.table, DNA.gap_open,
                         DNA.gap_extend, LOCAL)
    for _ in range(2):  # the first launch compiles and warms up; profile the second
        print(multipass.end_cell(p, multipass.sweep(p, 0, p.m, 0, p.n, rows_per_thread=r)))


if __name__ == "__main__":
    main()
