"""``wavedp calibrate`` and ``wavedp predict``: the search's performance predictor
(``wavedp.dbsearch.predict``) measured and consulted."""

from __future__ import annotations

import click
import numpy as np

from ..dbsearch.api import BATCH_CELLS, open_database
from ..dbsearch.strands import strands
from ..device import choose
from ..engines.calibration import load, save
from ..engines.common import MODES
from ..engines.cuda.scan.shapes import packable
from . import common

CALIBRATE_HELP = """Measure this machine's constants for the search's performance predictor.

Runs the GPU scan kernel in every shape it uses (or the CPU engine) on generated data, in
well under a minute, and stores the constants in the user's cache directory, where
'wavedp predict', 'wavedp search --explain' and --partition auto find them.
"""

PREDICT_HELP = """Predict a search's time under each partitioning, launch by launch.

QUERIES is a FASTA/FASTQ file, DB a database (.wdb folder or FASTA). Prints, for each
partitioning (none, static, dynamic1, dynamic2), every scan launch (queries x subjects) with
its predicted seconds, then the totals; 'auto' picks the least. Uses the calibration of
'wavedp calibrate' (or built-in H100 constants where there is none).
"""


@click.command(help=CALIBRATE_HELP)
@click.option("--device", type=click.Choice(["gpu", "cpu"]), default=None,
              help="The device to calibrate. [default: gpu when one is usable, else cpu]")
def calibrate(device: str | None) -> None:
    from ..dbsearch import predict as _predict  # lazy: see predict_command

    kind = choose(device or "auto").kind  # gpu without one: an input error
    model = _predict.calibrate(kind, progress=lambda text: click.echo(
        f"wavedp: calibrating {kind}: {text}", err=True))
    path = save(model)
    click.echo(f"calibrated {model.device} in {model.seconds:.1f} s -> {path}")
    if kind == "gpu":
        rates = sorted(model.rates.items(), key=lambda kv: -kv[1])
        alone = sorted(model.single.items(), key=lambda kv: -kv[1])
        packing = ", ".join(f"{key} {len(v)} blocks {v[-1] / v[0]:.2f}x"
                            for key, v in model.packing.items() if key.endswith("packed"))
        click.echo(f"scan rates (lane-cells/s, full device): best {rates[0][0]} "
                   f"{rates[0][1]:.3g}, worst {rates[-1][0]} {rates[-1][1]:.3g}; "
                   "one group alone: "
                   f"best {alone[0][0]} {alone[0][1]:.3g}, worst {alone[-1][0]} "
                   f"{alone[-1][1]:.3g}, a later pass alone "
                   + ", ".join(f"G={g} {v:.2f}" for g, v in model.later.items())
                   + ", with 1 .. k blocks per SM " + ", ".join(
                       f"G={g} {v[0]:.2f} .. {v[-1]:.2f}" for g, v in model.later_shared.items())
                   + f" first passes; k blocks per SM, a group's rate at the most: {packing}"
                   + f"; the host per launch {model.launch * 1e3:.2f} ms, per profile "
                   f"{model.unit * 1e6:.0f} us + {model.profile * 1e9:.1f} ns per word, "
                   f"{model.subject * 1e9:.1f} ns per subject; the GPU besides the kernel "
                   f"{model.side * 1e6:.0f} us per launch + {model.word * 1e12:.0f} ps per "
                   "result word")
    else:
        click.echo(f"{model.rates['cells'] / 1e9:.2f} GCUPS on every core; "
                   f"{model.launch * 1e3:.3f} ms per query call")


@click.command(name="predict", help=PREDICT_HELP)
@click.argument("query", metavar="QUERIES")
@click.argument("database", metavar="DB")
@click.option("--device", type=click.Choice(["gpu", "cpu"]), default="gpu", show_default=True,
              help="The engine whose time to predict.")
@click.option("--strand", type=click.Choice(["both", "plus", "minus"]), default="both",
              show_default=True, help="DNA: the query strands searched.")
@click.option("--launches/--totals", default=True, show_default=True,
              help="List every launch, or only each partitioning's total.")
@click.option("--mode", type=click.Choice(list(MODES)), default="local", show_default=True)
@click.option("--matrix", default=None, help="As in search. [default: BLOSUM62]")
@click.option("--match", type=int, default=None, help="As in search (DNA).")
@click.option("--mismatch", type=int, default=None, help="As in search (DNA).")
@click.option("--gap-open", type=int, default=None, help="As in search.")
@click.option("--gap-extend", type=int, default=None, help="As in search.")
def predict_command(query: str, database: str, device: str, strand: str, launches: bool,
                    mode: str, matrix: str | None, match: int | None, mismatch: int | None,
                    gap_open: int | None, gap_extend: int | None) -> None:
    # lazy: the predictor loads Numba and the scan's planner, 0.1 s of every command's start-up
    from ..dbsearch import predict as _predict

    scoring = common.scoring(matrix, match, mismatch, gap_open, gap_extend)
    queries = common.prepare(query, scoring, "query")
    db = open_database(database, scoring)
    model = load(device) or _predict.model_for(device)
    note = "" if model.calibrated else " (not calibrated here: built-in H100 constants)"
    query_m = [c.size for c in queries.codes for _ in strands(scoring.is_dna, strand)]
    click.echo(f"{len(queries.codes)} queries x {len(db):,} sequences "
               f"({db.total_residues:,} residues) on the {device.upper()}: "
               f"{model.device}{note}")
    if device == "cpu":
        from ..engines.cpu.scan import cpu_seconds  # lazy: Numba, for this branch only

        seconds = cpu_seconds(model, np.array(query_m), db.total_residues)
        click.echo(f"predicted scan: {seconds:.3f} s (the CPU engine pads nothing: one "
                   "schedule)")
        return
    packed = packable(np.asarray(scoring.table), scoring.gap_open, scoring.gap_extend)
    plans = _predict.search_plan(model, query_m, np.asarray(db.lengths), scoring.table.shape[0],
                                 packed and mode == "local", BATCH_CELLS["gpu"])
    if launches:
        click.echo("| partition | query batch | launch | units | subjects | predicted s |")
        click.echo("|---|---|---|---|---|---|")
        for name in plans:
            for k, (b, units, subjects, seconds) in enumerate(plans[name], 1):
                click.echo(f"| {name} | {b + 1} | {k} | {units} | {subjects:,} | "
                           f"{seconds:.4f} |")
    totals = {name: sum(r[3] for r in rows) for name, rows in plans.items()}
    best = min(totals, key=totals.get)
    click.echo("| partition | launches | predicted s |")
    click.echo("|---|---|---|")
    for name in plans:
        mark = " (auto)" if name == best else ""
        click.echo(f"| {name}{mark} | {len(plans[name])} | {totals[name]:.4f} |")
