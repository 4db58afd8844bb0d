"""The reverse-sequence null (Karplus, Karchin and Hughey 2005, Bioinformatics 21:4107): a
hit's score against the subject read backwards. A reversed sequence keeps its composition
and its periodic patterns (a coiled coil's heptads, an amphipathic helix), not its order:
where the query scores about as well against the reversed subject, the hit's score is bias,
not homology. The fitted statistics cap each hit's effective score at ``S - S_rev + u +
allowance`` (``u``: the score of E-value 1 against that subject length): an unrelated
subject's reversed score is far below ``u`` (one pair's chance, not the database's), so the
cap binds only where the reverse scores as a hit would."""

from __future__ import annotations

import numpy as np

from .. import engines
from ..engines.common import LOCAL
from .options import Context


def reversed_scores(context: Context, queries: list[np.ndarray], which: np.ndarray,
                    subjects: np.ndarray) -> np.ndarray:
    """The local score of query ``which[k]`` (codes of ``queries``) against database
    sequence ``subjects[k]`` reversed, for each k, on the search's device (with the
    profiles' table where the queries are profiles)."""
    if not len(subjects):
        return np.zeros(0, np.int64)
    order, target = np.unique(subjects, return_inverse=True)
    tcodes = [np.ascontiguousarray(context.subject(t)[::-1]) for t in order.tolist()]
    pairs = np.stack([np.asarray(which, np.int64), target.reshape(-1)], axis=1)
    profile = context.table is not None
    raw = engines.align_pairs(context.device, queries, tcodes, pairs,
                              context.table if profile else context.scoring.table,
                              context.scoring.gap_open, context.scoring.gap_extend, LOCAL,
                              traceback=False, profile=profile)
    return np.array([found[0] for found in raw], np.int64)
