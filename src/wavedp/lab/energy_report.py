"""The energy lab's report and claims: warm-up and idle power, the micro-benchmarks and the
fit, each strategy against the model, the search against CUDASW++4.0's energy efficiency
(:mod:`.energy` measures, :mod:`.energy_model` fits and predicts)."""

from __future__ import annotations

import math
from collections.abc import Callable

from . import cudasw, report
from .claims import Claim
from .energy import CUDASW_GCUPS_PER_WATT, LABELS, SOURCE, TOLERANCE, label
from .energy_model import (
    OPS,
    Fit,
    errors,
    fit,
    full,
    model_per_cell,
    predict,
    search_power,
    searches,
    select,
)


def _gcups(row: dict) -> float:
    return row["cells"] / row["seconds"] / 1e9


def _gcups_per_watt(row: dict) -> float:
    return row["cells"] / 1e9 / row["joules"] if row["joules"] > 0 else math.nan


def _warmup_text(doc: report.Document, rows: list[dict]) -> None:
    for warm in select(rows, "warmup"):
        watts = warm["watts"]
        state = "settled" if warm["settled"] else "had not settled (time limit)"
        doc.add(f"Warm-up (the add benchmark, full grid): {len(watts)} windows of "
                f"{warm['window']:g} s; the power {state} at {watts[-1]:.0f} W.")
        doc.figure("energy_warmup", "Power while warming up", "seconds", "watts",
                   {"warm-up": ([warm["window"] * (k + 1) for k in range(len(watts))],
                                watts)}, logx=10)
    for idle_row in select(rows, "static"):
        doc.add(f"Idle power (no work for {idle_row['seconds']:.1f} s, right after): "
                f"{idle_row['watts']:.0f} W.")


def _micro_table(rows: list[dict], f: Fit) -> str:
    idle_w = next((r["watts"] for r in select(rows, "static")), math.nan)
    body = []
    for r in select(rows, "micro"):
        main = r["counts"].get(r["op"], 0.0)
        naive = (r["joules"] - idle_w * r["seconds"]) / main * 1e12 if main else math.nan
        body.append([r["op"], r["intensity"], f"{r['blocks']} x {r['threads']}", r["seconds"],
                     r["joules"], r["watts"], f"{main:.3g}", f.joules(r["seconds"], r["counts"]),
                     100 * (f.joules(r["seconds"], r["counts"]) / r["joules"] - 1), naive])
    return report.table(["operation", "intensity", "blocks x threads", "s", "J", "W",
                         "operations", "fit J", "fit error %", "(E - P_idle t) / ops pJ"],
                        body)


def _fit_table(f: Fit) -> str:
    units = {"add": "pJ per instruction", "max": "pJ per instruction",
             "max16": "pJ per instruction (16-bit pairs)",
             "shared": "pJ per 32-bit word", "shared16": "pJ per 16-byte load",
             "l2": "pJ per byte",
             "dram": "pJ per byte (on top of L2)"}
    return report.table(["parameter", "value", "unit"],
                        [["P_static", f.static_watts, "W"]]
                        + [[f"e_{op}", f.energy[op] * 1e12, units[op]] for op in OPS])


def _model_table(rows: list[dict], f: Fit, dram: dict[str, float]) -> str:
    body = []
    for r in select(rows, "strategy"):
        parts = predict(f, r, dram.get(r["strategy"]))
        size = (f"{r['queries']} x {r['sequences']:,} x {r['length']}" if r["strategy"] == "search"
                else f"{r['m']:,} x {r['n']:,}")
        body.append([label(r), size, r.get("sync") or "-", r["runs"], r["seconds"],
                     _gcups(r), r["joules"], r["watts"], parts["static"],
                     parts["total"] - parts["static"], parts["total"],
                     100 * (parts["total"] / r["joules"] - 1), _gcups_per_watt(r)])
    return report.table(["strategy", "size", "sync", "runs", "s", "GCUPS", "measured J", "W",
                         "static J", "operations J", "model J", "error %", "GCUPS/W"], body)


def _search_table(rows: list[dict]) -> str:
    body = [[_gcups(r), r["joules"], r["watts"], r["peak_watts"],
             _gcups_per_watt(r), CUDASW_GCUPS_PER_WATT,
             _gcups_per_watt(r) / CUDASW_GCUPS_PER_WATT]
            for r in searches(rows)]
    return report.table(["GCUPS", "J", "mean W", "peak W", "GCUPS/W",
                         "CUDASW++4.0 GCUPS/W (published)", "ratio"], body)


def _peak_table(rows: list[dict]) -> str:
    body = [[r["length"], r.get("database", "distinct"), f"{r['queries']} x {r['sequences']:,}",
             r["runs"], r["seconds"], _gcups(r), r["joules"], r["watts"],
             _gcups_per_watt(r), _gcups_per_watt(r) / CUDASW_GCUPS_PER_WATT]
            for r in select(rows, "peak")]
    return report.table(["length", "database", "queries x sequences", "runs", "s", "GCUPS",
                         "J", "mean W", "GCUPS/W",
                         f"/ {CUDASW_GCUPS_PER_WATT} (CUDASW++4.0)"], body)




def _anchor_watts(row: dict) -> float:
    """A peak row's power read as the anchor's is (``sample_watts``; rows without it: the
    energy counter's mean)."""
    return row.get("sample_watts", row["watts"])


def _as_anchor(row: dict) -> float:
    """GCUPS/W with the power read as the anchor's is."""
    return _gcups(row) / _anchor_watts(row)


def _like_anchor(rows: list[dict]) -> list[dict]:
    """The peak searches on CUDASW++4.0's kind of database (one sequence repeated), or all
    of them where none is."""
    peaks = select(rows, "peak")
    return [r for r in peaks if r.get("database") == "repeated"] or peaks


def _best_peak(rows: list[dict], key: Callable[[dict], float] = _gcups_per_watt
               ) -> dict | None:
    return max(_like_anchor(rows), key=key, default=None)


def _anchor_table(rows: list[dict]) -> str:
    ours = {r["length"]: r for r in _like_anchor(rows)}
    body = []
    for a in select(rows, "anchor"):
        mine = ours.get(a["length"])
        ours_row = [math.nan] * 5
        if mine:
            ours_row = [_gcups(mine), mine["seconds"], _anchor_watts(mine),
                        _as_anchor(mine), _gcups_per_watt(mine)]
        body.append([a["length"], f"{a['queries']} x {a['sequences']:,}", a["seconds"],
                     _gcups(a), a["watts"], _gcups_per_watt(a),
                     *ours_row, ours_row[3] / _gcups_per_watt(a)])
    return report.table(["length", "queries x sequences", "scan s", "GCUPS", "mean W (scan)",
                         "GCUPS/W", "wavedp GCUPS", "wavedp s", "wavedp W (read alike)",
                         "wavedp GCUPS/W", "wavedp GCUPS/W (energy counter)",
                         "wavedp / CUDASW++4.0"], body)


def section(doc: report.Document, rows: list[dict],
            dram: dict[str, float] | None = None) -> None:
    """The energy section of a lab report: warm-up and idle power, the micro-benchmarks, the
    fitted model, each strategy measured against the model, the search against CUDASW++4.0.
    ``dram``: DRAM bytes by strategy (default :func:`dram_estimate`)."""
    dram = dram or {}
    doc.add("## Energy (Ranasinghe 2014, chapter 5)\n\nNVML's energy counter around each run "
            "(the integral of power samples where a run is short); every run lasts at least "
            "a second or two after a warm-up. The model: E = P_static T + sum over operations "
            "of count x energy per operation (eqs. 10-13), T measured, P_static and the "
            "energies fitted to the micro-benchmarks, the counts per cell read from each "
            "kernel's sm_90 machine code and Nsight Compute's counts on the H100.")
    _warmup_text(doc, rows)
    f = fit(rows)
    if f is None:
        doc.add("No micro-benchmark was measured: no model.")
        return
    doc.add("Micro-benchmarks (each kernel does mostly one operation; high: a full grid, low: "
            "one warp per multiprocessor). The last column is the simple estimate with the "
            "idle power as the static part:")
    doc.add(_micro_table(rows, f))
    doc.add("The fitted model (least squares over both intensities, so the static part "
            "cancels):")
    doc.add(_fit_table(f))
    if select(rows, "strategy"):
        counted = [r for r in full(rows) if "dram_bytes" in r]
        source = ("the traffic experiment's counts for the sweeps" if dram
                  else "estimated from each sweep's working set")
        if counted:
            l2 = counted[-1].get("l2_bytes")
            through = f", and {l2 / 1e9:,.1f} GB through L2" if l2 is not None else ""
            source += (f"; the search's counted by Nsight Compute "
                       f"({counted[-1]['dram_bytes'] / 1e9:,.1f} GB{through}; the capped "
                       "searches' estimated)")
        doc.add(f"Each strategy measured against the model (target: within "
                f"{TOLERANCE:.0%}); DRAM bytes {source}:")
        doc.add(_model_table(rows, f, dram))
    if any(r["strategy"] == "search" for r in select(rows, "strategy")):
        doc.add("The search (score-only, 20 random queries of the CUDASW++ set's lengths, "
                "BLOSUM62 11/1) against CUDASW++4.0's published energy efficiency:")
        doc.add(_search_table(rows))
        _power_text(doc, rows, f)
    if select(rows, "peak"):
        doc.add(f"The search measured as CUDASW++4.0 measures its peak, the figure its "
                f"published \"up to {CUDASW_GCUPS_PER_WATT} GCUPS/W\" comes from: the "
                "search's 20 queries against a database of sequences all of one length, "
                "either one random sequence repeated (CUDASW++4.0's pseudo-database) or "
                "distinct random sequences, the database put on the GPU once and the scan "
                "alone timed (score-only, top 10, BLOSUM62 11/1):")
        doc.add(_peak_table(rows))
    if select(rows, "anchor"):
        doc.add(f"{cudasw.NAME} itself on this GPU in the same run (its peak benchmark: its "
                "DPX kernels, its pseudo-database of one random sequence repeated, the same "
                "20 queries; seconds and GCUPS from its own timer, power the highest mean of "
                "NVML's power samples over a stretch as long as its scan, the database large "
                "enough that a scan lasts seconds: NVML's power readings average over about "
                "a second and read low on a short scan), beside wavedp's peak search on the "
                "same kind of database, its power read alike (its scans repeated for as "
                "many seconds, NVML's samples taken until a second past them, the highest "
                "mean over a stretch as long as the scans; the ratio compares these) and by "
                "the energy counter:")
        doc.add(_anchor_table(rows))


def _power_text(doc: report.Document, rows: list[dict], f: Fit) -> None:
    """Where the search's energy goes: the capped searches' slope and intercept against the
    model's static power and energy per cell."""
    found = search_power(rows)
    full = searches(rows)
    if found is None or not full:
        return
    slope, intercept = found
    r = full[-1]
    own = (r["watts"] - f.static_watts) / (r["cells"] / r["seconds"])
    model = model_per_cell(f, r)
    blocks = ", ".join(str(c["blocks"]) for c in searches(rows, capped=True))
    doc.add(f"The search again with every launch capped at {blocks} blocks (one per "
            f"multiprocessor), power against cell rate: {slope * 1e12:.1f} pJ per real cell "
            f"and {intercept:.0f} W at no cells (the model: P_static {f.static_watts:.0f} W, "
            f"{model * 1e12:.1f} pJ per real cell). At the full grid a cell costs "
            f"{own * 1e12:.1f} pJ above P_static." + _verdict(intercept / f.static_watts,
                                                           slope / model))


def _verdict(static_ratio: float, cell_ratio: float) -> str:
    """What the capped searches say about the model's miss (ratios measured / model)."""
    static_ok, cell_ok = abs(static_ratio - 1) <= 0.1, abs(cell_ratio - 1) <= 0.1
    if static_ok and not cell_ok:
        return (f" The intercept is P_static's ({static_ratio:.2f}x) and the slope "
                f"{cell_ratio:.2f}x the model's: the miss is in the energy per cell.")
    if cell_ok and not static_ok:
        return (f" The slope is the model's ({cell_ratio:.2f}x) and the intercept "
                f"{static_ratio:.2f}x P_static: the miss is in the static power.")
    return f" Intercept / P_static {static_ratio:.2f}, slope / model {cell_ratio:.2f}."


def claims(rows: list[dict], dram: dict[str, float] | None = None) -> list[Claim]:
    """The issue's two targets: the model within 15% for every strategy; the search at least
    CUDASW++4.0's 15.7 GCUPS/W, judged on the best peak search where there is one (the
    published figure is CUDASW++4.0's peak), else on the search. Where CUDASW++4.0 ran on
    this GPU (``anchor`` rows), a third: wavedp's best peak against its best."""
    model_claim = ("the energy model predicts every strategy's energy within 15%",
                   "E = P_static T + sum count x e_op (eqs. 10-13); wavedp's own target")
    search_claim = ("the search reaches CUDASW++4.0's energy efficiency",
                    f"{CUDASW_GCUPS_PER_WATT} GCUPS/W (CUDASW++4.0, published); "
                    "wavedp's own target")
    found = errors(rows, dram)
    if found:
        worst = max(found, key=lambda k: abs(found[k]))
        within = sum(abs(e) <= TOLERANCE for e in found.values())
        detail = ", ".join(f"{LABELS[k]} {100 * e:+.0f}%" for k, e in found.items())
        out = [Claim(SOURCE, *model_claim, f"{within} of {len(found)} within; worst "
                     f"{LABELS[worst]} ({detail})",
                     "yes" if within == len(found) else "partly" if within else "no")]
    else:
        out = [Claim(SOURCE, *model_claim, "not measured", "not measured")]
    searched, peak = searches(rows), _best_peak(rows)
    texts = []
    if searched:
        r = searched[-1]
        texts.append(f"the search {_efficiency(r)}")
    if peak is not None:
        texts.append(f"at its peak (length {peak['length']}, as CUDASW++4.0's \"up to\" "
                     f"figure) {_efficiency(peak)}")
    if texts:
        value = _gcups_per_watt(peak if peak is not None else searched[-1])
        out.append(Claim("wavedp", *search_claim, "; ".join(texts),
                         "yes" if value >= CUDASW_GCUPS_PER_WATT else "no"))
    else:
        out.append(Claim("wavedp", *search_claim, "not measured", "not measured"))
    anchored = _anchor_claim(rows)
    return out + ([anchored] if anchored else [])


def _anchor_claim(rows: list[dict]) -> Claim | None:
    """wavedp's best peak search against CUDASW++4.0's best peak measured on this GPU in the
    same run (None where CUDASW++4.0 did not run), with the ratio at each length."""
    anchors, peak = select(rows, "anchor"), _best_peak(rows, _as_anchor)
    if not anchors or peak is None:
        return None
    best = max(anchors, key=_gcups_per_watt)
    ours = {r["length"]: r for r in _like_anchor(rows)}
    ratios = {a["length"]: _as_anchor(ours[a["length"]]) / _gcups_per_watt(a)
              for a in anchors if a["length"] in ours}
    at = ", ".join(f"{length} {ratio:.2f}x" for length, ratio in ratios.items())
    value = _as_anchor(peak) / _gcups_per_watt(best)
    verdict = ("yes" if value >= 1 else "partly" if any(r >= 1 for r in ratios.values())
               else "no")
    return Claim("wavedp", "the search is as energy-efficient as CUDASW++4.0 on this GPU",
                 f"{cudasw.NAME}'s peak benchmark run here, same run: "
                 f"{_gcups_per_watt(best):.1f} GCUPS/W at length {best['length']} "
                 f"({_gcups(best):,.0f} GCUPS at {best['watts']:.0f} W)",
                 f"best peak {_as_anchor(peak):.1f} GCUPS/W at length {peak['length']} (power "
                 f"read alike; energy counter {_gcups_per_watt(peak):.1f}), {value:.2f}x; "
                 f"wavedp / {cudasw.NAME} by length: {at}", verdict)


def _efficiency(r: dict) -> str:
    return (f"{_gcups_per_watt(r):.1f} GCUPS/W ({_gcups(r):,.0f} GCUPS at "
            f"{r['watts']:.0f} W)")
