"""Write a seeded random protein FASTA database (no data is downloaded or committed).

    python benchmarks/seeded_fasta.py OUT.fa [--sequences N] [--median L] [--sigma S]
        [--seed K] [--plant QUERIES.fa] [--copies C]

Lengths are lognormal (median L, sigma S, clipped to 8..35,000), residues drawn from BLOSUM62's
background frequencies; with ``--plant``, a mutated copy (30% of positions redrawn) of each
query is put at a seeded position, so searches have true hits to report; with ``--copies C``,
C copies of each, redrawn from 30% to 75% of positions (a family for iterative searches
to find round by round).
"""

from __future__ import annotations

import argparse

import numpy as np
from search import BACKGROUND, LETTERS, read_fasta


def database(sequences: int, median: float, sigma: float, seed: int,
             plant: list[str], copies: int = 1) -> tuple[bytes, np.ndarray, dict[int, bytes]]:
    """The database: every sequence's letters one after another, the boundaries between
    them, and the planted sequences by index (they replace those sequences)."""
    rng = np.random.default_rng(seed)
    lengths = np.clip(rng.lognormal(np.log(median), sigma, sequences), 8, 35_000).astype(int)
    p = np.array(BACKGROUND) / sum(BACKGROUND)
    ascii_letters = np.frombuffer(LETTERS.encode(), np.uint8)
    residues = ascii_letters[rng.choice(len(LETTERS), int(lengths.sum()), p=p)].tobytes()
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    letters = np.array(list(LETTERS))
    planted = {}
    redrawn = np.linspace(0.3, 0.75, copies) if copies > 1 else [0.3]
    planting = [(query, share) for query in plant for share in redrawn]
    for (query, share), where in zip(planting, rng.choice(sequences, len(planting),
                                                          replace=False), strict=True):
        s = np.array(list(query))
        hit = rng.random(s.size) < share
        s[hit] = rng.choice(letters, int(hit.sum()), p=p)
        planted[int(where)] = "".join(s).encode()
    return residues, bounds, planted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--sequences", type=int, default=200_000)
    parser.add_argument("--median", type=float, default=300.0)
    parser.add_argument("--sigma", type=float, default=0.65)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--plant", metavar="QUERIES.fa", default=None)
    parser.add_argument("--copies", type=int, default=1)
    args = parser.parse_args()
    plant = read_fasta(args.plant) if args.plant else []
    residues, bounds, planted = database(args.sequences, args.median, args.sigma, args.seed,
                                         plant, args.copies)
    with open(args.out, "wb") as fh:
        for k in range(args.sequences):
            text = planted.get(k) or residues[bounds[k]:bounds[k + 1]]
            fh.write(b">s%d seeded %d\n%s\n" % (k, args.seed, text))


if __name__ == "__main__":
    main()
