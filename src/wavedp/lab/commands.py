"""``wavedp lab``: the synchronization strategies of the source papers, measured on the GPU in
hand. Each sub-command writes ``DIR/<name>.md`` (tables, the papers' claims checked), PNG
plots and the raw numbers as ``DIR/<name>.json``; ``all`` writes ``DIR/report.md``."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

import click

from ..engines.cuda.sync import BARRIER_SYNCS, TUNED
from ..errors import InputError

_POWER = re.compile(r"2\^(\d+)")


def _one(token: str, what: str) -> int:
    power = _POWER.fullmatch(token)
    if power and int(power[1]) < 63:
        return 1 << int(power[1])
    if token.isdigit() and int(token) > 0:
        return int(token)
    raise InputError(f"{what}: expected a positive integer or 2^K, got {token!r}")


def parse_counts(text: str, what: str) -> tuple[int, ...]:
    """A comma-separated list of positive integers, each ``N`` or ``2^K``; ``2^A..2^B`` is
    every power of two from 2^A to 2^B."""
    out: list[int] = []
    for token in (t.strip() for t in text.split(",")):
        lo, dots, hi = token.partition("..")
        if dots:
            a, b = _one(lo, what), _one(hi, what)
            if a & (a - 1) or b & (b - 1) or a > b:
                raise InputError(f"{what}: a range must run between powers of two, got "
                                 f"{token!r}")
            out += [1 << k for k in range(a.bit_length() - 1, b.bit_length())]
        else:
            out.append(_one(token, what))
    return tuple(out)


def parse_names(text: str, allowed: tuple[str, ...], what: str) -> tuple[str, ...]:
    """A comma-separated list of names from ``allowed``."""
    names = tuple(t.strip() for t in text.split(","))
    for name in names:
        if name not in allowed:
            raise InputError(f"{what}: {name!r} is not one of {', '.join(allowed)}")
    return names


def _counts(what: str) -> Callable:
    return lambda ctx, param, value: None if value is None else parse_counts(value, what)


def _count(what: str) -> Callable:
    def parse(ctx, param, value):
        if value is None:
            return None
        counts = parse_counts(value, what)
        if len(counts) != 1:
            raise InputError(f"{what}: expected one number, got {value!r}")
        return counts[0]

    return parse


def _names(allowed: tuple[str, ...], what: str) -> Callable:
    return lambda ctx, param, value: None if value is None else parse_names(value, allowed,
                                                                          what)


def _common(command: Callable) -> Callable:
    options = [
        click.option("--out", "out", required=True, metavar="DIR",
                     help="Folder for the report (markdown, PNG plots, JSON)."),
        click.option("--syncs", callback=_names(BARRIER_SYNCS, "--syncs"), metavar="LIST",
                     help=f"Strategies to measure ({', '.join(TUNED)}: wavedp's own "
                          "barriers, in the barrier micro-benchmark only). "
                          f"[default: {','.join(BARRIER_SYNCS)}]"),
        click.option("--repeats", type=click.IntRange(min=1), default=None,
                     help="Timed runs per measurement (the median is kept). [default: 3]"),
        click.option("--quick", is_flag=True, help="Small sizes and few rounds (a smoke run)."),
    ]
    for option in reversed(options):
        command = option(command)
    return click.pass_obj(command)


def _run(obj, names: tuple[str, ...], quick: bool, out: str, **changes) -> None:
    from . import suite  # lazy: the experiments cost 0.1-0.2 s of every command's start-up

    argv = (obj or {}).get("argv", [])
    command = shlex.join(["wavedp", *argv])
    path = suite.run(names, suite.settings(quick, **changes), out, command,
                     lambda text: click.echo(f"wavedp lab: {text}", err=True))
    click.echo(path)


@click.group(name="lab")
def lab() -> None:
    """The lab: inter-block synchronization strategies (cpu-explicit, cpu-implicit, graph,
    simple, tree2, tree3, lockfree, grid, and wavedp's own spread barrier), their time
    model, and FFT, bitonic sort and Smith-Waterman under each; the Smith-Waterman
    strategies' off-chip traffic and energy. Measured on this GPU; needs a CUDA GPU."""


def _sweep_options(sizes: str, sweep: str, blocks: str) -> Callable[[Callable], Callable]:
    """The --sizes, --sweep-size and --blocks options of an algorithm's command."""
    def apply(command: Callable) -> Callable:
        for option in reversed((
                click.option("--sizes", callback=_counts("--sizes"), metavar="LIST", help=sizes),
                click.option("--sweep-size", callback=_count("--sweep-size"), metavar="N",
                             help=sweep),
                click.option("--blocks", callback=_counts("--blocks"), metavar="LIST",
                             help=f"Block counts of that sweep. {blocks}"))):
            command = option(command)
        return command
    return apply


@lab.command()
@_common
@click.option("--blocks", callback=_counts("--blocks"), metavar="LIST",
              help="Block counts, e.g. 1,2,4,132 or 2^0..2^10. [default: powers of two and "
                   "1, 2, 4, 8 per multiprocessor up to the co-resident maximum]")
@click.option("--threads", type=click.IntRange(32, 1024), default=None,
              help="Threads per block. [default: 256]")
@click.option("--rounds", type=click.IntRange(min=1), default=None,
              help="Rounds (barriers) per run. [default: 10000]")
def barriers(obj, out: str, syncs, repeats, quick: bool, blocks, threads, rounds) -> None:
    """Barrier micro-benchmark and time-model fits (figure 11 of Xiao and Feng), with the
    floor of a barrier on this GPU (round trips, fences, one line's service time)."""
    _run(obj, ("barriers",), quick, out, syncs=syncs, repeats=repeats, barrier_blocks=blocks,
         threads=threads, rounds=rounds)


@lab.command()
@_common
@_sweep_options("FFT lengths (powers of two). [default: 2^10..2^24]",
                "Length of the time-versus-blocks sweep. [default: 2^20]",
                "[default: up to the co-resident maximum]")
def fft(obj, out: str, syncs, repeats, quick: bool, sizes, sweep_size, blocks) -> None:
    """FFT under every strategy (figure 13); cuFFT is the anchor."""
    _run(obj, ("fft",), quick, out, syncs=syncs, repeats=repeats, fft_sizes=sizes,
         fft_sweep=sweep_size, blocks=blocks)


@lab.command()
@_common
@_sweep_options("Key counts. [default: 2^16,2^18,...,2^26]",
                "Key count of the time-versus-blocks sweep. [default: 2^20]",
                "[default: up to the co-resident maximum]")
@click.option("--dtypes", callback=_names(("int32", "float32"), "--dtypes"), metavar="LIST",
              help="Key types. [default: int32,float32]")
def sort(obj, out: str, syncs, repeats, quick: bool, sizes, sweep_size, blocks,
         dtypes) -> None:
    """Bitonic sort under every strategy (figure 15); cupy.sort is the anchor."""
    _run(obj, ("sort",), quick, out, syncs=syncs, repeats=repeats, sort_sizes=sizes,
         sort_sweep=sweep_size, blocks=blocks, dtypes=dtypes)


@lab.command()
@_common
@_sweep_options("Pair lengths m = n. [default: 3000,10000,30000,100000]",
                "Pair length of the time-versus-blocks sweep. [default: 3000]",
                "[default: up to one per multiprocessor]")
@click.option("--implementations", callback=_names(("simple", "coalesced", "tiled"),
                                                   "--implementations"),
              metavar="LIST", help="[default: simple,coalesced,tiled]")
def swat(obj, out: str, syncs, repeats, quick: bool, sizes, sweep_size, blocks,
         implementations) -> None:
    """Smith-Waterman, diagonal and tiled, under every strategy (figures 8 and 14).

    The diagonal strategy with simple and coalesced storage and the tiled strategy, each
    checked against the default GPU engine."""
    _run(obj, ("swat",), quick, out, syncs=syncs, repeats=repeats, swat_sizes=sizes,
         swat_sweep=sweep_size, blocks=blocks,
         implementations=implementations)


@lab.command()
@click.option("--out", "out", required=True, metavar="DIR",
              help="Folder for the report (markdown, PNG plots, JSON).")
@click.option("--sizes", callback=_counts("--sizes"), metavar="LIST",
              help="Pair lengths m = n. [default: 10000,100000,300000,1000000,3000000; the "
                   "per-diagonal and tiled strategies up to 1000000]")
@click.option("--quick", is_flag=True, help="Small sizes (a smoke run).")
@click.pass_obj
def traffic(obj, out: str, sizes, quick: bool) -> None:
    """Off-chip traffic of the Smith-Waterman strategies (Ranasinghe, Table 6.5).

    DRAM bytes read and written and the L2 hit rate of the multipass, diagonal (simple and
    coalesced storage) and tiled sweeps, from Nsight Compute's counters (ncu must be on the
    PATH and allowed to read them), beside the traffic model's prediction for this GPU's L2;
    multipass also with L2 persistence."""
    _run(obj, ("traffic",), quick, out, traffic_sizes=sizes)


_CUDASW4 = click.option(
    "--cudasw4", metavar="PATH", default=None,
    help="CUDASW++4.0's align (built from its sources): its peak benchmark then runs on this "
         "GPU beside wavedp's peak searches, the same-board anchor of the GCUPS per watt.")


@lab.command()
@click.option("--out", "out", required=True, metavar="DIR",
              help="Folder for the report (markdown, PNG plots, JSON).")
@click.option("--quick", is_flag=True, help="Short runs and small sizes (a smoke run).")
@_CUDASW4
@click.pass_obj
def energy(obj, out: str, quick: bool, cudasw4: str | None) -> None:
    """Energy through NVML (Ranasinghe, chapter 5): static power and the energy per DRAM
    byte, L2 byte, shared-memory access, integer add and max from micro-benchmarks after a
    warm-up; each strategy's sweep and the search measured against the model; the search's
    GCUPS per watt beside CUDASW++4.0's (published, and run here with --cudasw4)."""
    _run(obj, ("energy",), quick, out, energy={"cudasw4": cudasw4})


@lab.command(name="all")
@_common
@_CUDASW4
def run_all(obj, out: str, syncs, repeats, quick: bool, cudasw4: str | None) -> None:
    """Every experiment, and one report checking the papers' claims.

    Writes DIR/report.md, which states for each of the papers' and the thesis's claims
    whether this GPU reproduces it; the off-chip traffic needs ncu, the energy NVML."""
    from .suite import EXPERIMENTS  # lazy: see _run

    _run(obj, EXPERIMENTS, quick, out, syncs=syncs, repeats=repeats,
         energy={"cudasw4": cudasw4})
