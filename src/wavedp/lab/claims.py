"""The papers' claims, checked against the lab's measurements: each claim with what the paper
reports, what was measured, and a verdict (yes, partly, no, not measured)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..engines.cuda.sync import TUNED
from . import model
from .report import barrier_costs, barrier_fits, select, table

PAPER_BARRIERS = ("simple", "tree2", "tree3", "lockfree")
#: the in-kernel barriers the issue's target is checked on: the papers' and wavedp's own
OUR_BARRIERS = PAPER_BARRIERS + TUNED
XF = "Xiao and Feng 2010"
XAF = "Xiao, Aji and Feng 2009"


@dataclass
class Claim:
    source: str
    claim: str
    paper: str
    measured: str
    verdict: str


def _missing(source: str, claim: str, paper: str) -> Claim:
    return Claim(source, claim, paper, "not measured", "not measured")


def _at_largest(rows: list[dict]) -> tuple[int, dict[str, float]]:
    """The largest block count and each strategy's barrier cost (us) there."""
    top = max(r["blocks"] for r in rows)
    return top, {r["sync"]: r["barrier_us"] for r in select(rows, blocks=top)}


def barrier_claims(rows: list[dict]) -> list[Claim]:
    """Fig. 11 and equations (6), (9), and the issue's target for our barriers."""
    texts = [
        ("lock-free is the fastest of the paper's barriers", "Fig. 11"),
        ("tree-based beats simple at large block counts", "Fig. 11"),
        ("every GPU barrier beats CPU implicit synchronization", "Fig. 11"),
        ("CPU implicit beats CPU explicit synchronization", "Fig. 11"),
        ("simple barrier cost grows linearly with blocks", "eq. (6)"),
        ("lock-free barrier cost is nearly independent of blocks", "eq. (9)"),
    ]
    target = ("an in-kernel barrier costs <= 1.0 us per round, flat from 8 blocks to the "
              "co-resident maximum (anchor grid.sync)", "wavedp's own target")
    if not rows:
        return [_missing(XF, c, p) for c, p in texts] + [_missing("wavedp", *target)]
    top, cost = _at_largest(rows)
    out = []

    def have(*names: str) -> bool:
        return all(n in cost for n in names)

    if have(*PAPER_BARRIERS):
        best = min(PAPER_BARRIERS, key=cost.get)
        out.append(Claim(XF, texts[0][0], texts[0][1],
                         f"at {top} blocks the fastest is {best} ({cost[best]:.2f} us; lock-free "
                         f"{cost['lockfree']:.2f} us)", "yes" if best == "lockfree" else "no"))
        tree = min(cost["tree2"], cost["tree3"])
        out.append(Claim(XF, texts[1][0], texts[1][1],
                         f"at {top} blocks tree {tree:.2f} us, simple {cost['simple']:.2f} us",
                         "yes" if tree < cost["simple"] else "no"))
    else:
        out += [_missing(XF, *texts[0]), _missing(XF, *texts[1])]
    if have(*PAPER_BARRIERS, "cpu-implicit"):
        slower = [s for s in PAPER_BARRIERS if cost[s] >= cost["cpu-implicit"]]
        out.append(Claim(XF, texts[2][0], texts[2][1],
                         f"at {top} blocks CPU implicit {cost['cpu-implicit']:.2f} us per step; "
                         + (f"not beaten by {', '.join(slower)}" if slower else
                            f"GPU barriers {min(cost[s] for s in PAPER_BARRIERS):.2f}-"
                            f"{max(cost[s] for s in PAPER_BARRIERS):.2f} us"),
                         "yes" if not slower else "partly" if len(slower) < 4 else "no"))
    else:
        out.append(_missing(XF, *texts[2]))
    explicit, implicit = select(rows, sync="cpu-explicit"), select(rows, sync="cpu-implicit")
    if explicit and implicit:
        by_blocks = {r["blocks"]: r["barrier_us"] for r in implicit}
        wins = sum(r["barrier_us"] > by_blocks.get(r["blocks"], math.inf) for r in explicit)
        out.append(Claim(XF, texts[3][0], texts[3][1],
                         f"implicit faster at {wins} of {len(explicit)} block counts",
                         "yes" if wins == len(explicit) else "partly" if wins else "no"))
    else:
        out.append(_missing(XF, *texts[3]))
    fits = barrier_fits(rows)
    if "simple" in fits:
        f = fits["simple"]
        linear = f.coef[0] > 0 and not math.isnan(f.r2) and f.r2 >= 0.9
        out.append(Claim(XF, texts[4][0], texts[4][1], f"{f.describe()}, R^2 {f.r2:.3f}",
                         "yes" if linear else "no"))
    else:
        out.append(_missing(XF, *texts[4]))
    if "lockfree" in fits:
        mine = select(rows, sync="lockfree")
        values = [r["barrier_us"] for r in mine if r["blocks"] >= 8]
        steady = model.flat([r["blocks"] for r in mine], [r["barrier_us"] for r in mine])
        out.append(Claim(XF, texts[5][0], texts[5][1],
                         f"{min(values, default=math.nan):.2f}-{max(values, default=math.nan):.2f}"
                         f" us from 8 blocks to {top}", "yes" if steady else "no"))
    else:
        out.append(_missing(XF, *texts[5]))
    out.append(_target(rows, target))
    return out


def _target(rows: list[dict], target: tuple[str, str]) -> Claim:
    top = max(r["blocks"] for r in rows)
    good = []
    for sync in OUR_BARRIERS:
        mine = select(rows, sync=sync)
        if not mine or max(r["blocks"] for r in mine) < top:
            continue
        worst = max((r["barrier_us"] for r in mine if r["blocks"] >= 8), default=math.inf)
        steady = model.flat([r["blocks"] for r in mine], [r["barrier_us"] for r in mine])
        if worst <= 1.0 and steady:
            good.append(f"{sync} (at most {worst:.2f} us)")
    anchor = {r["blocks"]: r["barrier_us"] for r in select(rows, sync="grid")}
    note = f"; grid.sync {anchor[top]:.2f} us at {top} blocks" if top in anchor else ""
    return Claim("wavedp", target[0], target[1],
                 ("met by " + ", ".join(good) if good else "no strategy meets it") + note,
                 "yes" if good else "no")


def speedup_claim(rows: list[dict], source: str, claim: str, paper: str, percent: float,
                  size_key: str, **where) -> Claim:
    """Best GPU barrier (the paper's four) against CPU implicit sync on the rows matching
    ``where`` at the largest problem measured there: faster by at least ``percent``?"""
    mine = select(rows, **where)
    if not any(r["sync"] == "cpu-implicit" for r in mine) or \
            not any(r["sync"] in PAPER_BARRIERS for r in mine):
        return _missing(source, claim, paper)
    size = max(r[size_key] for r in mine)
    at = select(mine, **{size_key: size})
    best = min((r for r in at if r["sync"] in PAPER_BARRIERS), key=lambda r: r["seconds"])
    implicit = min((r for r in at if r["sync"] == "cpu-implicit"), key=lambda r: r["seconds"])
    gain = 100 * (1 - best["seconds"] / implicit["seconds"])
    verdict = "yes" if gain >= percent else "partly" if gain > 0 else "no"
    return Claim(source, claim, paper,
                 f"{best['sync']} {best['seconds'] * 1e3:.3g} ms vs CPU implicit "
                 f"{implicit['seconds'] * 1e3:.3g} ms at {size_key} {size:,}: {gain:.0f}% "
                 "faster", verdict)


def model_claim(groups: list[list[dict]], costs: dict[tuple[str, int], float]) -> Claim:
    """The model's S_T within 25% of the measured speedup, over the in-kernel strategies of
    each group (rows of one configuration)."""
    claim = "the time model predicts the speedup over CPU implicit (S_T within 25%)"
    hits = total = 0
    for rows in groups:
        base = next((r for r in rows if r["sync"] == "cpu-implicit"), None)
        if base is None:
            continue
        blocks = max(r["blocks"] for r in rows)
        rho = min(base["compute"] / base["seconds"], 1.0)
        for r in rows:
            cost, base_cost = costs.get((r["sync"], blocks)), costs.get(("cpu-implicit", blocks))
            if r["sync"] not in PAPER_BARRIERS or not cost or not base_cost or \
                    min(cost, base_cost) <= 0:
                continue
            predicted = model.speedup(rho, base_cost / cost)
            measured = base["seconds"] / r["seconds"]
            total += 1
            hits += abs(predicted / measured - 1) <= 0.25
    if not total:
        return _missing(XF, claim, "S_T = 1/(rho + (1-rho)/S_S)")
    return Claim(XF, claim, "S_T = 1/(rho + (1-rho)/S_S)", f"{hits} of {total} within 25%",
                 "yes" if hits == total else "partly" if hits else "no")


def swat_claims(rows: list[dict]) -> list[Claim]:
    """Fig. 8 of Xiao, Aji and Feng: coalesced beats simple storage, tiled is fastest, GPU
    synchronization beats CPU synchronization for every implementation."""
    texts = [("coalesced storage beats simple storage (same synchronization)", "Fig. 8"),
             ("the tiled wavefront is the fastest implementation", "Fig. 8"),
             ("GPU synchronization beats CPU synchronization in every implementation",
              "Fig. 8")]
    sizes = [r for r in rows if r.get("sweep") == "sizes"]
    if not sizes:
        return [_missing(XAF, *t) for t in texts]
    largest = max(r["m"] for r in sizes)
    at = select(sizes, m=largest)
    out = []
    simple = {r["sync"]: r["seconds"] for r in select(at, implementation="simple")}
    coalesced = {r["sync"]: r["seconds"] for r in select(at, implementation="coalesced")}
    common = sorted(set(simple) & set(coalesced))
    if common:
        wins = sum(coalesced[s] < simple[s] for s in common)
        out.append(Claim(XAF, *texts[0], f"coalesced faster under {wins} of {len(common)} "
                         f"strategies at {largest:,} x {largest:,}",
                         "yes" if wins == len(common) else "partly" if wins else "no"))
    else:
        out.append(_missing(XAF, *texts[0]))
    best = {impl: min((r for r in at if r["implementation"] == impl),
                      key=lambda r: r["seconds"], default=None)
            for impl in ("simple", "coalesced", "tiled")}
    if all(best.values()):
        fastest = min(best, key=lambda k: best[k]["seconds"])
        out.append(Claim(XAF, *texts[1], ", ".join(
            f"{k} {v['seconds'] * 1e3:.3g} ms ({v['sync']})" for k, v in best.items())
            + f" at {largest:,} x {largest:,}", "yes" if fastest == "tiled" else "no"))
    else:
        out.append(_missing(XAF, *texts[1]))
    wins, parts = 0, []
    for impl in ("simple", "coalesced", "tiled"):
        mine = select(at, implementation=impl)
        cpu = [r["seconds"] for r in mine if r["sync"] in ("cpu-explicit", "cpu-implicit")]
        gpu = [r["seconds"] for r in mine if r["sync"] in PAPER_BARRIERS]
        if cpu and gpu:
            wins += min(gpu) < min(cpu)
            parts.append(f"{impl} {100 * (1 - min(gpu) / min(cpu)):.0f}%")
    out.append(Claim(XAF, *texts[2], "GPU sync faster by " + ", ".join(parts),
                     "yes" if parts and wins == len(parts) else "partly" if wins else "no")
               if parts else _missing(XAF, *texts[2]))
    return out


def evaluate(barriers: list[dict], fft: list[dict], sort: list[dict], swat: list[dict],
             cost_rows: list[dict] | None = None) -> list[Claim]:
    """Every claim, in the order of the report; the model's S_S comes from ``cost_rows``
    (micro-benchmark rows at the algorithms' block counts; default ``barriers``)."""
    costs = barrier_costs(barriers if cost_rows is None else cost_rows)
    sizes = [r for r in swat if r.get("sweep") == "sizes"]
    groups = []
    for rows, keys in ((fft, ("size", "blocks")), (sort, ("dtype", "size", "blocks")),
                       (sizes, ("implementation", "m"))):
        found: dict[tuple, list[dict]] = {}
        for r in rows:
            if r.get("sweep", "sizes") == "sizes":
                found.setdefault(tuple(r[k] for k in keys), []).append(r)
        groups += list(found.values())
    return [
        *barrier_claims(barriers),
        speedup_claim(fft, XF, "FFT: GPU synchronization beats CPU implicit", "8% (Fig. 13)",
                      8, "size", sweep="sizes"),
        speedup_claim(sizes, XF, "Smith-Waterman: GPU synchronization beats CPU implicit",
                      "24% (Fig. 14)", 24, "m", implementation="coalesced"),
        speedup_claim(sort, XF, "bitonic sort: GPU synchronization beats CPU implicit",
                      "39% (Fig. 15)", 39, "size", sweep="sizes", dtype="int32"),
        model_claim(groups, costs),
        *swat_claims(swat),
    ]


def claims_table(claims: list[Claim]) -> str:
    return table(["source", "claim", "paper", "this GPU (this run)", "reproduced"],
                 [[c.source, c.claim, c.paper, c.measured, c.verdict] for c in claims])
