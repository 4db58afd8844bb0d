"""Seeded pairs for the many-pairs benchmarks: reads against their candidate windows (DNA) and
homologous proteins, as ASCII letters in one array with lengths, and as FASTA files.

- ``dna``: a random 300-bp window (uniform ACGT) and a 150-bp read taken from it at a random
  offset, with 3% substitutions; one base deleted in a tenth of the reads and one inserted
  in another tenth.
- ``protein``: a random 300-residue protein (BLOSUM62's background frequencies) and a
  mutated copy (30% substitutions; 1-3 residues deleted in a sixth of the pairs, inserted in
  another sixth), 300 long.
"""

from __future__ import annotations

import argparse

import numpy as np

AMINO = "ARNDCQEGHILKMFPSTWYV"
#: Robinson and Robinson's background frequencies (as BLAST uses), in AMINO's order
FREQS = np.array([78.05, 51.29, 44.87, 53.64, 19.25, 42.64, 62.95, 73.77, 21.99, 51.42,
                  90.19, 57.44, 22.43, 38.56, 52.03, 71.20, 58.41, 13.30, 32.16, 64.41])
FREQS = FREQS / FREQS.sum()
_CUMULATIVE = np.cumsum(FREQS)


def _residues(rng: np.random.Generator, size) -> np.ndarray:
    """Residues drawn from FREQS (uint8 ASCII)."""
    amino = np.frombuffer(AMINO.encode(), np.uint8)
    return amino[np.minimum(np.searchsorted(_CUMULATIVE, rng.random(size)), 19)]


def dna(count: int, seed: int = 1, read: int = 150, window: int = 300
        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(read letters, read lengths, window letters, window lengths) of ``count`` pairs."""
    rng = np.random.default_rng(seed)
    bases = np.frombuffer(b"ACGT", np.uint8)
    windows = bases[rng.integers(0, 4, count * window)].reshape(count, window)
    starts = rng.integers(0, window - read, count)
    # each read's letter k comes from window letter starts + idx[k]: one base deleted (every
    # later letter shifted by one) in a tenth of the reads, one inserted in another tenth
    pos = np.arange(read)[None, :]
    cut = rng.integers(1, read, count)[:, None]
    kind = rng.random(count)[:, None]
    idx = np.where((kind < 0.1) & (pos >= cut), pos + 1, pos)
    insert = (kind >= 0.1) & (kind < 0.2)
    idx = np.where(insert & (pos > cut), pos - 1, idx)
    reads = windows[np.arange(count)[:, None], starts[:, None] + idx]
    reads[np.broadcast_to(insert & (pos == cut), reads.shape)] = bases[
        rng.integers(0, 4, int(insert.sum()))]
    hit = rng.random(reads.shape) < 0.03
    reads[hit] = bases[rng.integers(0, 4, int(hit.sum()))]
    return (reads.ravel(), np.full(count, read, np.int64), windows.ravel(),
            np.full(count, window, np.int64))


def protein(count: int, seed: int = 2, length: int = 300
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(query letters, query lengths, target letters, target lengths) of ``count`` pairs."""
    rng = np.random.default_rng(seed)
    source = _residues(rng, (count, length + 8))
    # the query: the target's letters with 1-3 deleted in a sixth of the pairs, 1-3 random
    # ones inserted in another sixth (at one place), 30% substituted
    pos = np.arange(length)[None, :]
    cut = rng.integers(1, length, count)[:, None]
    size = rng.integers(1, 4, count)[:, None]
    kind = rng.random(count)[:, None]
    idx = np.where((kind < 1 / 6) & (pos >= cut), pos + size, pos)
    insert = (kind >= 1 / 6) & (kind < 2 / 6)
    idx = np.where(insert & (pos >= cut + size), pos - size, idx)
    queries = source[np.arange(count)[:, None], idx]
    fresh = np.broadcast_to(insert & (pos >= cut) & (pos < cut + size), queries.shape)
    queries[fresh] = _residues(rng, int(fresh.sum()))
    hit = rng.random(queries.shape) < 0.30
    queries[hit] = _residues(rng, int(hit.sum()))
    lengths = np.full(count, length, np.int64)
    return (queries.ravel(), lengths, np.ascontiguousarray(source[:, :length]).ravel(),
            lengths.copy())


def write_fasta(path: str, letters: np.ndarray, lengths: np.ndarray, prefix: str,
                repeat: int = 1) -> None:
    """Records ``prefix1``, ``prefix2``, ... one line each; ``repeat`` > 1: the records
    ``repeat`` times, round r's ids ``prefix<r>_1``, ... (every id distinct)."""
    ends = np.cumsum(lengths)
    text = letters.tobytes()
    spans = list(zip((ends - lengths).tolist(), ends.tolist(), strict=True))
    with open(path, "wb") as fh:
        for r in range(repeat):
            name = (prefix if repeat == 1 else f"{prefix}{r}_").encode()
            for k, (a, b) in enumerate(spans):
                fh.write(b">%s%d\n%s\n" % (name, k + 1, text[a:b]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=("dna", "protein"))
    parser.add_argument("count", type=int)
    parser.add_argument("queries")
    parser.add_argument("targets")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=1,
                        help="write the pairs this many times, with distinct ids")
    args = parser.parse_args()
    make = dna if args.kind == "dna" else protein
    q, ql, t, tl = make(args.count) if args.seed is None else make(args.count, args.seed)
    write_fasta(args.queries, q, ql, "q", args.repeat)
    write_fasta(args.targets, t, tl, "t", args.repeat)


if __name__ == "__main__":
    main()
