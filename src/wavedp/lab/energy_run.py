"""The program the energy lab profiles under ncu (``python -m wavedp.lab.energy_run
--sequences N --length L``): the energy lab's search (its random queries and database, this
GPU only), run once, so Nsight Compute can count the scan's DRAM bytes."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from .energy import Settings, search_run


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m wavedp.lab.energy_run")
    parser.add_argument("--sequences", type=int, required=True)
    parser.add_argument("--length", type=int, required=True)
    args = parser.parse_args(argv)
    run, _ = search_run(Settings(sequences=args.sequences, length=args.length))
    run()


if __name__ == "__main__":
    main()
