"""The ticket-by-ticket simulation of a scan launch of few tickets per block (the cost
model's ``waves``): the resident blocks take tickets in order, an SM's blocks share it by
age while tickets are queued, then finish sharing it evenly."""

from __future__ import annotations

import heapq

import numpy as np

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
           groups: int, blocks: int, speed: np.ndarray, single: float, *, sms: int,
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
    return _queue(work, alone, int(blocks), int(sms), np.asarray(speed, np.float64),
                  OLDER_SHARE, SM_MAJOR,
                  1 + (steady - 1) * np.arange(most) / max(most - 1, 1))


def _queue(work: np.ndarray, alone: np.ndarray, blocks: int, sms: int, speed: np.ndarray,
           older: float, sm_major: float, steady: np.ndarray) -> float:
    """:func:`waves` from the tickets' lane-cells at each k (``work``, tickets x k) and
    their sweeps alone (``alone``) on: the resident blocks take tickets (a heap of their
    (end, block): the first to end takes the next, ties to the lower block), then finish
    sharing their SMs. Plain Python and NumPy (about 0.3 us a ticket): the planner needs no
    compiled kernel, so a search's first plan does not wait for Numba to load (1.0-1.2 s
    on the H100 machine)."""
    n, most = work.shape
    resident = min(blocks, most * sms, n)
    block = np.arange(resident)
    sm, slot = block % sms, block // sms  # placed round-robin: each block's SM and place
    per_sm = np.bincount(sm, minlength=sms)
    powers = np.array([power(older, j) for j in range(most)])
    weights = np.zeros(sms)
    for j in range(most):  # summed in the order the blocks are placed
        weights = weights + np.where(j < per_sm, powers[j], 0.0)
    k = per_sm[sm] - 1
    # the SM's k blocks share it unevenly, by age
    rate = steady[k] * speed[k] * powers[slot] * per_sm[sm] / weights[sm]
    start = np.zeros(resident)
    last = np.arange(resident)
    if resident > sm_major * sms:  # the SMs fill in turn: an SM's blocks take consecutive tickets
        last[np.lexsort((block, sm))] = block
    if n > resident:
        heap = list(zip((work[last, k] / rate).tolist(), range(resident), strict=True))
        heapq.heapify(heap)
        # each block's seconds of every queued ticket: the column of its k over its rate,
        # one list per distinct pair (the same float divisions a ticket at a time would do)
        columns: dict[tuple[int, float], list[float]] = {}
        seconds = []
        for kb, rb in zip(k.tolist(), rate.tolist(), strict=True):
            if (kb, rb) not in columns:
                columns[kb, rb] = (work[resident:, kb] / rb).tolist()
            seconds.append(columns[kb, rb])
        starts, lasts = start.tolist(), last.tolist()
        replace = heapq.heapreplace
        for j in range(n - resident):
            end, b = heap[0]
            starts[b], lasts[b] = end, j + resident
            replace(heap, (end + seconds[b][j], b))
        start, last = np.array(starts), np.array(lasts)
    taken = start.max()  # the queue is empty from here
    left = np.zeros((sms, most))  # each SM's blocks' lane-cells still to sweep
    left[sm, most - per_sm[sm] + slot] = np.maximum(work[last, k] - (taken - start) * rate,
                                                    0.0)
    left.sort(axis=1)
    t, before = np.full(sms, taken), np.zeros(sms)
    for j in range(most):  # most - j blocks still sweeping while the j-th ends
        t = t + (left[:, j] - before) / speed[most - j - 1]
        before = left[:, j]
    return max(float(t.max()), float((start + alone[last]).max()))


def power(x: float, j: int) -> float:
    """``x ** j`` by repeated squaring, as Numba's kernel of this simulation computed it
    (Python's ``pow`` differs in the last bit for 0.8 ** 4 and beyond, which can flip a
    tie between two blocks' ends)."""
    result = 1.0
    while j:
        if j & 1:
            result *= x
        x *= x
        j >>= 1
    return result
