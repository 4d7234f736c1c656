"""Property tests: every valid TFJob renders to schema-valid, self-consistent output under every
native workload, and no input, however mangled, makes a traceback (only InputError)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetrain.builders import build_stack
from kubetrain.models import InputError, load_stack
from kubetrain.models.source import UNREADABLE
from kubetrain.validate import Located, Validator

from helpers import KubectlDumper, env, objects, replica_pods

NAME = st.from_regex(r"[a-z][a-z0-9]{0,10}", fullmatch=True)
#: Any text kustomize can read back (the characters kubetrain refuses are left out).
READABLE_TEXT = st.text(
    st.characters(exclude_categories=("Cs",)).filter(lambda c: UNREADABLE.match(c) is None),
    max_size=20,
)
TYPES = ["Chief", "Master", "PS", "Worker", "Evaluator"]


@st.composite
def tfjobs(draw: st.DrawFn) -> dict[str, Any]:
    types = draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=5, unique=True))
    if "Chief" in types and "Master" in types:
        types.remove("Master")
    specs = {}
    for t in types:
        container: dict[str, Any] = {
            "name": "tensorflow",
            "image": draw(st.sampled_from(["tf:2", "reg.example.com/a/b:1.0"])),
        }
        if draw(st.booleans()):
            container["ports"] = [
                {"name": "tfjob-port", "containerPort": draw(st.integers(1, 65535))}
            ]
        if draw(st.booleans()):
            gpus = draw(st.integers(0, 8))
            container["resources"] = {
                "limits": {
                    draw(
                        st.sampled_from(["nvidia.com/gpu", "alpha.kubernetes.io/nvidia-gpu"])
                    ): gpus
                }
            }
        if draw(st.booleans()):
            container["env"] = [{"name": "A", "value": draw(READABLE_TEXT)}]
        spec: dict[str, Any] = {"template": {"spec": {"containers": [container]}}}
        replicas = 1 if t in ("Chief", "Master") else draw(st.integers(1, 4))
        spec["replicas"] = replicas
        spec["restartPolicy"] = draw(st.sampled_from(["Always", "OnFailure", "Never", "ExitCode"]))
        key = draw(st.sampled_from([t, t.lower(), t.upper()]))
        specs[key] = spec
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": draw(NAME)},
        "spec": {"tfReplicaSpecs": specs},
    }


def load(config: dict[str, Any]):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "stacks"
        folder.mkdir()
        (Path(tmp) / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\n")
        path = folder / "Pulumi.p.yaml"
        path.write_text(yaml.dump({"config": config}, Dumper=KubectlDumper))
        return load_stack(path)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    job=tfjobs(),
    domain=st.sampled_from([None, "cluster.local"]),
    mode=st.sampled_from(["native", "operator"]),
    workload=st.sampled_from(["pod", "job", "jobset"]),
)
def test_every_valid_tfjob_renders_to_schema_valid_consistent_output(
    job, domain, mode, workload
) -> None:
    config: dict[str, Any] = {
        "kubetrain:namespace": "ns",
        "kubetrain:jobs": [job],
        "kubetrain:mode": mode,
        "kubetrain:nativeWorkload": workload,
    }
    if domain:
        config["kubetrain:clusterDomain"] = domain
    stack = load(config)
    objs = objects(stack)
    report = Validator(stack.settings.version).validate(Located(o, "x") for o in objs)
    assert report.ok, [(r.title, r.findings) for r in report.results if r.findings]
    if mode == "operator":
        assert [o["kind"] for o in objs] == ["TFJob"]
        return
    pods = replica_pods(objs)
    wrappers = {"pod": "Pod", "job": "Job", "jobset": "JobSet"}
    assert {o["kind"] for o in objs} - {"Service"} == {wrappers[workload]}
    services = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Service"}
    assert pods.keys() == services.keys()
    total = sum(s["replicas"] for s in job["spec"]["tfReplicaSpecs"].values())
    assert len(pods) == total
    for name, service in services.items():
        labels = pods[name]["metadata"]["labels"]
        assert all(labels.get(k) == v for k, v in service["spec"]["selector"].items())
    for pod in pods.values():
        tf = next(c for c in pod["spec"]["containers"] if c["name"] == "tensorflow")
        tf_config = env(tf).get("TF_CONFIG")
        assert (tf_config is not None) == (total > 1)
        if tf_config:
            hosts = [h for hs in json.loads(tf_config)["cluster"].values() for h in hs]
            assert sorted(h.split(".")[0] for h in hosts) == sorted(pods)
        resources = tf.get("resources", {})
        assert resources.get("limits", {}).get("nvidia.com/gpu") == resources.get(
            "requests", {}
        ).get("nvidia.com/gpu")
        assert "alpha.kubernetes.io/nvidia-gpu" not in json.dumps(resources)


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 70000)
    | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
BASE = {
    "kubetrain:namespace": "ns",
    "kubetrain:jobs": [
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "metadata": {"name": "mnist"},
            "spec": {
                "tfReplicaSpecs": {
                    "Worker": {
                        "replicas": 2,
                        "template": {
                            "spec": {"containers": [{"name": "tensorflow", "image": "tf"}]}
                        },
                    }
                }
            },
        }
    ],
}


def paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths(v, (*prefix, i))
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_no_input_makes_a_traceback(data: st.DataObject) -> None:
    config = json.loads(json.dumps(BASE))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths(config)[1:]))
        parent = config
        for part in path[:-1]:
            parent = parent[part]
        if data.draw(st.booleans()):
            parent[path[-1]] = data.draw(JSON)
        elif isinstance(parent, dict):
            parent[data.draw(st.text(max_size=8))] = data.draw(JSON)
    try:
        stack = load(config)
        built = build_stack(stack)
    except InputError as exc:
        assert exc.problems
        assert all(p.file for p in exc.problems)
    else:
        report = Validator(stack.settings.version).validate(Located(b.obj, "x") for b in built)
        assert report.ok, [(r.title, r.findings) for r in report.results if r.findings]
