"""What every command shares: its scoring options and defaults, the device chosen once (and
said on stderr), and the energy meter. Results go to stdout or ``-o``
under the output contract (``output.py``); progress and notes go to stderr.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable

import click

from .. import columns as fields
from .. import energy
from ..api import Prepared
from ..dbsearch import text
from ..dbsearch.text import DNA_DEFAULTS, PROTEIN_DEFAULTS
from ..device import DEVICES, Device, gpu_status
from ..engines.common import MODES
from ..errors import InputError
from ..formats import FORMATS
from ..scoring import Scoring
from ..seqio import read_records
from ..threads import limited

#: the command line's default gap costs (gap open, gap extend) for protein and for DNA (given
#: --match and --mismatch): BLAST's blastp and blastn defaults in this convention. They differ
#: on purpose from ``wavedp.Scoring``'s defaults (11, 1 for both alphabets)

ENERGY_HELP = ("Measure the GPU energy of the run (NVML; pip install 'wavedp[energy]') and "
               "print joules and GCUPS per watt on stderr.")


scoring = text.scoring  # the command line's gap defaults


def prepare(path: str, scoring: Scoring, what: str) -> Prepared:
    """Every record of a FASTA/FASTQ file, checked and encoded (``what``: query or target)."""
    return Prepared.from_records(read_records(path), scoring, what, path)


def note(chosen: Device) -> None:
    """Where ``auto`` chose the run's device, which one, on stderr."""
    if chosen.auto:
        click.echo(f"wavedp: using {chosen.describe()}", err=True)


def energy_meter(enabled: bool, chosen: Device):
    """The run's energy meter on the GPUs of ``chosen`` (``--energy``; a GPU and NVML checked
    before any work), or a context that measures nothing."""
    if not enabled:
        return contextlib.nullcontext()
    if not chosen.gpu:
        why = "--device cpu" if not chosen.auto else f"no GPU usable: {gpu_status()[1]}"
        raise InputError(f"--energy measures GPU energy, and this run uses the CPU ({why})")
    return energy.measure(chosen.gpus)


def energy_line(meter, cells: int) -> None:
    """The meter's joules and GCUPS per watt on stderr (nothing without a meter)."""
    if meter is not None:
        click.echo(energy.summary(meter, cells), err=True)


def _apply(options: list[Callable], command: Callable) -> Callable:
    for option in reversed(options):
        command = option(command)
    return command


def score_options(command: Callable) -> Callable:
    """Mode and scoring, of ``align``, ``search`` and ``scores``."""
    return _apply([
        click.option("--mode", type=click.Choice(list(MODES)), default="local",
                     show_default=True,
                     help="local (Smith-Waterman/Gotoh), global (Needleman-Wunsch) or "
                          "semiglobal (end gaps free)."),
        click.option("--matrix", default=None,
                     help="Substitution matrix: a name (any integer matrix Biopython "
                          "ships) or a file in NCBI's format (as BLAST's -matrix reads). "
                          "[default: BLOSUM62]"),
        click.option("--match", type=int, default=None,
                     help="DNA match score (with --mismatch)."),
        click.option("--mismatch", type=int, default=None,
                     help="DNA mismatch score (with --match)."),
        click.option("--gap-open", type=int, default=None,
                     help=f"Cost of a gap's first residue. [default: {PROTEIN_DEFAULTS[0]} "
                          f"protein, {DNA_DEFAULTS[0]} DNA]"),
        click.option("--gap-extend", type=int, default=None,
                     help=f"Cost of each further gap residue. [default: "
                          f"{PROTEIN_DEFAULTS[1]} protein, {DNA_DEFAULTS[1]} DNA]"),
    ], command)


def scoring_options(command: Callable) -> Callable:
    """The alignment options shared by ``align`` and ``search``: mode, scoring, score-only."""
    return score_options(click.option(
        "--score-only", is_flag=True,
        help="Scores and end coordinates only (no traceback, no CIGAR).")(command))


def devices_options(command: Callable) -> Callable:
    """--device and --devices."""
    return _apply(device_options(), command)


def output_options(default_format: str,
                   more: tuple[str, ...] = ()) -> Callable[[Callable], Callable]:
    """--format (FORMATS and ``more``), --device, --devices and -o, shared by ``align`` and
    ``search``."""
    return lambda command: _apply([
        click.option("--format", "fmt", type=click.Choice((*FORMATS, *more)),
                     default=default_format,
                     show_default=True, help="Output format."),
        *device_options(),
        click.option("-o", "--output", default=None, metavar="FILE",
                     help="Write results to FILE instead of stdout ('-' is stdout)."),
    ], command)


HEADER_HELP = "blast6: a first line '# Fields: ...' naming the columns."


def column_options(formats: str, header: str = HEADER_HELP) -> Callable[[Callable], Callable]:
    """--columns and --header, of ``align`` and ``search`` (``formats``: where --columns
    applies, for the help; ``header``: --header's help)."""
    return lambda command: _apply([
        click.option("--columns", "column_text", default=None, metavar="FIELDS",
                     help=f"{formats}: these fields in this order, by BLAST's names (e.g. "
                          "'qseqid sseqid evalue bitscore'; std: the default twelve)."),
        click.option("--header", is_flag=True, help=header),
    ], command)


def columns(text: str | None, header: bool, fmt: str,
            formats: tuple[str, ...] = ("blast6",)) -> tuple[str, ...] | None:
    """The --columns asked for (None: the format's own), checked against --format."""
    chosen = None if text is None else fields.parse_columns(text)
    if chosen is not None and fmt not in formats:
        raise InputError(f"--columns applies to --format {' or '.join(formats)}, not {fmt}")
    if header and fmt != "blast6":
        raise InputError(f"--header applies to --format blast6, not {fmt}")
    return chosen


THREADS_HELP = "CPU threads for the CPU stages (1: one thread). [default: every core]"


def threads_option(command: Callable) -> Callable:
    """--threads N: the command's CPU kernels on at most N threads (the decorator nearest
    the function)."""

    @functools.wraps(command)
    def run(*args, threads: int | None, **kwargs):
        with limited(threads):
            return command(*args, **kwargs)

    return click.option("--threads", type=click.IntRange(min=1), default=None, metavar="N",
                        help=THREADS_HELP)(run)


def device_options() -> list[Callable]:
    """--device and --devices."""
    return [click.option("--device", type=click.Choice(DEVICES), default="auto",
                         show_default=True,
                         help="auto picks the GPU when one is usable, else the CPU."),
            click.option("--devices", default=None, metavar="LIST",
                         help="GPUs to use, e.g. 0,1 (CUDA_VISIBLE_DEVICES numbering). "
                              "[default: every visible GPU]")]


def device_and_output(command: Callable) -> Callable:
    """--device and -o, of the polyadic commands."""
    return _apply([
        click.option("--device", type=click.Choice(DEVICES), default="auto",
                     show_default=True, help="auto picks the GPU when one is usable."),
        click.option("-o", "--output", default=None, metavar="FILE",
                     help="Write results to FILE instead of stdout ('-' is stdout)."),
    ], command)


def check_unique_names(ids: Iterable[str], place: str, what: str) -> None:
    """SAM names each reference once: an InputError naming an id that ``place`` holds twice
    (its ``what``, 1-based)."""
    seen: dict[str, int] = {}
    for k, rid in enumerate(ids):
        first = seen.setdefault(rid, k)
        if first != k:
            raise InputError(f"{place}: the id {rid!r} names {what} {first + 1} and {k + 1}; "
                             "SAM needs unique reference names (rename them, or choose "
                             "another --format)")
