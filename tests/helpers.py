"""Small helpers shared by the tests: load a stack from text, build it, pick objects."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from kubetrain.builders import build_stack
from kubetrain.models import Stack, load_stack

from conftest import APISERVER_CORPUS


class KubectlDumper(yaml.SafeDumper):
    """PyYAML's safe dumper, quoting every string kubectl (go-yaml v2) would not read back as
    that string: PyYAML writes ``y``, ``1e3`` or ``0o17`` plain, which kubectl reads as a
    boolean, a float and an integer. Tests that write arbitrary values with PyYAML use it."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        from kubetrain.models.scalars import resolve_plain

        if kind is yaml.ScalarNode and implicit[0]:
            return resolve_plain(value)
        return super().resolve(kind, value, implicit)


def stack_from(tmp_path: Path, config: dict[str, Any], name: str = "test") -> Stack:
    """Write ``{"config": config}`` as stacks/Pulumi.<name>.yaml under ``tmp_path`` and load it."""
    (tmp_path / "Pulumi.yaml").write_text(
        "name: kubetrain\nruntime: python\nstackConfigDir: stacks\n"
    )
    folder = tmp_path / "stacks"
    folder.mkdir(exist_ok=True)
    path = folder / f"Pulumi.{name}.yaml"
    path.write_text(yaml.dump({"config": config}, Dumper=KubectlDumper, sort_keys=False))
    return load_stack(path)


def objects(stack: Stack, target: str = "render", namespaces: bool = False) -> list[dict[str, Any]]:
    """The objects of the stack's jobs; with ``namespaces``, the Namespaces the stack creates
    too (tests/test_namespaces.py)."""
    return [
        b.obj
        for b in build_stack(stack, target)  # type: ignore[arg-type]
        if namespaces or b.obj["kind"] != "Namespace"
    ]


def pick(objs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name}, found {len(found)}"
    return found[0]


def container(pod: dict[str, Any], name: str = "tensorflow") -> dict[str, Any]:
    spec = pod["spec"] if pod["kind"] == "Pod" else pod["spec"]["template"]["spec"]
    return next(c for c in spec["containers"] if c["name"] == name)


def env(c: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in c.get("env", [])}


def pod_stack(tmp_path: Path, config: dict[str, Any], name: str = "test") -> Stack:
    """:func:`stack_from` with ``kubetrain:nativeWorkload: pod``: Kubeflow jobs expand to the
    training operator's own objects (a bare Pod per replica), which the fidelity tests compare."""
    return stack_from(tmp_path, {"kubetrain:nativeWorkload": "pod", **config}, name)


def replica_pods(objs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The pod of every replica index of Kubeflow jobs, by the operator's pod name, under any
    native workload: a Pod, a Job's pod template (named as its Job), or the pod template of a
    JobSet's replicatedJob (named by the hostname kubetrain gives it). Each value holds
    ``metadata`` and ``spec``."""
    found: dict[str, dict[str, Any]] = {}
    for obj in objs:
        if obj["kind"] == "Pod":
            found[obj["metadata"]["name"]] = obj
        elif obj["kind"] == "Job" and "training.kubeflow.org/job-name" in obj["metadata"].get(
            "labels", {}
        ):
            found[obj["metadata"]["name"]] = obj["spec"]["template"]
        elif obj["kind"] == "JobSet":
            for rjob in obj["spec"]["replicatedJobs"]:
                template = rjob["template"]["spec"]["template"]
                found[template["spec"]["hostname"]] = template
    return found


@cache
def corpus_records(name: str, corpus: str = "apiserver-corpus") -> tuple[dict[str, Any], ...]:
    """The records of ``../shared/<corpus>/<name>.jsonl`` (``update``, ``roundtrip``...)."""
    with (APISERVER_CORPUS.parent / corpus / f"{name}.jsonl").open(encoding="utf-8") as f:
        return tuple(json.loads(line) for line in f if line.strip())


#: The corpora of objects labelled by a real kube-apiserver v1.36.2.
CORPORA = ("apiserver-corpus", "apiserver-corpus-r3", "apiserver-corpus-r4")
