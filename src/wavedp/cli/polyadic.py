"""``wavedp chain`` and ``wavedp fold``: matrix-chain ordering and RNA folding on the
polyadic engine.

Input is read and checked whole before any work or output; results go to stdout or to
``-o FILE``, written whole or not at all, as the other commands write them.
"""

from __future__ import annotations

import json
import os

import click

from ..device import choose
from ..errors import InputError
from ..polyadic.chain import check_dims, matrix_chain
from ..polyadic.nussinov import LETTERS, fold_codes, rna_codes
from ..seqio import read_records
from . import common, outputs

CHAIN_HELP = """Cheapest order to multiply a chain of matrices A1 A2 ... An.

DIMS are the n + 1 dimensions d0 d1 ... dn (matrix Ai is d(i-1) x di), given as
numbers or as one file of them (whitespace- or comma-separated; '#' starts a comment).
Prints the cost in scalar multiplications and a full parenthesization, e.g.
4500<TAB>((A1A2)A3); exact in 64-bit integers (an error when the cost could overflow).
"""

FOLD_HELP = """Fold every RNA record of FASTA (FASTA or FASTQ, plain or gzipped).

Nussinov: the maximum number of nested base pairs (AU, GC and, unless --no-gu, GU) with
at least --min-loop unpaired bases in every hairpin, and one structure reaching it.
T is read as U, N pairs with nothing, lowercase is accepted.

\b
Formats: dotbracket (per record: >id, the sequence, the structure and
its pair count), json (one object per line: id, length, pairs, structure).
"""


def _number(text: str, where: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InputError(f"{where}: {text!r} is not a whole number") from None


def read_dims(args: tuple[str, ...]) -> list[int]:
    """The dimensions from the command line: numbers, or one file of numbers."""
    if len(args) == 1 and os.path.exists(args[0]):
        path = args[0]
        try:
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read file {path}: {getattr(exc, 'strerror', None) or exc}"
                             ) from None
        dims = [_number(word, f"file {path}, line {number}")
                for number, line in enumerate(lines, 1)
                for word in line.split("#")[0].replace(",", " ").split()]
        if len(dims) < 2:
            raise InputError(f"file {path}: needs at least 2 dimensions, found {len(dims)}")
    elif len(args) == 1 and not args[0].lstrip("+-").isdigit():
        raise InputError(f"cannot read file {args[0]}: no such file (DIMS are whole numbers, or "
                         "one file of them)")
    else:
        dims = [_number(word, f"argument {k}") for k, word in enumerate(args, 1)]
    return check_dims(dims)


@click.command(name="chain", help=CHAIN_HELP)
@click.argument("dims", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="text: cost<TAB>order; json: one object.")
@common.device_and_output
@common.threads_option
def chain(dims: tuple[str, ...], fmt: str, device: str, output: str | None) -> None:
    destination = outputs.target(output, dims if len(dims) == 1 else ())
    values = read_dims(dims)
    chosen = choose(device)
    cost, order = matrix_chain(values, device=chosen)
    common.note(chosen)  # after the range check: a bad chain is one line on stderr
    text = (f"{cost}\t{order}" if fmt == "text" else
            json.dumps({"matrices": len(values) - 1, "cost": cost, "order": order}))
    with outputs.opened(destination) as out:
        out.write(text + "\n")


@click.command(name="fold", help=FOLD_HELP)
@click.argument("fasta")
@click.option("--algorithm", type=click.Choice(["nussinov"]), default="nussinov",
              show_default=True, help="The folding algorithm.")
@click.option("--min-loop", type=click.IntRange(min=0), default=3, show_default=True,
              help="Fewest unpaired bases closed by a pair.")
@click.option("--no-gu", is_flag=True, help="Do not allow GU wobble pairs.")
@click.option("--format", "fmt", type=click.Choice(["dotbracket", "json"]),
              default="dotbracket", show_default=True, help="Output format.")
@common.device_and_output
@common.threads_option
def fold(fasta: str, algorithm: str, min_loop: int, no_gu: bool, fmt: str, device: str,
         output: str | None) -> None:
    destination = outputs.target(output, [fasta])
    records = [(rid, rna_codes(seq, record=rid, path=fasta)) for rid, seq in read_records(fasta)]
    resolved = choose(device)
    common.note(resolved)
    with outputs.opened(destination) as out:
        for rid, codes in records:
            pairs, structure = fold_codes(codes, min_loop=min_loop, gu=not no_gu,
                                          device=resolved)
            if fmt == "json":
                out.write(json.dumps({"id": rid, "length": int(codes.size), "pairs": pairs,
                                      "structure": structure}) + "\n")
            else:
                sequence = "".join(LETTERS[c] for c in codes.tolist())
                out.write(f">{rid}\n{sequence}\n{structure} ({pairs})\n")
            out.flush()
