"""Ctrl-C at any moment (issue 30): while Python imports the command, and while a small or
single-worker render writes its tree. Every interruption ends with exit code 130 and one line,
``kubetrain: interrupted``: no traceback, no ``.tmp-`` folder left, and ``rendered/`` holding its
old tree or none.

The moment is chosen, not timed: a child runs the console script with a hook that sends
SIGINT to the command's process when a given module is first imported, or when the writer opens
its k-th file in the staging folder (the writer then goes on writing until the command has
seen the interruption, the race an interrupted ``Thread.join()`` loses on CPython 3.11)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TIMEOUT = 60

HOOK = r"""
import os, signal, sys, threading
MAIN = os.getpid()
kind, _, arg = os.environ["KT_INTERRUPT_AT"].partition(":")
delivered = threading.Event()

def handler(signum, frame):
    delivered.set()
    raise KeyboardInterrupt

signal.signal(signal.SIGINT, handler)
if kind == "import":
    class Hook:
        def find_spec(self, name, path=None, target=None):
            if name == arg:
                sys.meta_path.remove(self)
                os.kill(MAIN, signal.SIGINT)
            return None
    sys.meta_path.insert(0, Hook())
else:
    count = [int(arg)]
    real_open = os.open

    def hooked_open(path, flags, *rest, **kw):
        fd = real_open(path, flags, *rest, **kw)
        if ".tmp-" in str(path) and flags & os.O_CREAT:
            count[0] -= 1
            if count[0] == 0:
                os.kill(MAIN, signal.SIGINT)
                if os.getpid() == MAIN:
                    delivered.wait(10)  # go on writing once the command has been interrupted
        return fd

    os.open = hooked_open
sys.argv = ["kubetrain", *sys.argv[1:]]
from kubetrain.console import run
run()
"""


def interrupted(
    cwd: Path, at: str, *args: str, workers: int = 2
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KT_INTERRUPT_AT": at, "KUBETRAIN_WORKERS": str(workers)}
    return subprocess.run(
        [sys.executable, "-c", HOOK, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def project(root: Path, jobs: int) -> Path:
    (root / "stacks").mkdir(parents=True, exist_ok=True)
    (root / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\nstackConfigDir: stacks\n")
    container = {"name": "tensorflow", "image": "tf:2"}
    docs = [
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "metadata": {"name": f"tf-{i}"},
            "spec": {
                "runPolicy": {"activeDeadlineSeconds": 60},
                "tfReplicaSpecs": {
                    "Worker": {"replicas": 2, "template": {"spec": {"containers": [container]}}}
                },
            },
        }
        for i in range(jobs)
    ]
    config = {"kubetrain:namespace": "ml", "kubetrain:jobs": docs}
    (root / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))
    return root


def tree(folder: Path) -> dict[str, bytes]:
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


#: Modules the command imports as it starts, in order of their first import.
STARTUP = [
    "kubetrain.cli",
    "click",
    "kubetrain.app",
    "pydantic",
    "yaml",
    "kubetrain.models",
    "kubetrain.models.load",
    "kubetrain.builders",
    "kubetrain.render.tree",
    "kubetrain.validate",
    "jsonschema_rs",
]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(module=st.sampled_from(STARTUP), command=st.sampled_from(["render", "validate", "plan"]))
def test_ctrl_c_while_the_command_starts_is_an_interrupted_command(
    tmp_path_factory, module: str, command: str
) -> None:
    root = project(tmp_path_factory.mktemp("startup"), jobs=1)
    done = interrupted(root, f"import:{module}", command)
    assert (done.returncode, done.stderr) == (130, "kubetrain: interrupted\n")
    assert not (root / "rendered").exists()


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    jobs=st.sampled_from([1, 4]),
    file=st.integers(1, 6),
    workers=st.sampled_from([1, 2]),
    before=st.booleans(),
)
def test_ctrl_c_while_a_small_render_writes_leaves_the_old_tree(
    tmp_path_factory, jobs: int, file: int, workers: int, before: bool
) -> None:
    """A render of one to four jobs (a thread writes their files; with one worker, no process
    is forked at all), interrupted at its k-th file: the writer stops, the command waits for
    it, removes its staging folder and exits 130; ``rendered/dev`` is its old tree."""
    root = project(tmp_path_factory.mktemp("render"), jobs=jobs)
    rendered = root / "rendered"
    if before:
        old = project(root, jobs=1)
        done = subprocess.run(
            [sys.executable, "-m", "kubetrain.cli", "render"],
            cwd=old,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert done.returncode == 0, done.stderr
        project(root, jobs=jobs + 1)
    old_tree = tree(rendered / "dev")
    done = interrupted(root, f"write:{file}", "render", workers=workers)
    assert (done.returncode, done.stderr) == (130, "kubetrain: interrupted\n")
    left = sorted(p.name for p in rendered.iterdir()) if rendered.exists() else []
    assert left == (["dev"] if before else []), left
    assert tree(rendered / "dev") == old_tree
