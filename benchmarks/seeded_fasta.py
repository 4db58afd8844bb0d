"""Write a seeded random protein FASTA database (no data is downloaded or committed).

    python benchmarks/seeded_fasta.py OUT.fa [--sequences N] [--median L] [--sigma S]
        [--seed K] [--plant QUERIES.fa]

Lengths are lognormal (median L, sigma S, clipped to 8..35,000), residues drawn from BLOSUM62's
background frequencies; with ``--plant``, a mutated copy (30% of positions redrawn) of each
query is put at a seeded position, so searches have true hits to report.
"""

from __future__ import annotations

import argparse

import numpy as np
from search import BACKGROUND, LETTERS, read_fasta


def database(sequences: int, median: float, sigma: float, seed: int,
             plant: list[str]) -> list[str]:
    """The sequences of the database, in file order."""
    rng = np.random.default_rng(seed)
    lengths = np.clip(rng.lognormal(np.log(median), sigma, sequences), 8, 35_000).astype(int)
    p = np.array(BACKGROUND) / sum(BACKGROUND)
    letters = np.array(list(LETTERS))
    residues = letters[rng.choice(len(LETTERS), int(lengths.sum()), p=p)]
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    out = ["".join(residues[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    for query, where in zip(plant, rng.choice(sequences, len(plant), replace=False),
                            strict=True):
        s = np.array(list(query))
        hit = rng.random(s.size) < 0.3
        s[hit] = rng.choice(letters, int(hit.sum()), p=p)
        out[int(where)] = "".join(s)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--sequences", type=int, default=200_000)
    parser.add_argument("--median", type=float, default=300.0)
    parser.add_argument("--sigma", type=float, default=0.65)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--plant", metavar="QUERIES.fa", default=None)
    args = parser.parse_args()
    plant = read_fasta(args.plant) if args.plant else []
    seqs = database(args.sequences, args.median, args.sigma, args.seed, plant)
    with open(args.out, "w") as fh:
        for k, s in enumerate(seqs):
            fh.write(f">s{k} seeded {args.seed}\n{s}\n")


if __name__ == "__main__":
    main()
