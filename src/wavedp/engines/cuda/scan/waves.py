"""The ticket-by-ticket simulation of a scan launch of few tickets per block (the cost
model's ``waves``): the resident blocks take tickets in order, an SM's blocks share it by
age while tickets are queued, then finish sharing it evenly (Numba, compiled once)."""

from __future__ import annotations

import numpy as np
from numba import njit

#: with more than this many resident blocks per SM, an SM's blocks take consecutive tickets
#: (a probe of %smid per ticket: consecutive at 3.65 per SM, about 20 apart at 1.25)
SM_MAJOR = 2.5

#: while tickets are queued, the blocks of an SM do not share it evenly: the j-th oldest
#: gets a share in proportion to OLDER_SHARE ** j (warps are scheduled oldest first), so
#: blocks that start together end apart and the last tickets spread over the SMs (chosen on
#: the partitioning benchmark's launches: 1, sharing evenly, predicts its long-query
#: launches 16-24% slow; 0.6 to 0.9 all hold 91-92 of its 96 kernels within 15%)
OLDER_SHARE = 0.8


def waves(cost: np.ndarray, unit_passes: np.ndarray, later: tuple[float, np.ndarray],
           groups: int, blocks: int, speed: np.ndarray, single: float, sms: int,
           steady: float = 1.0) -> float:
    """Seconds of a launch of few tickets per block, ticket by ticket. The resident blocks
    (block b on SM b mod sms) take the tickets in order (a profile's subjects, ``groups`` at
    a time, ``cost``: one pass of each in lane-cells; ``later``: a later pass alone, and with
    k blocks on the SM, in first passes), each the next once its groups are all done. An SM
    with k busy blocks runs k times a group's rate with k blocks (``speed[k - 1]``); while
    tickets are queued its blocks share that by age (OLDER_SHARE, so blocks that started
    together end apart), a full SM ``steady`` times faster (k = 1 not, the k between in
    proportion), and once the last is taken they finish sharing it evenly, faster as the
    others end. A ticket's groups run faster as fewer are left (at the rate alone,
    ``single``, for one; in between in proportion), so its short ones end early and the rest
    speed up. No ticket ends before its sweep alone."""
    pad = -cost.size % groups
    batch = np.sort(np.concatenate([cost, np.zeros(pad)]).reshape(-1, groups), axis=1)
    most = speed.size
    active = groups - np.arange(groups)  # a ticket's groups still sweeping, in turn
    on_sm, rate_at = groups * np.arange(1, most + 1), speed  # groups on an SM of k blocks
    if groups > 1:  # one group on its SM runs at its rate alone
        on_sm, rate_at = np.concatenate([[1], on_sm]), np.concatenate([[single], speed])
    rates = np.interp(active[:, None] + groups * np.arange(most)[None, :], on_sm,
                      rate_at)  # (groups, k)
    # a batch's seconds with k blocks on its SM, as lane-cells at the rate of a full block
    spent = (np.diff(batch, axis=1, prepend=0.0) @ (1.0 / rates)) * speed[None, :]
    passes = unit_passes[:, None, None]
    shared = np.broadcast_to(np.asarray(later[1], np.float64), (most,))
    work = ((1 + (passes - 1) * shared[None, None, :]) * spent[None, :, :]).reshape(-1, most)
    alone = ((1 + (passes[:, :, 0] - 1) * later[0]) * batch[None, :, -1]).ravel() / single
    return _queue(np.ascontiguousarray(work), np.ascontiguousarray(alone), int(blocks), int(sms),
                  np.ascontiguousarray(speed, np.float64), OLDER_SHARE, SM_MAJOR,
                  1 + (steady - 1) * np.arange(most) / max(most - 1, 1))


@njit(cache=True, nogil=True)
def _queue(work: np.ndarray, alone: np.ndarray, blocks: int, sms: int, speed: np.ndarray,
           older: float, sm_major: float, steady: np.ndarray) -> float:  # pragma: no cover
    """:func:`waves` from the tickets' lane-cells at each k (``work``, tickets x k) and
    their sweeps alone (``alone``) on: the resident blocks take tickets (a heap of their
    ends, ties to the lower block), then finish sharing their SMs."""
    n, most = work.shape
    resident = min(blocks, most * sms, n)
    per_sm = np.zeros(sms, np.int64)
    slot = np.empty(resident, np.int64)  # each block's place among its SM's
    for b in range(resident):
        slot[b] = per_sm[b % sms]
        per_sm[b % sms] += 1
    weights = np.zeros(sms)
    for b in range(resident):
        weights[b % sms] += older ** slot[b]
    k = np.empty(resident, np.int64)
    rate = np.empty(resident)
    for b in range(resident):  # the SM's k blocks share it unevenly, by age
        s = b % sms
        k[b] = per_sm[s] - 1
        rate[b] = steady[k[b]] * speed[k[b]] * older ** slot[b] * per_sm[s] / weights[s]
    start = np.zeros(resident)
    last = np.arange(resident)
    if resident > sm_major * sms:  # the SMs fill in turn: an SM's blocks take consecutive tickets
        i = 0
        for s in range(sms):
            for b in range(s, resident, sms):
                last[b] = i
                i += 1
    if n > resident:  # a binary heap of (end, block)
        end = np.empty(resident)
        heap = np.arange(resident)
        for b in range(resident):
            end[b] = work[last[b], k[b]] / rate[b]
        for j in range(resident // 2 - 1, -1, -1):
            _sift(heap, end, j, resident)
        for i in range(resident, n):
            b = heap[0]
            start[b], last[b] = end[b], i
            end[b] += work[i, k[b]] / rate[b]
            _sift(heap, end, 0, resident)
    taken = start.max()  # the queue is empty from here
    left = np.zeros((sms, most))  # each SM's blocks' lane-cells still to sweep
    for b in range(resident):
        s = b % sms
        left[s, most - per_sm[s] + slot[b]] = max(
            work[last[b], k[b]] - (taken - start[b]) * rate[b], 0.0)
    result = 0.0
    for s in range(sms):
        row = np.sort(left[s])
        t, before = taken, 0.0
        for j in range(most):  # most - j blocks still sweeping while the j-th ends
            t += (row[j] - before) / speed[most - j - 1]
            before = row[j]
        result = max(result, t)
    for b in range(resident):
        result = max(result, start[b] + alone[last[b]])
    return result


@njit(cache=True, nogil=True, inline="always")
def _sift(heap: np.ndarray, end: np.ndarray, j: int, n: int) -> None:  # pragma: no cover
    """Restore the heap below position j (the least end first, ties to the lower block)."""
    while True:
        child = 2 * j + 1
        if child >= n:
            return
        if child + 1 < n and (end[heap[child + 1]] < end[heap[child]] or (
                end[heap[child + 1]] == end[heap[child]] and heap[child + 1] < heap[child])):
            child += 1
        a, c = heap[j], heap[child]
        if end[c] < end[a] or (end[c] == end[a] and c < a):
            heap[j], heap[child] = c, a
            j = child
        else:
            return
