"""File-system faults: FIFOs, devices, symbolic links and their loops, huge files, folders that
cannot be written, killed and interrupted renders, concurrent renders. Every one ends in exit
1 or 2 with a message naming the path, in bounded time and memory, and never loses a file.

Cases that could hang (a FIFO opened for reading waits for a writer forever) run kubetrain in
a child process with a timeout, so a regression fails the test instead of hanging the suite.
"""

from __future__ import annotations

import errno
import fcntl
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import REPO

#: A hang guard, not a speed limit: long enough for a small render on a machine whose cores other
#: work keeps busy (load averages of 90 on 2 cores are seen here), so only a hang trips it.
TIMEOUT = 600


def kubetrain(*args: str, cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    """kubetrain in a child process, killed if it takes over ten minutes (a hang)."""
    return subprocess.run(
        [sys.executable, "-m", "kubetrain.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        **kw,  # type: ignore[arg-type]
    )


def tfjobs(count: int, replicas: int = 2) -> list[dict]:
    return [
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "metadata": {"name": f"job-{i}"},
            "spec": {
                "tfReplicaSpecs": {
                    "Worker": {
                        "replicas": replicas,
                        "template": {
                            "spec": {"containers": [{"name": "tensorflow", "image": "tf"}]}
                        },
                    }
                }
            },
        }
        for i in range(count)
    ]


def write_stack(project: Path, jobs: int = 1, name: str = "dev", **config: object) -> Path:
    path = project / "stacks" / f"Pulumi.{name}.yaml"
    body = {"kubetrain:namespace": "ml", "kubetrain:jobs": tfjobs(jobs), **config}
    path.write_text(yaml.safe_dump({"config": body}))
    return path


def leftovers(folder: Path) -> list[str]:
    return (
        sorted(p.name for p in folder.iterdir() if p.name.startswith("."))
        if folder.is_dir()
        else []
    )


# --- reading: FIFOs, devices, loops, huge files -------------------------------------------------


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def loop(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    other = path.with_name(path.name + ".other")
    path.symlink_to(other.name)
    other.symlink_to(path.name)
    return path


def device(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to("/dev/zero")
    return path


def huge(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        f.write(b"config: {}\n")
        f.truncate(200 * 2**20)  # sparse: costs no disk
    return path


MAKERS = {
    "fifo": (fifo, "is a named pipe (FIFO)"),
    "loop": (loop, "cannot read: a loop of symbolic links"),
    "device": (device, "is a character device"),
    "huge": (huge, "is 200 MiB; kubetrain reads files of at most 128 MiB"),
}


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_an_unusual_stack_file_is_refused(project: Path, kind: str) -> None:
    make, message = MAKERS[kind]
    make(project / "stacks" / "Pulumi.dev.yaml")
    done = kubetrain("render", cwd=project)
    assert done.returncode == 2, done.stderr
    assert f"stacks/Pulumi.dev.yaml: {message}" in done.stderr
    assert not (project / "rendered").exists()


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_an_unusual_job_file_is_refused(project: Path, kind: str) -> None:
    make, message = MAKERS[kind]
    if kind == "device":  # a link leaving the project is refused before anything opens it
        message = "'stacks/jobs/a.yaml' is a symbolic link to /dev/zero, outside the project"
    make(project / "stacks" / "jobs" / "a.yaml")
    (project / "stacks" / "Pulumi.dev.yaml").write_text(
        "config:\n  kubetrain:jobFiles: ['stacks/jobs/*.yaml']\n"
    )
    done = kubetrain("render", cwd=project)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert "stacks/jobs/a.yaml" in done.stderr


@pytest.mark.parametrize("kind", ["fifo", "loop", "device"])
def test_validate_refuses_unusual_paths_and_reports_unusual_files(
    tmp_path: Path, kind: str
) -> None:
    make, message = MAKERS[kind]
    given = make(tmp_path / "given.yaml")
    done = kubetrain("validate", str(given), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"given.yaml: {message}" in done.stderr
    folder = tmp_path / "tree"
    make(folder / "inside.yaml")
    (folder / "ok.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n")
    done = kubetrain("validate", str(folder), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "tree/inside.yaml" in done.stdout and message in done.stdout


def test_validate_dev_null_is_not_a_missing_file(tmp_path: Path) -> None:
    done = kubetrain("validate", "/dev/null", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == "/dev/null: is a character device, not a YAML file or a folder\n"


@pytest.mark.parametrize("kind", ["fifo", "loop", "device", "symlink-to-folder", "empty-folder"])
def test_anything_in_a_rendered_tree_render_did_not_make_is_foreign(
    project: Path, kind: str
) -> None:
    write_stack(project)
    assert kubetrain("render", cwd=project).returncode == 0
    out = project / "rendered" / "dev"
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    target = out / "ml" / "odd.yaml"
    if kind in MAKERS:
        MAKERS[kind][0](target)
    elif kind == "symlink-to-folder":
        (project / "elsewhere").mkdir()
        (project / "elsewhere" / "keep.txt").write_text("mine")
        target.symlink_to(project / "elsewhere")
    else:
        target.mkdir()
    write_stack(project, jobs=2)
    done = kubetrain("render", cwd=project)
    assert done.returncode == 2, done.stderr
    assert "rendered/dev/ml/odd.yaml: is a" in done.stderr
    assert "render will not replace rendered/dev while it holds this" in done.stderr
    after = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    assert set(before) <= set(after) and not [p for p in after if "job-1-worker-0" in p]
    assert leftovers(out.parent) == []
    if kind == "symlink-to-folder":
        assert (project / "elsewhere" / "keep.txt").read_text() == "mine"
    diff = kubetrain("diff", cwd=project)
    assert diff.returncode == 1
    assert "rendered/dev/ml/odd.yaml" in diff.stdout


@pytest.mark.parametrize("where", ["env", "clusters"])
def test_a_symlinked_folder_in_rendered_is_refused_before_anything_is_written(
    project: Path, where: str
) -> None:
    (project / "elsewhere").mkdir()
    (project / "elsewhere" / "keep.yaml").write_text("mine: true\n")
    (project / "rendered" / "clusters").mkdir(parents=True)
    link = project / "rendered" / ("old" if where == "env" else "clusters")
    if where == "clusters":
        link.rmdir()
    link.symlink_to(project / "elsewhere")
    write_stack(project)
    done = kubetrain("render", cwd=project)
    assert done.returncode == 2, done.stderr
    assert f"rendered/{link.name}: is a symbolic link" in done.stderr
    assert not (project / "rendered" / "dev").exists()
    assert link.is_symlink() and (project / "elsewhere" / "keep.yaml").read_text() == "mine: true\n"


def test_out_may_not_be_a_symbolic_link(project: Path, tmp_path: Path) -> None:
    write_stack(project)
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    done = kubetrain(
        "render", "--config", "stacks/Pulumi.dev.yaml", "--out", str(tmp_path / "link"), cwd=project
    )
    assert done.returncode == 2
    assert "is a symbolic link, not a folder kubetrain renders into" in done.stderr
    assert (tmp_path / "link").is_symlink() and list((tmp_path / "real").iterdir()) == []


@pytest.mark.parametrize("out", ["/proc", "/"])
def test_an_out_folder_full_of_foreign_things_stops_at_the_first(project: Path, out: str) -> None:
    write_stack(project)
    done = kubetrain("render", "--config", "stacks/Pulumi.dev.yaml", "--out", out, cwd=project)
    assert done.returncode == 2, done.stderr
    assert "render will not replace" in done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_the_ownership_check_reads_headers_only(project: Path, tmp_path: Path) -> None:
    """A 3 GiB file in the output folder (kubetrain's header, so render may replace it) is
    judged by its first line and its size, never read."""
    write_stack(project)
    out = tmp_path / "out"
    config = ("--config", "stacks/Pulumi.dev.yaml", "--out", str(out))
    assert kubetrain("render", *config, cwd=project).returncode == 0
    big = next(p for p in (out / "ml").iterdir() if p.name.endswith("-job-0-worker-0.yaml"))
    with big.open("r+b") as f:
        f.truncate(3 * 2**30)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = kubetrain("render", *config, cwd=project)
    assert done.returncode == 0, done.stderr
    assert "0 added, 1 changed, 0 removed" in done.stdout
    assert big.stat().st_size < 4096
    # Peak memory of the children so far (KiB): far below the file's size.
    assert max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) < 2**20


# --- writing: errors, kills, interruptions, concurrency -----------------------------------------


def test_an_unwritable_folder_is_an_error_naming_it(project: Path, run, monkeypatch) -> None:
    import tempfile

    write_stack(project)

    def refuse(*args: object, **kw: object) -> str:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    result = run("render", cwd=project)
    assert result.exit_code == 2
    assert result.stderr == "rendered: Permission denied\n"
    assert not (project / "rendered").exists()


def test_a_full_disk_is_an_error_naming_the_file(project: Path, run, monkeypatch) -> None:
    write_stack(project)
    real = os.write

    def full(fd: int, data: bytes) -> int:
        if len(data) > 100:  # the YAML files, not pytest's own output
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data)

    monkeypatch.setattr(os, "write", full)
    result = run("render", cwd=project)
    assert result.exit_code == 2
    assert result.stderr.startswith("rendered/dev/"), result.stderr
    assert ": No space left on device" in result.stderr
    assert ".tmp-" not in result.stderr
    assert not (project / "rendered").exists()


def test_a_failed_multi_stack_render_leaves_no_rendered_folder(project: Path) -> None:
    """The first stack is written while the second is checked; the second fails its checks
    (a privileged container where the stack asks for the restricted level)."""
    write_stack(project, name="a")
    jobs = tfjobs(1)
    template = jobs[0]["spec"]["tfReplicaSpecs"]["Worker"]["template"]
    template["spec"]["containers"][0]["securityContext"] = {"privileged": True}
    config = {"kubetrain:podSecurity": "restricted", "kubetrain:jobs": jobs}
    (project / "stacks" / "Pulumi.b.yaml").write_text(yaml.safe_dump({"config": config}))
    done = kubetrain("render", cwd=project)
    assert done.returncode == 1, done.stderr
    assert "privileged" in done.stderr
    assert not (project / "rendered").exists()


#: A render whose tree writer stops after its first files and waits there (until it is stopped,
#: or, when writing in a thread, cancelled), having created the file named by its first argument:
#: the tests interrupt it at that point, however fast or slow the machine is.
_PAUSED_RENDER = """
import sys, time
from kubetrain.render import tree
real = tree._write_files
def paused(root, pairs, cancel=None):
    def files():
        for i, pair in enumerate(pairs):
            if i == 10:
                open(sys.argv[1], "w").close()
                while cancel is None or not cancel.is_set():
                    time.sleep(0.01)
                return
            yield pair
    return real(root, files(), cancel)
tree._write_files = paused
from kubetrain.cli import run
run(["render"])
"""


def _render_until_writing(project: Path, tmp_path: Path) -> subprocess.Popen[str]:
    """Start a render that pauses while it writes its tree (:data:`_PAUSED_RENDER`) and return
    once it is paused there, so the test can interrupt it mid-write. No wall clock: the render
    cannot end before the test acts, on a loaded machine or an idle one."""
    sign = tmp_path / "writing"
    child = subprocess.Popen(
        [sys.executable, "-c", _PAUSED_RENDER, str(sign)],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    while not sign.exists():
        assert child.poll() is None, child.communicate()
        time.sleep(0.005)
    return child


def test_a_killed_render_leaves_nothing_the_next_render_does_not_clear(
    project: Path, tmp_path: Path
) -> None:
    write_stack(project, jobs=400)
    rendered = project / "rendered"
    child = _render_until_writing(project, tmp_path)
    child.kill()
    child.communicate(timeout=TIMEOUT)
    assert any(n.startswith(".dev.tmp-") for n in leftovers(rendered))
    write_stack(project, jobs=3)
    done = kubetrain("render", cwd=project)
    assert done.returncode == 0, done.stderr
    assert leftovers(rendered) == []
    assert len(list((rendered / "dev" / "ml").iterdir())) == 12


def test_a_swap_cut_in_half_is_put_back(project: Path) -> None:
    """A render killed between the two renames of its swap leaves the old tree retired and the
    folder missing: the next render puts the old tree back first (and then replaces it)."""
    write_stack(project)
    assert kubetrain("render", cwd=project).returncode == 0
    rendered = project / "rendered"
    os.replace(rendered / "dev", rendered / ".dev.old-abcd1234")
    (rendered / ".dev.tmp-wxyz5678" / "ml").mkdir(parents=True)
    (project / "rendered" / "dev-notes.txt").write_text("mine")  # not a leftover: kept
    write_stack(project, jobs=2)
    done = kubetrain("render", cwd=project)
    assert done.returncode == 0, done.stderr
    # Put back (one job: 5 files), then replaced (two jobs: 4 more, the kustomization changed).
    assert "rendered/dev: 4 added, 1 changed, 0 removed" in done.stdout
    assert leftovers(rendered) == []
    assert (rendered / "dev-notes.txt").read_text() == "mine"


def test_ctrl_c_stops_the_writer_before_its_folder_is_removed(
    project: Path, tmp_path: Path
) -> None:
    write_stack(project, jobs=400)
    rendered = project / "rendered"
    child = _render_until_writing(project, tmp_path)
    assert any(n.startswith(".dev.tmp-") for n in leftovers(rendered))
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=TIMEOUT)
    assert child.returncode == 130, err
    assert err.endswith("kubetrain: interrupted\n"), err
    assert "Traceback" not in err
    assert not rendered.exists(), sorted(p.name for p in rendered.iterdir())


def test_a_render_waits_for_no_one_while_another_holds_the_output(project: Path) -> None:
    write_stack(project)
    (project / "rendered").mkdir()
    fd = os.open(project / "rendered", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        done = kubetrain("render", cwd=project)
    finally:
        os.close(fd)
    assert done.returncode == 2
    assert (
        done.stderr
        == "rendered: another kubetrain render is writing here; run again when it is done\n"
    )
    assert kubetrain("render", cwd=project).returncode == 0


def test_two_renders_into_one_out_folder_never_both_succeed(project: Path, tmp_path: Path) -> None:
    write_stack(project, jobs=150, name="a")
    write_stack(project, jobs=150, name="b")
    out = str(tmp_path / "out")
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kubetrain.cli",
                "render",
                "--config",
                f"stacks/Pulumi.{n}.yaml",
                "--out",
                out,
            ],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in ("a", "b")
    ]
    results = [(c.wait(timeout=TIMEOUT), c.communicate()[1]) for c in children]
    assert sorted(code for code, _ in results) == [0, 2], results
    ((_, err),) = [r for r in results if r[0] == 2]
    assert (
        "another kubetrain render is writing here" in err or "generated from stacks/Pulumi." in err
    )
    sources = {
        p.read_text().partition("\n")[0].split(" from ")[1].split(" ")[0]
        for p in (tmp_path / "out").rglob("*.yaml")
    }
    assert len(sources) == 1


# --- the CLI's own streams -----------------------------------------------------------------------


def test_a_closed_stderr_keeps_exit_2(project: Path) -> None:
    (project / "stacks" / "Pulumi.dev.yaml").write_text("config:\n  kubetrain:mode: bad\n")
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "kubetrain.cli", "render"],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=write,
            timeout=TIMEOUT,
        )
    finally:
        os.close(write)
    assert done.returncode == 2


def test_a_closed_stdout_keeps_the_verdict() -> None:
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "kubetrain.cli", "validate", "rendered"],
            cwd=REPO,
            stdout=write,
            stderr=subprocess.PIPE,
            timeout=TIMEOUT,
        )
    finally:
        os.close(write)
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""


# --- schema --out -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["user-file", "symlink"])
def test_schema_never_replaces_a_file_it_did_not_write(project: Path, run, kind: str) -> None:
    out = project / "schemas"
    out.mkdir()
    mine = out / "kubetrain-stack.schema.json"
    if kind == "user-file":
        mine.write_text('{"title": "my own schema"}\n')
    else:
        (project / "target.json").write_text('{"title": "elsewhere"}\n')
        mine.symlink_to(project / "target.json")
    result = run("schema", "--out", str(out), cwd=project)
    assert result.exit_code == 2
    assert "schemas/kubetrain-stack.schema.json: " in result.stderr
    assert "kubetrain schema will not replace it" in result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["kubetrain-stack.schema.json"]
    assert "my own schema" in mine.read_text() or "elsewhere" in mine.read_text()
    mine.unlink()
    assert run("schema", "--out", str(out), cwd=project).exit_code == 0
    assert run("schema", "--out", str(out), cwd=project).exit_code == 0  # its own files: replaced


def test_init_never_writes_through_a_dangling_link(tmp_path: Path, run) -> None:
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.dev.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    result = run("init", cwd=tmp_path)
    assert result.exit_code == 2
    assert "stacks/Pulumi.dev.yaml: exists; kubetrain init never overwrites a file" in result.stderr
    assert not (tmp_path / "elsewhere.yaml").exists() and not (tmp_path / "Pulumi.yaml").exists()
