"""Plans made ahead, in processes of their own: a search command forks, before any thread
starts, a child per GPU the driver lists that reads the inputs itself and plans the first
batches' scans of that GPU's shard (:func:`plans`), while the command itself loads CuPy,
starts its GPUs and reads the same inputs. The planner is plain Python and NumPy, so in the
command's own process it would hold the interpreter's lock against CuPy's import, the
inputs and the launches (0.3-0.5 s of a fresh process on one GPU, about 1 s per shard of a
741 M-residue database on two); the child plans on another core. (Several children per GPU,
each a share of its plans, brought the plans sooner but not the command: the command's own
start-up on the cores they took was as much slower.)

A child sends each plan as it is made, keyed by all it depends on
(:meth:`~.scanner.Scanner.ahead`); the parent keeps them in a store, and a scanner that
would make one of them takes it (:func:`take`), waiting while a child that promised it
is still planning. A scanner of another GPU or database, or one whose child failed, plans
itself: plans made ahead change the time of a search, never its results.
"""

from __future__ import annotations

import gc
import itertools
import os
import pickle
import struct
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence

#: the plans received, by what they depend on (taken once each)
_STORE: dict[tuple, tuple] = {}
#: at most this many are kept (the oldest go first)
KEPT = 64
#: what the children still planning promised, and how many have not said yet
_promised: set = set()
_silent = 0
#: children still planning
_planning = 0
_changed = threading.Condition()

#: a scanner waits at most this long for a child's plan before it plans itself
WAIT_SECONDS = 30.0


def plans(steps: list[list[tuple[tuple, Callable[[], tuple]]]]
          ) -> Iterator[tuple[tuple | None, object]]:
    """What a planning child sends, from each scanner's ``steps`` (:meth:`~.scanner.Scanner.
    ahead`: what each plan depends on, and the function that makes it): first (None, the
    list of what each plan depends on), its promise, then (what it depends on, plan) of
    each plan in the order a scan on every GPU at once needs them: every scanner's first,
    then every scanner's next (one child a GPU: one scanner's)."""
    order = [step for turn in itertools.zip_longest(*steps) for step in turn
             if step is not None]
    yield None, [content for content, _ in order]
    for content, make in order:
        yield content, make()


def fork(works: Sequence[Callable[[], Iterable[tuple[tuple | None, object]]]]) -> bool:
    """Run each of ``works`` (each yields what :func:`plans` does) in a child process of its
    own and keep what they send, as it comes, for :func:`take`; False (nothing started)
    where this process cannot fork safely (no ``fork``, or other threads running: a child
    of a threaded process may inherit a lock that is never released) or cannot fork at all
    (out of processes, memory or file descriptors: the works not started are left to the
    scanners). A child's standard
    streams go to the null device, it writes nothing but its pipe, and it ends with
    ``os._exit``: no exit handler of this process runs twice."""
    global _planning, _silent
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return False
    children = []
    gc.freeze()  # this process's objects out of the children's collections (see _child)
    for work in works:  # every child forked before the threads that read them start
        try:
            read, write = os.pipe()
        except OSError:  # out of file descriptors: the scanners plan the rest
            break
        try:
            spill = tempfile.TemporaryFile()
            pid = os.fork()
        except OSError:  # out of processes, memory or room for the plans: likewise
            os.close(read)
            os.close(write)
            break
        if pid == 0:
            _child(work, write, spill.fileno())
        os.close(write)
        children.append((read, spill, pid))
    gc.unfreeze()
    if not children:
        return False
    with _changed:
        _planning += len(children)
        _silent += len(children)
    for read, spill, pid in children:
        threading.Thread(target=_receive, args=(read, spill, pid), name="wavedp-plans",
                         daemon=True).start()
    return True


#: a message on a child's pipe: where its pickled item lies in the child's spill file
_WHERE = struct.Struct("<QQ")


def _child(work: Callable[[], Iterable[tuple[tuple | None, object]]], write: int,
           spill: int) -> None:
    """A planning child: each of ``work``'s items pickled into the file ``spill`` and its
    place (offset, size) sent on the pipe ``write``, then the process ends. A plan of
    570,000 subjects pickles to 7-14 MB: through the pipe, 64 KB at a time, the thread that
    reads it took the interpreter's lock again after every read, which the command's main
    thread (importing CuPy) held for up to 5 ms each time (a plan came up to a second late);
    from the file it is one read. The objects it shares with its parent were frozen out of
    its collections before the fork: a collection writes to every object it visits, which
    copies each page of them into the child."""
    status = 1
    try:
        quiet = os.open(os.devnull, os.O_RDWR)  # nothing of the child's reaches the user
        for fd in (0, 1, 2):
            os.dup2(quiet, fd)
        offset = 0
        for item in work():
            data = pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
            view = memoryview(data)
            while view:
                view = view[os.pwrite(spill, view, offset + len(data) - len(view)):]
            os.write(write, _WHERE.pack(offset, len(data)))  # atomic: under PIPE_BUF
            offset += len(data)
        status = 0
    except BaseException:  # noqa: BLE001, S110 - the parent plans for itself
        pass
    finally:
        os._exit(status)


def _receive(read: int, spill, pid: int) -> None:
    """Keep each plan the child ``pid`` sends (its place on ``read``, the plan in the file
    ``spill``) until it ends."""
    global _planning, _silent
    promised = False
    try:
        # the modules of a plan's classes (partition.Batch, shapes.Launch), imported while
        # the child still plans: imported by the first plan's unpickling instead, against
        # the command's busy threads (each file the import reads gives the interpreter's
        # lock away and waits to get it back), they held the first plans back 0.15-0.5 s
        from . import partition, shapes  # noqa: F401  (lazy: the import is the work)

        with os.fdopen(read, "rb") as stream, spill:
            while True:
                try:
                    offset, size = _WHERE.unpack(stream.read(_WHERE.size))
                    content, plan = pickle.loads(os.pread(spill.fileno(), size, offset))
                except (struct.error, EOFError, pickle.UnpicklingError, OSError, ValueError):
                    break
                with _changed:
                    if content is None:  # the child's promise
                        _promised.update(plan)
                        _silent -= 1
                        promised = True
                    else:
                        _STORE[content] = plan
                        while len(_STORE) > KEPT:
                            _STORE.pop(next(iter(_STORE)))
                    _changed.notify_all()
    finally:
        with _changed:
            _planning -= 1
            _silent -= not promised
            if not _planning:
                _promised.clear()
            _changed.notify_all()
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def take(content: tuple, wait: float = WAIT_SECONDS) -> tuple | None:
    """The plan made ahead for ``content`` (taken: a second call finds none), waiting while
    a child that promised it, or has not said yet what it plans, is still planning (at most
    ``wait`` seconds); None where there is none."""
    deadline = time.monotonic() + wait
    with _changed:
        while content not in _STORE and _planning and (_silent or content in _promised):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            _changed.wait(left)
        return _STORE.pop(content, None)


def pending() -> bool:
    """Whether a plan made ahead is kept or still being made."""
    return bool(_STORE) or _planning > 0
