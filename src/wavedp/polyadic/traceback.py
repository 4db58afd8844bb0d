"""From a choice table to an optimal derivation, a parenthesization or base pairs.

A choice table holds, for each cell ``(i, j)`` with ``i < j``, the chosen split ``k``
(``m[i][k] (+) m[k+1][j]``) or ``j`` for the pairing term (``p(i, j) (+) m[i+1][j-1]``).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError


def derivation(choice: np.ndarray) -> np.ndarray:
    """The non-leaf cells ``(i, j, k)`` of the optimal derivation of ``m[0][n-1]``, one row
    each, in preorder (a cell before its parts, the left part first)."""
    n = choice.shape[0]
    out = []
    stack = [(0, n - 1)] if n > 1 else []
    while stack:
        i, j = stack.pop()
        k = int(choice[i, j])
        if not i <= k <= j:
            raise InputError(f"choice[{i}, {j}] = {k} is not a split of {i}..{j}")
        out.append((i, j, k))
        if k == j:
            if i + 1 < j - 1:
                stack.append((i + 1, j - 1))
            continue
        if k + 1 < j:
            stack.append((k + 1, j))
        if i < k:
            stack.append((i, k))
    return np.array(out, np.int64).reshape(-1, 3)


def parenthesization(nodes: np.ndarray, n: int, names: list[str] | None = None) -> str:
    """The derivation as a full parenthesization, e.g. ``((A1A2)A3)``; item i is named
    ``names[i]`` (default ``A{i+1}``)."""
    split = {(i, j): k for i, j, k in np.asarray(nodes).tolist()}
    name = (lambda i: names[i]) if names is not None else (lambda i: f"A{i + 1}")
    parts, stack = [], [(0, n - 1)]
    while stack:
        item = stack.pop()
        if item is None:
            parts.append(")")
            continue
        i, j = item
        if i == j:
            parts.append(name(i))
            continue
        k = split[(i, j)]
        if k == j:
            raise InputError(f"cell ({i}, {j}) pairs its ends: not a parenthesization")
        parts.append("(")
        stack += [None, (k + 1, j), (i, k)]
    return "".join(parts)


def pairs(nodes: np.ndarray) -> list[tuple[int, int]]:
    """The pairs ``(i, j)`` (0-based, ``i < j``) of the derivation, by ``i``."""
    return sorted((i, j) for i, j, k in np.asarray(nodes).tolist() if k == j)


def dotbracket(pair_list: list[tuple[int, int]], n: int) -> str:
    """A structure of ``n`` positions in dot-bracket notation."""
    out = ["."] * n
    for i, j in pair_list:
        out[i], out[j] = "(", ")"
    return "".join(out)
