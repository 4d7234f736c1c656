"""Work spread over the machine's cores, by forking.

``render`` and ``validate`` spend most of their time on work that is independent per job, per
object or per file (loading and building jobs, the schema and API-server checks, writing YAML,
reading files). Such work is handed to a *chunk mapper*: :func:`serial` does it all in this
process (the default wherever a mapper is taken); :func:`forking` maps it over the items in
chunks (every n-th item), the first chunk here and the others in child processes forked from
this one, and gives the results back in the items' order. :func:`alongside_mapped` runs one
part of a run (the rules over all objects) in the first of the processes mapping another (the
checks of each object), and :func:`background` starts one (writing a tree's files) while this
process goes on.

What is computed is exactly what one process computes: the children are copies of this
process (same values, same hash seed), each item is computed by the same function, and the
results are put back in the items' order. When any chunk raises, or a child dies without an
answer (killed, out of memory), the work is done again here in one process, so what is raised
is what one process raises: the work handed out is expected not to raise (render and validate
return the problems they find as values).

It forks only where that is safe and worth it: on Linux, with more than one usable core, no
other thread running (a fork copies only the calling thread), and enough work for a process
(``per_process`` items); everywhere else it does the work here. ``KUBETRAIN_WORKERS`` sets the
number of processes (``1``: never fork).

This module imports nothing of kubetrain: callers hand the work in.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import marshal
import os
import pickle
import signal
import struct
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, NoReturn, Protocol, TypeVar, cast

__all__ = [
    "ENV",
    "ChunkMapper",
    "Forked",
    "alongside_mapped",
    "background",
    "forking",
    "interrupts_held",
    "serial",
    "workers",
]

T = TypeVar("T")
R = TypeVar("R")
A = TypeVar("A")
B = TypeVar("B")

#: The environment variable that sets the number of processes (``1``: never fork).
ENV = "KUBETRAIN_WORKERS"
#: More processes than this gain nothing on the work kubetrain hands out (the serial parts
#: dominate) and cost a fork and a transfer each.
MAX_WORKERS = 8


class ChunkMapper(Protocol):
    """Maps ``fn`` over ``items``: ``fn`` takes some of the items and returns one result for
    each; the mapper returns the result of every item, in the items' order. ``done(n)`` is
    called as ``n`` more items are done (a progress line). ``per_process``: the fewest items
    worth a process of their own (a fork and the transfer of the results take about 10 ms:
    the caller, who knows what an item costs, says how many make well over that)."""

    def __call__(
        self,
        fn: Callable[[Sequence[T]], list[R]],
        items: Sequence[T],
        done: Callable[[int], None] | None = None,
        *,
        per_process: int = 1,
    ) -> list[R]: ...


#: Items per call of ``fn`` when progress is shown (``done``).
STEP = 100


def serial(
    fn: Callable[[Sequence[T]], list[R]],
    items: Sequence[T],
    done: Callable[[int], None] | None = None,
    *,
    per_process: int = 1,
) -> list[R]:
    """The chunk mapper of one process: ``fn`` over all of ``items`` at once, or over slices
    of :data:`STEP` items when ``done`` shows progress."""
    if done is None:
        return _checked(fn(items), items)
    results: list[R] = []
    for start in range(0, len(items), STEP):
        part = items[start : start + STEP]
        results += _checked(fn(part), part)
        done(len(part))
    return results


def _checked(results: list[R], items: Sequence[T]) -> list[R]:
    if len(results) != len(items):
        raise ValueError(f"{len(results)} results for {len(items)} items")
    return results


def workers() -> int:
    """How many processes to use: ``KUBETRAIN_WORKERS``, else the cores this process may run
    on (at most :data:`MAX_WORKERS`). A value that is not a positive number counts as 1."""
    given = os.environ.get(ENV)
    if given is not None:
        try:
            return max(1, int(given))
        except ValueError:
            return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS))


def _can_fork() -> bool:
    """Whether forking is safe here: on Linux, with no other thread running (a fork copies only
    the calling thread, and a lock another thread holds would stay locked in the child)."""
    return (
        sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1
    )


def forking(
    fn: Callable[[Sequence[T]], list[R]],
    items: Sequence[T],
    done: Callable[[int], None] | None = None,
    *,
    per_process: int = 1,
) -> list[R]:
    """The chunk mapper of several processes: forks as many as :func:`workers` allows with at
    least ``per_process`` items each, where forking is safe; else :func:`serial`."""
    n = min(workers(), len(items) // max(1, per_process))
    if n < 2 or not _can_fork():
        return serial(fn, items, done)
    return _forked(fn, items, n, done)


#: The signals that interrupt a run (Ctrl-C, ``kill``): held back while a child is being
#: started and recorded, so none is left running unrecorded.
_INTERRUPTS = frozenset({signal.SIGINT, signal.SIGTERM})


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM held back (delivered on exit) while the caller starts children and
    records them: an interruption between a fork and its bookkeeping would leave a child that
    no one stops or waits for."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not on Linux
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _INTERRUPTS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def background(fn: Callable[[], R]) -> Forked[R] | None:
    """``fn()`` started in a forked child, to run while this process goes on (the file system's
    work of writing a tree, beside render's checks); ``None`` where forking is not safe,
    :func:`workers` is 1, or the system refuses another process (the caller then does the work
    itself). Call it, and record what it returns, under :func:`interrupts_held`."""
    if workers() < 2 or not _can_fork():
        return None
    try:
        return Forked(fn)
    except OSError:  # EAGAIN, ENOMEM: no process to spare
        return None


def alongside_mapped(
    first: Callable[[], A], work: Callable[[ChunkMapper], B], *, fork: bool = True
) -> tuple[A, B]:
    """``first()`` and ``work(mapper)``, two independent parts of a run, where ``work`` maps
    its items with ``mapper`` (a chunk mapper like :func:`forking`): ``first()`` is computed by
    the first child the mapper forks, before that child takes its share of the slices, so the
    two share one set of processes (no third process contending for two cores). Where that
    mapping does not fork (too few items for a second process), ``first()`` runs in a child
    of its own beside it (``fork``: when there is enough work for that), else here after
    ``work``. ``first`` must only return what it computes: what it changes in a child is lost.
    What is raised is what one process running ``first()`` then ``work(serial)`` raises:
    ``first`` is run again here when its child raised or died."""
    shared = _First(first, fork)

    def mapper(
        fn: Callable[[Sequence[T]], list[R]],
        items: Sequence[T],
        done: Callable[[int], None] | None = None,
        *,
        per_process: int = 1,
    ) -> list[R]:
        n = min(workers(), len(items) // max(1, per_process))
        if shared.started or not _can_fork():
            return serial(fn, items, done)
        shared.started = True
        if n < 2:
            if shared.fork:
                with interrupts_held():
                    shared.child = background(first)
            return serial(fn, items, done)
        return _forked(fn, items, n, done, shared)

    try:
        try:
            b = work(mapper)
        except Exception:
            if not shared.computed():
                first()  # raises what one process would have raised first
            raise
        return (cast(A, shared.value) if shared.computed() else first()), b
    finally:
        if shared.child is not None:
            shared.child.close(kill=True)


class _First(Generic[A]):
    """The work :func:`alongside_mapped` hands to a child of its mapping: its value once a
    child computed it (``ok``)."""

    def __init__(self, fn: Callable[[], A], fork: bool) -> None:
        self.fn, self.fork = fn, fork
        self.started = False
        self.ok = False
        self.value: A | None = None
        self.child: Forked[A] | None = None  # computing fn alone, beside a serial mapping

    def computed(self) -> bool:
        """Whether a child computed the value (collecting the one computing it alone)."""
        if self.child is not None:
            self.ok, self.value = self.child.result()
            self.child = None
        return self.ok


class Forked(Generic[R]):
    """``fn()`` computed by a forked child, which sends its result back through a pipe."""

    def __init__(self, fn: Callable[[], R]) -> None:
        read, write = os.pipe()
        parent = os.getpid()
        prctl = _prctl()  # found here once, not in every child
        try:
            pid = os.fork()
        except BaseException:
            os.close(read)
            os.close(write)
            raise
        if pid == 0:  # the child: never returns into the caller's stack
            _child_main(fn, read, write, parent, prctl)
        self.pid: int | None = pid
        self.fd: int | None = read
        os.close(write)

    def result(self) -> tuple[bool, R | None]:
        """Waits for the child: (True, what ``fn()`` returned), or (False, None) when it raised
        or the child died."""
        assert self.fd is not None
        # The answer's length, then the answer, read into one buffer of that size: never held
        # twice (as pieces and joined), which was the peak of a 60,000-object render.
        head = _read_exactly(self.fd, bytearray(_LENGTH.size))
        data = _read_exactly(self.fd, bytearray(_LENGTH.unpack(head)[0])) if head else None
        self.close()
        if data is None:  # no answer, or a truncated one: the child died before the end
            return False, None
        try:
            value: R = _loads(data)
        except Exception:
            return False, None
        return True, value

    def close(self, kill: bool = False) -> None:
        """Stops waiting for the child (``kill``: kills it first); it is gone on return."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        interrupted: BaseException | None = None
        while self.pid is not None:
            if kill or interrupted is not None:
                with contextlib.suppress(OSError):
                    os.kill(self.pid, signal.SIGKILL)
            try:
                os.waitpid(self.pid, 0)
                self.pid = None
            except ChildProcessError:
                self.pid = None
            except BaseException as exc:  # Ctrl-C while waiting: the child is killed, and reaped
                interrupted = interrupted or exc
        if interrupted is not None:
            raise interrupted


def _child_main(
    fn: Callable[[], Any], read: int, write: int, parent: int, prctl: Callable[..., Any] | None
) -> NoReturn:
    """The child's whole life: compute, answer, exit, without running anything of the parent's
    (no ``finally`` of its callers, no ``atexit``, no flushing of inherited buffers). Work that
    raises gets no answer: the parent does it again and raises the exception itself, exactly as
    one process would have (exceptions do not all survive pickling intact). A parent killed
    (SIGKILL, SIGTERM) takes the child with it: none goes on writing files unwatched."""
    code = 1
    try:
        _die_with(parent, prctl)
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _INTERRUPTS)  # held by the parent
        os.close(read)
        answer = _dumps(fn())
        for part in (_LENGTH.pack(len(answer)), answer):
            view = memoryview(part)
            while view:
                view = view[os.write(write, view) :]
        code = 0
    except BaseException:  # no answer; the parent decides
        pass
    finally:
        os._exit(code)


@functools.cache
def _prctl() -> Callable[..., Any] | None:
    """The C library's ``prctl`` (Linux), or ``None``."""
    try:
        import ctypes

        return cast(Callable[..., Any], ctypes.CDLL(None, use_errno=True).prctl)
    except (OSError, AttributeError):
        return None


def _die_with(parent: int, prctl: Callable[..., Any] | None) -> None:
    """Have the kernel kill this process when its parent ends (Linux ``PR_SET_PDEATHSIG``),
    and end now if the parent already has."""
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


_PR_SET_PDEATHSIG = 1


#: How the length of an answer is written before it.
_LENGTH = struct.Struct("<Q")


def _read_exactly(fd: int, buffer: bytearray) -> bytearray | None:
    """``buffer`` filled from ``fd``, or ``None`` if the pipe ends before it is full."""
    view = memoryview(buffer)
    got = 0
    while got < len(buffer):
        n = os.readv(fd, [view[got:]])
        if n == 0:
            return None
        got += n
    return buffer


def _dumps(value: Any) -> bytes:
    """``value`` as bytes for the parent: with marshal when it is plain data (manifests: about
    twice as fast as pickle, both ways), else with pickle."""
    try:
        return b"m" + marshal.dumps(value)
    except ValueError:  # not plain data (dataclasses)
        return b"p" + pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def _loads(data: bytes | bytearray) -> Any:
    if data[:1] == b"m":
        return marshal.loads(memoryview(data)[1:])
    if data[:1] == b"p":
        return pickle.loads(memoryview(data)[1:])
    raise ValueError("not an answer")


#: Slices of the items per process: the processes take slices one at a time, as each is done
#: with the last, so a process slowed down (by another process on its core) takes fewer.
SLICES_PER_PROCESS = 8


#: The slice number under which a child answers with :class:`_First`'s value.
_FIRST = -1


def _forked(
    fn: Callable[[Sequence[T]], list[R]],
    items: Sequence[T],
    n: int,
    done: Callable[[int], None] | None,
    first: _First[Any] | None = None,
) -> list[R]:
    count = min(255, n * SLICES_PER_PROCESS, len(items))
    bounds = [len(items) * k // count for k in range(count + 1)]
    slices = [items[a:b] for a, b in itertools.pairwise(bounds)]
    # The slices still to take, one byte each in a pipe: reading a byte takes one, atomically,
    # whichever process reads it; the pipe is empty once all are taken.
    queue, fill = os.pipe()
    try:
        os.write(fill, bytes(range(count)))
    finally:
        os.close(fill)
    children: list[Forked[list[tuple[int, list[R]]]]] = []
    out: list[Any] = [None] * len(items)
    try:
        with interrupts_held():
            for i in range(n - 1):
                task = functools.partial(_take, fn, slices, queue)
                if i == 0 and first is not None:
                    task = functools.partial(_first_then, first.fn, task)
                child = background(task)
                if child is None:  # no process to spare: this one takes more slices
                    break
                children.append(child)
        # The children share the slices with this process and report nothing until they end:
        # each slice done here stands for one done by every process (as the slices are taken
        # from one queue), so a progress line moves at the pace of all of them and reaches its
        # end once they are collected.
        reported = 0

        def mine_done(k: int) -> None:
            nonlocal reported
            step = min(k * (len(children) + 1), len(items) - reported)
            reported += step
            if done is not None and step:
                done(step)

        try:
            mine = _take(fn, slices, queue, mine_done if done is not None else None)
        except Exception:
            return _failed(fn, items)
        answers = []
        for child in children:
            ok, value = child.result()
            if not ok or value is None:
                return _failed(fn, items)
            answers.append(value)
        if done is not None and reported < len(items):
            done(len(items) - reported)
        taken = 0
        for k, results in [*mine, *(a for answer in answers for a in answer)]:
            if k == _FIRST and first is not None:
                first.ok, first.value = True, results
                continue
            out[bounds[k] : bounds[k + 1]] = _checked(results, slices[k])
            taken += 1
        if taken != count:  # a slice no one took: cannot happen unless a child lost one
            return _failed(fn, items)
        return out
    finally:
        os.close(queue)
        for child in children:
            child.close(kill=True)


def _take(
    fn: Callable[[Sequence[T]], list[R]],
    slices: Sequence[Sequence[T]],
    queue: int,
    done: Callable[[int], None] | None = None,
) -> list[tuple[int, list[R]]]:
    """Map ``fn`` over slices taken from ``queue`` until none is left: (slice, results)."""
    out = []
    while token := os.read(queue, 1):
        k = token[0]
        out.append((k, fn(slices[k])))
        if done is not None:
            done(len(slices[k]))
    return out


def _first_then(first: Callable[[], Any], take: Callable[[], list[Any]]) -> list[Any]:
    """A child's work when it also computes :func:`alongside_mapped`'s ``first``: that, then
    its slices, answered as one list (``first``'s value under slice :data:`_FIRST`)."""
    value = first()
    return [(_FIRST, value), *take()]


def _failed(fn: Callable[[Sequence[T]], list[R]], items: Sequence[T]) -> list[R]:
    """Some chunk raised, or its child died: the items are mapped again in one process, which
    raises what one process raises (the exception of the first item that fails)."""
    return serial(fn, items)
