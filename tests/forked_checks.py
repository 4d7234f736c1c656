"""Work on several cores (kubetrain.parallel): what one process computes, raises and writes.

render and validate fork only for large inputs; here every threshold is lowered so that small
inputs take the forked paths, and each test proves that they were taken (children were forked
and did some of the work) and that the output, the warnings and the errors are those of one
process, byte for byte.

kubetrain forks only while no other thread runs, and other tests leave threads behind (servers,
Pulumi's event loop): tests/test_parallel.py runs this file in a pytest process of its own.
"""

from __future__ import annotations

import copy
import dataclasses
import fcntl
import functools
import os
import signal
import struct
import termios
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_golden import CASES, golden_project
from test_golden import tree as tree_of

from kubetrain import app, parallel
from kubetrain.builders import registry
from kubetrain.models import InputError
from kubetrain.models import source as source_module
from kubetrain.models.load import stacks as load
from kubetrain.render import tree
from kubetrain.validate import Located, Validator, engine, semantic_findings
from kubetrain.validate.semantic import CheckSettings

from conftest import REPO

# --- the chunk mapper itself ---------------------------------------------------------------------


class Forks(list[int]):
    """The children forked (their process ids), and the slices of work they took."""

    taken: int = 0


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> Forks:
    """Two processes wherever kubetrain maps work, and every threshold at its lowest. This
    process takes no slice of work before a child has taken one, so that the children take
    some even of a small input (their results are what is being tested)."""
    monkeypatch.setenv(parallel.ENV, "2")
    assert threading.active_count() == 1, [
        (t.name, t.daemon, getattr(t, "_target", None)) for t in threading.enumerate()
    ]
    for module, name in [
        (registry, "JOBS_PER_PROCESS"),
        (load, "JOBS_PER_PROCESS"),
        (source_module, "PIECES_PER_PROCESS"),
        (tree, "OBJECTS_PER_PROCESS"),
        (tree, "FILES_PER_PROCESS"),
        (engine, "OBJECTS_PER_PROCESS"),
        (engine, "FILES_PER_PROCESS"),
        (app, "OBJECTS_ALONGSIDE"),
    ]:
        assert isinstance(getattr(module, name), int)
        monkeypatch.setattr(module, name, 1)
    monkeypatch.setattr(source_module, "PIECE_CHARS", 64)
    forked = Forks()
    parent = os.getpid()
    real_init, real_result, real_take = (
        parallel.Forked.__init__,
        parallel.Forked.result,
        parallel._take,
    )

    def init(self: parallel.Forked[Any], fn: Callable[[], Any]) -> None:
        real_init(self, fn)
        forked.append(self.pid or 0)

    def result(self: parallel.Forked[Any]) -> tuple[bool, Any]:
        ok, value = real_result(self)
        if ok and isinstance(value, list):
            forked.taken += len(value)
        return ok, value

    def take(fn: Callable[..., Any], slices: Any, queue: int, done: Any = None) -> Any:
        # Until a child has taken a slice, or every child has ended (one that failed takes
        # none): no wall clock, so a loaded machine, slow to run the children, only waits.
        if os.getpid() == parent and forked:
            while _left(queue) >= len(slices) and any(_running(pid) for pid in forked):
                time.sleep(0.001)
        return real_take(fn, slices, queue, done)

    monkeypatch.setattr(parallel.Forked, "__init__", init)
    monkeypatch.setattr(parallel.Forked, "result", result)
    monkeypatch.setattr(parallel, "_take", take)
    return forked


def _running(pid: int) -> bool:
    """Whether a child still runs (neither gone nor a zombie), from ``/proc/<pid>/stat``."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] not in (["Z"], ["X"])


def _left(queue: int) -> int:
    """Bytes still in a pipe: the slices of work no process has taken yet."""
    return int(struct.unpack("i", fcntl.ioctl(queue, termios.FIONREAD, b"\0" * 4))[0])


def _pids(items: Sequence[int]) -> list[tuple[int, int]]:
    return [(i * 2, os.getpid()) for i in items]


def test_forking_maps_as_one_process_and_really_forks(forks: Forks) -> None:
    items = list(range(100))
    done: list[int] = []
    got = parallel.forking(_pids, items, done.append, per_process=10)
    assert [value for value, _ in got] == [i * 2 for i in items]
    assert forks, "no child was forked"
    assert {pid for _, pid in got} - {os.getpid()}, "no item was computed by a child"
    assert forks.taken > 0
    # Progress ends at the total (this process's slices count for every process's).
    assert sum(done) == len(items)


def _raising(items: Sequence[int]) -> list[int]:
    for i in items:
        if i in (30, 70):
            raise ValueError(f"item {i}")
    return list(items)


def test_a_chunk_that_raises_raises_what_one_process_raises(forks: Forks) -> None:
    """Items 30 and 70 raise; whichever process meets which first, the error is item 30's, as
    in one process."""
    with pytest.raises(ValueError, match=r"^item 30$"):
        parallel.serial(_raising, list(range(100)))
    with pytest.raises(ValueError, match=r"^item 30$"):
        parallel.forking(_raising, list(range(100)), per_process=10)
    assert forks


def test_a_child_that_dies_has_its_work_done_here(forks: Forks) -> None:
    parent = os.getpid()

    def dies_in_a_child(items: Sequence[int]) -> list[int]:
        if os.getpid() != parent:
            os._exit(3)
        return [i + 1 for i in items]

    assert parallel.forking(dies_in_a_child, list(range(50)), per_process=5) == list(range(1, 51))
    assert forks


def test_no_fork_while_another_thread_runs(forks: Forks) -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        got = parallel.forking(_pids, list(range(100)), per_process=10)
    finally:
        stop.set()
        other.join()
    assert {pid for _, pid in got} == {os.getpid()}
    assert forks == []


@pytest.mark.parametrize(("value", "expected"), [("1", 1), ("3", 3), ("0", 1), ("x", 1)])
def test_workers_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: int
) -> None:
    monkeypatch.setenv(parallel.ENV, value)
    assert parallel.workers() == expected


def test_one_worker_never_forks(forks: Forks, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(parallel.ENV, "1")
    assert parallel.forking(_pids, list(range(100))) == _pids(range(100))
    assert parallel.background(lambda: 1) is None
    assert forks == []


def _mapped(value: Callable[[], Any]) -> Callable[[parallel.ChunkMapper], Any]:
    """Work that maps one item (too few for a second process), then gives ``value()``."""

    def work(chunks: parallel.ChunkMapper) -> Any:
        chunks(lambda part: list(part), [0], per_process=10)
        return value()

    return work


def test_alongside_gives_both_results_and_the_first_error(forks: Forks) -> None:
    assert parallel.alongside_mapped(lambda: os.getpid(), _mapped(os.getpid)) != (
        os.getpid(),
        os.getpid(),
    )
    assert len(forks) == 1

    def first() -> int:
        raise KeyError("first")

    def second() -> int:
        raise LookupError("second")

    # One process runs first() then second(): first's error wins, wherever it ran.
    with pytest.raises(KeyError, match="first"):
        parallel.alongside_mapped(first, _mapped(second))
    with pytest.raises(LookupError, match="second"):
        parallel.alongside_mapped(lambda: 1, _mapped(second))
    assert parallel.alongside_mapped(lambda: 1, _mapped(lambda: 2), fork=False) == (1, 2)


def test_alongside_mapped_computes_first_in_the_mappings_first_child(forks: Forks) -> None:
    """The rules over all objects share the checks' processes: the first child computes
    ``first()`` before it takes its slices, no process is forked for ``first`` alone, and the
    mapping is what one process maps."""
    items = list(range(100))
    first, got = parallel.alongside_mapped(
        os.getpid, lambda chunks: chunks(_pids, items, per_process=10)
    )
    assert got == [(i * 2, pid) for i, (_, pid) in zip(items, got, strict=True)]
    assert len(forks) == 1, "one child, for both the slices and first()"
    assert first == forks[0] != os.getpid()


def test_alongside_mapped_without_a_forked_mapping(forks: Forks) -> None:
    # Too few items for a second process: first() runs beside the serial mapping (fork), or
    # here after it (not fork, or the mapper never called).
    first, got = parallel.alongside_mapped(
        os.getpid, lambda chunks: chunks(_pids, [1, 2], per_process=10)
    )
    assert got == _pids([1, 2]) and len(forks) == 1 and first == forks[0] != os.getpid()
    assert parallel.alongside_mapped(
        os.getpid, lambda chunks: chunks(_pids, [1, 2], per_process=10), fork=False
    ) == (os.getpid(), _pids([1, 2]))
    assert parallel.alongside_mapped(os.getpid, lambda chunks: 7) == (os.getpid(), 7)
    assert len(forks) == 1


def test_alongside_mapped_raises_what_one_process_raises(forks: Forks) -> None:
    def first() -> int:
        raise KeyError("first")

    def work(chunks: parallel.ChunkMapper) -> list[int]:
        chunks(_pids, list(range(100)), per_process=10)
        raise LookupError("work")

    # One process runs first() then the work: first's error wins, wherever it ran.
    with pytest.raises(KeyError, match="first"):
        parallel.alongside_mapped(first, work)
    with pytest.raises(KeyError, match="first"):
        parallel.alongside_mapped(
            first, lambda chunks: chunks(_pids, list(range(100)), per_process=10)
        )
    with pytest.raises(LookupError, match="work"):
        parallel.alongside_mapped(lambda: 1, work)
    assert forks


def test_interrupts_are_held_while_children_are_started() -> None:
    got: list[str] = []
    with pytest.raises(KeyboardInterrupt), parallel.interrupts_held():
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)
        got.append("still running")
    assert got == ["still running"]


# --- render and validate: forked paths give one process's output --------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_render_on_several_cores_writes_what_one_process_writes(
    case: Path, tmp_path: Path, run, forks: Forks, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = golden_project(case, tmp_path)
    args = ("render", "--config", f"Pulumi.{case.name}.yaml")
    forked = run(*args, "--out", "forked", cwd=work)
    streamed = run(*args, "--stdout", cwd=work)
    assert forks, "render forked nothing"
    assert forks.taken > 0, "the children did none of the work"
    monkeypatch.setenv(parallel.ENV, "1")
    forks.clear()
    single = run(*args, "--out", "single", cwd=work)
    assert run(*args, "--stdout", cwd=work).stdout == streamed.stdout
    assert forks == []
    assert (forked.exit_code, forked.stderr) == (single.exit_code, single.stderr)
    assert forked.exit_code == 0, forked.stderr
    assert tree_of(work / "forked") == tree_of(work / "single") == tree_of(case / "expected")


def _tfjob(name: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "tensorflow", "image": "tf:2", "ports": [{"containerPort": 2222}]}
    if spec.pop("secret_env", False):
        ref = {"secretKeyRef": {"name": "missing", "key": "k"}}
        container["env"] = [{"name": "TOKEN", "valueFrom": ref}]
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {"replicas": 2, "template": {"spec": {"containers": [container]}}}
            },
            **spec,
        },
    }


#: Stacks of six jobs whose render fails, each way it can: job documents refused while loading,
#: jobs a builder cannot expand, and objects the checks refuse (a Secret that is not there).
FAILING: dict[str, Callable[[int], dict[str, Any]]] = {
    "load": lambda i: _tfjob("Bad" if i in (1, 4) else f"job-{i}"),
    "build": lambda i: _tfjob(
        f"job-{i}", **({"runPolicy": {"ttlSecondsAfterFinished": 60}} if i in (2, 5) else {})
    ),
    "check": lambda i: _tfjob(f"job-{i}", secret_env=i in (0, 3)),
}


@pytest.mark.parametrize("what", sorted(FAILING))
def test_render_on_several_cores_fails_as_one_process_fails(
    what: str, tmp_path: Path, run, forks: Forks, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = {"kubetrain:namespace": "ml", "kubetrain:jobs": [FAILING[what](i) for i in range(6)]}
    (tmp_path / "stacks").mkdir()
    (tmp_path / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\n")
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))
    forked = run("render", cwd=tmp_path)
    monkeypatch.setenv(parallel.ENV, "1")
    single = run("render", cwd=tmp_path)
    assert forked.exit_code == single.exit_code == (1 if what == "check" else 2)
    assert forked.stderr == single.stderr
    assert forked.stderr.count("\n") >= 2, forked.stderr  # both failing jobs, or objects
    assert not (tmp_path / "rendered").exists()
    assert forks, "render forked nothing"


def test_validate_on_several_cores_reports_what_one_process_reports(
    tmp_path: Path, run, forks: Forks, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rendered trees and the rules' fixtures, passing and failing, in every output format."""
    paths = [str(REPO / "rendered"), str(REPO / "tests" / "checks")]
    reports = {}
    for fmt in ("text", "json", "junit"):
        reports[fmt] = run("validate", "--output", fmt, *paths, cwd=REPO)
    assert forks, "validate forked nothing"
    monkeypatch.setenv(parallel.ENV, "1")
    for fmt, forked in reports.items():
        single = run("validate", "--output", fmt, *paths, cwd=REPO)
        assert (forked.exit_code, forked.stdout, forked.stderr) == (
            single.exit_code,
            single.stdout,
            single.stderr,
        )
    assert reports["text"].exit_code == 1  # the failing fixtures are there


# --- what the forked paths rely on ---------------------------------------------------------------


def _objects() -> Iterator[tuple[str, Any]]:
    for path in sorted((REPO / "rendered").rglob("*.yaml")) + sorted(
        (REPO / "tests" / "checks").glob("*.yaml")
    ):
        for i, doc in enumerate(yaml.safe_load_all(path.read_text(encoding="utf-8"))):
            if doc is not None:
                yield f"{path.relative_to(REPO)}#{i}", doc


def test_checking_an_object_changes_nothing_in_it() -> None:
    """The rules over all objects run beside the checks of each (parallel.alongside_mapped): both read
    the same objects, so neither may change them."""
    items = [Located(obj, name) for name, obj in _objects()]
    assert len(items) > 100
    before = copy.deepcopy([item.obj for item in items])
    validator = Validator((1, 33))
    validator.validate(items)
    semantic_findings(items, CheckSettings())
    semantic_findings(items, CheckSettings(pod_security="restricted"))
    assert [item.obj for item in items] == before


@functools.cache
def _located_objects() -> list[Located]:
    return [Located(obj, name, source=f"the source of {name}") for name, obj in _objects()]


def _report(report: engine.Report) -> list[Any]:
    return [dataclasses.astuple(r) for r in report.results]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.data())
def test_objects_laid_out_while_checked_are_the_files_laid_out_apart(
    forks: Forks, data: st.DataObject
) -> None:
    """render --stdout writes each object as YAML in the pass that checks it
    (``Validator.validate_with``), not in a pass of its own: the same report, and the same
    files, as checking and laying out apart in one process."""
    items = data.draw(st.lists(st.sampled_from(_located_objects()), min_size=1, max_size=40))
    count = data.draw(st.integers(0, len(items)))
    dicts = [i for i in items[:count] if isinstance(i.obj, dict) and "metadata" in i.obj]
    count = len(dicts)
    items = dicts + items[count:]
    source, version = "Pulumi.case.yaml", "1.33"

    def also(item: Located) -> tuple[str, str]:
        return tree.object_file(item.obj, item.source, source, version)

    forks.clear()
    report, laid_out = Validator((1, 33)).validate_with(items, also, count, chunks=parallel.forking)
    if len(items) > 1:
        assert forks, "nothing was forked"
    alone = Validator((1, 33)).validate(items)
    assert _report(report) == _report(alone)
    pairs = [(i.obj, i.source) for i in items[:count]]
    assert list(tree.iter_files(pairs, source, version, laid_out=laid_out)) == list(
        tree.iter_files(pairs, source, version)
    )


DOCUMENT_TEXT = st.sampled_from(
    [
        "a: 1\n",
        "text: |\n  block\n  ---not a start\n",
        "folded: >\n  one\n  two\n",
        "q: 'single\n  quoted'\n",
        "list:\n- &x {k: v}\n- *x\n",
        "m:\n  <<: {a: 1}\n  b: 2\n",
        "# only a comment\n",
        "~\n",
        'k: "---"\n',
        "crlf: 1\r\nnext: 2\r\n",
    ]
)


@settings(max_examples=60, deadline=None)
@given(st.lists(DOCUMENT_TEXT, min_size=1, max_size=12), st.sampled_from([8, 32, 128]))
def test_a_large_text_read_in_pieces_reads_as_one(docs: list[str], size: int) -> None:
    """Cut at document starts, a text's documents, and the line each starts on, are those of
    the whole text (a file of thousands of jobs is read in pieces, on several cores)."""
    text = "".join(f"---\n{doc}" for doc in docs)
    pieces = source_module._pieces(text, size)
    whole = source_module._quick_load(text, None)
    assert whole is not None
    if pieces is None:  # too short to cut, a mix of line breaks, or no start to cut at
        assert (
            len(text) < 2 * size
            or "\r" in text
            or source_module._DOCUMENT_START.search(text, size) is None
        )
        return
    assert "".join(piece for _, piece in pieces) == text
    read = [source_module._quick_load(piece, None) for _, piece in pieces]
    docs_read: list[Any] = []
    starts: list[int] = []
    for (before, _), found in zip(pieces, read, strict=True):
        assert found is not None
        docs_read += found[0]
        starts += [before + line for line in found[1]]
    assert (docs_read, starts) == whole


@pytest.mark.parametrize(
    "text",
    [
        "%YAML 1.1\n---\na: 1\n---\nb: 2\n",
        "a: 1\r---\nb: 2\n",
        "a: 1\n\u2028---\nb: 2\n",
    ],
    ids=["directive", "cr", "line-separator"],
)
def test_texts_that_cannot_be_cut_safely_are_read_whole(text: str) -> None:
    assert source_module._pieces(text * 50, 16) is None


def test_a_problem_in_a_piece_is_reported_as_in_the_whole_file(
    tmp_path: Path, forks: Forks
) -> None:
    good = "".join(f"---\nkind: K\nname: n{i}\n" for i in range(40))
    path = tmp_path / "jobs.yaml"
    for bad in ("---\nname: 'unterminated\n---\nx: 1\n", "---\na: 1\na: 2\n", "---\nk: .nan\n"):
        path.write_text(good + bad + good)
        with pytest.raises(InputError) as whole:
            source_module.load_documents(path)
        with pytest.raises(InputError) as pieces:
            source_module.load_documents(path, chunks=parallel.forking)
        assert str(pieces.value) == str(whole.value)
    assert forks


def test_a_tree_whose_writing_process_fails_is_written_here(
    tmp_path: Path, forks: Forks, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = os.getpid()
    real = tree._write_files

    def fails_in_a_child(root: str, pairs: Any, cancel: Any = None) -> list[str]:
        if os.getpid() != parent:
            raise OSError(28, "No space left on device")
        return real(root, pairs, cancel)

    monkeypatch.setattr(tree, "_write_files", fails_in_a_child)
    files = {f"ns/pod-{i}.yaml": f"# Generated by kubetrain from s\nn: {i}\n" for i in range(20)}
    change = tree.write_tree(tmp_path / "out", files)
    assert forks, "no writing process was forked"
    assert sorted(change.added) == sorted(files)
    assert {p: t.decode() for p, t in tree_of(tmp_path / "out").items()} == files


def test_no_process_to_spare_means_the_work_is_done_here(
    forks: Forks, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refused)
    assert parallel.forking(_pids, list(range(40)), per_process=5) == _pids(range(40))
    assert parallel.alongside_mapped(lambda: 1, _mapped(lambda: 2)) == (1, 2)
    assert parallel.background(lambda: 1) is None
