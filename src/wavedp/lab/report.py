"""The lab's reports: markdown tables and PNG plots (matplotlib, imported only to plot; the
``lab`` extra installs it) built from measurement rows."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Sequence

from ..engines.cuda.sync import BARRIER_SYNCS
from . import model


def number(value, digits: int = 3) -> str:
    """A table cell: numbers to ``digits`` significant digits, booleans as yes/no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "n/a"
        return f"{value:.{digits}g}" if abs(value) < 10 ** digits else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    return str(value)


def table(headers: Sequence[str], rows: Iterable[Sequence]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(number(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


class Document:
    """A markdown report written to one folder, with its PNGs beside it."""

    def __init__(self, folder: str, name: str, title: str) -> None:
        self.folder, self.name = folder, name
        self.parts = [f"# {title}"]

    def add(self, text: str) -> None:
        self.parts.append(text.strip("\n"))

    def figure(self, stem: str, title: str, xlabel: str, ylabel: str,
               series: dict[str, tuple[list, list]], logx: int = 2) -> None:
        """A line plot saved as ``<stem>.png`` and linked (a note where matplotlib is
        missing)."""
        path = os.path.join(self.folder, f"{stem}.png")
        if plot(path, title, xlabel, ylabel, series, logx):
            self.add(f"![{title}]({stem}.png)")
        else:
            self.add(f"_(plot {stem}.png skipped: matplotlib is not installed; "
                     "`pip install 'wavedp[lab]'`)_")

    def write(self) -> str:
        os.makedirs(self.folder, exist_ok=True)
        path = os.path.join(self.folder, f"{self.name}.md")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("\n\n".join(self.parts) + "\n")
        return path


def plot(path: str, title: str, xlabel: str, ylabel: str, series: dict[str, tuple[list, list]],
         logx: int = 2) -> bool:
    """Draw ``series`` (label -> (xs, ys)) to ``path`` on log axes (x in base ``logx``): one
    colour per strategy, ``<strategy> fit`` dashed in its strategy's colour, ``compute
    only`` dashed black. False if matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {s: plt.get_cmap("tab20" if len(BARRIER_SYNCS) > 10 else "tab10")(k)
               for k, s in enumerate(BARRIER_SYNCS)}
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, (xs, ys) in series.items():
        base = label.removesuffix(" fit")
        if label == "compute only":
            ax.plot(xs, ys, "--", color="black", label=label)
        elif base != label:
            ax.plot(xs, ys, "--", color=colours.get(base), linewidth=1, label="_nolegend_")
        else:
            ax.plot(xs, ys, "-", marker="o", markersize=3, color=colours.get(label), label=label)
    ax.set_xscale("log", base=logx)
    ax.set_yscale("log")
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def ordered(names: Iterable[str]) -> list[str]:
    """Strategy names in BARRIER_SYNCS order (SYNCS, then wavedp's own barriers)."""
    present = set(names)
    return [s for s in BARRIER_SYNCS if s in present]


def select(rows: list[dict], **where) -> list[dict]:
    return [r for r in rows if all(r.get(k) == v for k, v in where.items())]


def grid(rows: list[dict], index: str, value: Callable[[dict], float]) -> tuple[list, list, dict]:
    """(index values, strategies, {(index value, strategy): value}) of rows."""
    keys = sorted({r[index] for r in rows})
    names = ordered(r["sync"] for r in rows)
    return keys, names, {(r[index], r["sync"]): value(r) for r in rows}


def pivot_table(rows: list[dict], index: str, value: Callable[[dict], float],
                extra: dict[str, Callable[[list[dict]], float]] | None = None) -> str:
    """A table with one row per ``index`` value, one column per strategy, then ``extra``
    columns computed from that index value's rows."""
    keys, names, cells = grid(rows, index, value)
    extra = extra or {}
    body = []
    for key in keys:
        group = [r for r in rows if r[index] == key]
        body.append([key, *(cells.get((key, s), math.nan) for s in names),
                     *(f(group) for f in extra.values())])
    return table([index, *names, *extra], body)


def series(rows: list[dict], index: str, value: Callable[[dict], float]
           ) -> dict[str, tuple[list, list]]:
    keys, names, cells = grid(rows, index, value)
    return {s: ([k for k in keys if (k, s) in cells], [cells[k, s] for k in keys
                                                       if (k, s) in cells]) for s in names}


# --- barriers -------------------------------------------------------------------------------

def barrier_fits(rows: list[dict]) -> dict[str, model.Fit]:
    """The time model of every strategy fitted to its barrier cost per round."""
    fits = {}
    for sync in ordered(r["sync"] for r in rows):
        mine = select(rows, sync=sync)
        fits[sync] = model.fit(sync, [r["blocks"] for r in mine],
                               [r["barrier_us"] for r in mine], mine[0]["threads"])
    return fits


def barriers_section(doc: Document, rows: list[dict]) -> None:
    """Fig. 11: time per round and barrier cost per round versus blocks, every strategy, the
    compute-only run and the anchor (grid.sync) of the same sweep, and the model's fits."""
    first = rows[0]
    doc.add(f"## Barriers: {first['rounds']:,} rounds, {first['threads']} threads per block\n\n"
            "Micro-benchmark (Xiao and Feng, Fig. 11): the mean of two floats per thread per "
            "round, weak-scaled. Time per round in microseconds (compute included); the "
            "compute-only column is the same kernel without any barrier. The CPU-side "
            "strategies launch from Python (CuPy), so their cost includes its per-launch "
            "overhead; the graph strategy replays the launches without it.")
    doc.add(pivot_table(rows, "blocks", lambda r: r["round_us"],
                        {"compute-only": lambda g: g[0]["compute_us"]}))
    anchor = {r["blocks"]: r["barrier_us"] for r in select(rows, sync="grid")}
    doc.add("Barrier cost per round in microseconds (time per round minus compute-only); "
            "the last column is the best strategy's cost over the anchor's (grid.sync, same "
            "run).")

    def best_over_anchor(group: list[dict]) -> float:
        own = [r["barrier_us"] for r in group if r["sync"] != "grid"]
        base = anchor.get(group[0]["blocks"])
        return min(own) / base if own and base and base > 0 else math.nan

    doc.add(pivot_table(rows, "blocks", lambda r: r["barrier_us"],
                        {"best / grid": best_over_anchor}))
    doc.figure("barriers_round", "Time per round (Fig. 11)", "blocks", "microseconds",
               {**series(rows, "blocks", lambda r: r["round_us"]),
                "compute only": (sorted({r["blocks"] for r in rows}),
                                 [select(rows, blocks=b)[0]["compute_us"]
                                  for b in sorted({r["blocks"] for r in rows})])})
    fits = barrier_fits(rows)
    lines = []
    for sync, f in fits.items():
        mine = select(rows, sync=sync)
        top = max(mine, key=lambda r: r["blocks"])
        lines.append([sync, f.equation, f.describe(), f.r2, top["blocks"], top["barrier_us"],
                      float(f.predict(top["blocks"])[0])])
    doc.add("Model fits (Xiao and Feng's equations; t_O: a constant per step):")
    doc.add(table(["strategy", "equation", "parameters", "R^2", "blocks", "measured us",
                   "model us"], lines))
    fitted = series(rows, "blocks", lambda r: r["barrier_us"])
    for sync, f in fits.items():
        xs = fitted[sync][0]
        fitted[f"{sync} fit"] = (xs, [max(float(v), 1e-3) for v in f.predict(xs)])
    doc.figure("barriers_cost", "Barrier cost per round (dashed: model fits)", "blocks",
               "microseconds", {k: (x, [max(v, 1e-3) for v in y])
                                for k, (x, y) in fitted.items()})


def floor_section(doc: Document, rows: list[dict]) -> None:
    """The floor of a barrier (barriers.floor): round trips, fences and one line's service
    time, which bound what any in-kernel barrier can cost on this GPU."""
    doc.add("Floor (`bar_probe`): thread 0 of each block runs dependent operations; us per "
            "operation of one block, and ns per request at one 128-byte line (its service "
            "time once many blocks queue there). A barrier costs at least a release (fence "
            "after the round's stores), an arrival and a poll that sees it.")
    doc.add(table(["probe", "blocks", "lines", "us per operation", "ns per request per line"],
                  [[r["probe"], r["blocks"], r["lines"], r["us"], r["ns_per_request"]]
                   for r in rows]))


def barrier_costs(rows: list[dict]) -> dict[tuple[str, int], float]:
    """(strategy, blocks) -> barrier cost per round in seconds, from micro-benchmark rows."""
    return {(r["sync"], r["blocks"]): r["barrier_us"] / 1e6 for r in rows}


# --- FFT, sort, Smith-Waterman ----------------------------------------------------------------

def model_table(rows: list[dict], costs: dict[tuple[str, int], float]) -> str:
    """Measured against predicted, for rows of one configuration (all strategies): the
    compute/sync split, rho, the micro-benchmark's sync speedup S_S over cpu-implicit, the
    predicted S_T = 1 / (rho + (1 - rho) / S_S) and the measured speedup; T predicted =
    compute + steps x barrier cost (T = t_O + sum(t_C + t_S))."""
    base = next((r for r in rows if r["sync"] == "cpu-implicit"), None)
    blocks = max(r["blocks"] for r in rows)  # the persistent grid (CPU-side rows may say 0)
    body = []
    for r in sorted(rows, key=lambda r: BARRIER_SYNCS.index(r["sync"])):
        sync_s = max(r["seconds"] - r["compute"], 0.0)
        cost = costs.get((r["sync"], blocks))
        predicted_t = math.nan if cost is None else \
            model.kernel_time(0.0, r["compute"] / r["steps"], cost, r["steps"])
        rho = s_s = s_t = measured = math.nan
        if base is not None:
            rho = min(base["compute"] / base["seconds"], 1.0)
            measured = base["seconds"] / r["seconds"]
            base_cost = costs.get(("cpu-implicit", blocks))
            if cost and base_cost and cost > 0 and base_cost > 0:
                s_s = base_cost / cost
                s_t = model.speedup(rho, s_s)
        body.append([r["sync"], r["seconds"] * 1e3, r["compute"] * 1e3, sync_s * 1e3,
                     sync_s / r["seconds"], predicted_t * 1e3, rho, s_s, s_t, measured])
    return table(["strategy", "ms", "compute ms", "sync ms", "sync share", "model ms", "rho",
                  "S_S", "S_T model", "S measured"], body)


def _compute_only(rows: list[dict], key: str) -> tuple[list, list]:
    keys = sorted({r[key] for r in rows})
    return keys, [select(rows, **{key: k})[0]["compute"] * 1e3 for k in keys]


def algorithm_section(doc: Document, name: str, title: str, rows: list[dict], size_key: str,
                      anchor: str | None, costs: dict[tuple[str, int], float]) -> None:
    """Time versus blocks (rows of the ``blocks`` sweep), time versus size (the ``sizes``
    sweep), the compute/sync split and the model at the largest size, for one algorithm."""
    doc.add(f"## {title}")
    extra = {"compute-only": lambda g: g[0]["compute"] * 1e3}
    if anchor:
        extra[anchor] = lambda g: g[0]["anchor"] * 1e3
    logx = 2 if size_key == "size" else 10
    sweep = select(rows, sweep="blocks")
    if sweep:
        label = f"{size_key} {sweep[0][size_key]:,}"
        doc.add(f"Milliseconds versus blocks ({label}); compute-only: the persistent kernel "
                "without barriers" + (f"; {anchor}: the anchor, same run" if anchor else "")
                + ".")
        doc.add(pivot_table(sweep, "blocks", lambda r: r["seconds"] * 1e3, extra))
        doc.figure(f"{name}_blocks", f"{title}: time versus blocks ({label})", "blocks",
                   "milliseconds", {**series(sweep, "blocks", lambda r: r["seconds"] * 1e3),
                                    "compute only": _compute_only(sweep, "blocks")})
    sizes = select(rows, sweep="sizes")
    if sizes:
        grids = {r["blocks"] for r in sizes if r["blocks"]}
        label = f"{grids.pop()} blocks" if len(grids) == 1 else "each strategy's default grid"
        doc.add(f"Milliseconds versus {size_key} ({label}).")
        doc.add(pivot_table(sizes, size_key, lambda r: r["seconds"] * 1e3, extra))
        doc.figure(f"{name}_sizes", f"{title}: time versus {size_key} ({label})", size_key,
                   "milliseconds", {**series(sizes, size_key, lambda r: r["seconds"] * 1e3),
                                    "compute only": _compute_only(sizes, size_key)}, logx)
        largest = max(r[size_key] for r in sizes)
        at = select(sizes, **{size_key: largest})
        doc.add(f"Compute and synchronization at {size_key} {largest:,} (Figs. 10 and 15) and "
                "the time model (S_S from the barrier micro-benchmark at the same block count):")
        doc.add(model_table(at, costs))
    wrong = [r for r in rows if not r["exact"]]
    doc.add("Every run matched its reference." if not wrong else
            f"**{len(wrong)} run(s) did not match the reference**: " + "; ".join(
                f"{r['sync']} {r['blocks']} blocks" for r in wrong[:10]))
