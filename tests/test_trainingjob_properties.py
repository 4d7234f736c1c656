"""Properties of the TrainingJob kind: every valid spec renders, in both modes, to objects valid
for Kubernetes and a custom resource valid against the generated CRD; no input gives anything
but a result or an InputError."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import jsonschema_rs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetrain.builders.crd import kubeconform_schema
from kubetrain.kube.quantity import parse_quantity
from kubetrain.models import InputError
from kubetrain.validate import Located, Validator

from helpers import objects, stack_from

NAME = st.from_regex(r"[a-z]([a-z0-9-]{0,30}[a-z0-9])?", fullmatch=True)
CPU = st.sampled_from(["100m", "1", "2500m", 2, 0.5, "1.5"])
MEMORY = st.sampled_from(["256Mi", "1Gi", "1G", 1073741824])
GPU_NAME = st.sampled_from(["nvidia.com/gpu", "alpha.kubernetes.io/nvidia-gpu"])


@st.composite
def resources(draw: st.DrawFn, gpus: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if draw(st.booleans()):
        out["requests"] = {"cpu": draw(CPU), "memory": draw(MEMORY)}
    if draw(st.booleans()):
        out["limits"] = {"cpu": draw(CPU), "memory": draw(MEMORY)}
        # A valid spec requests no more than it limits (the API server refuses that).
        for name, request in out.get("requests", {}).items():
            if parse_quantity(request).value > parse_quantity(out["limits"][name]).value:
                out["requests"][name] = out["limits"][name]
    if gpus and draw(st.booleans()):
        out.setdefault("limits", {})[draw(GPU_NAME)] = draw(st.integers(0, 8))
    return out


@st.composite
def trainingjobs(draw: st.DrawFn) -> dict[str, Any]:
    fault_tolerant = draw(st.booleans())
    trainers = draw(st.integers(1, 6))
    pservers = draw(st.integers(1, 4))
    ports_num, sparse = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    spec: dict[str, Any] = {
        "fault_tolerant": fault_tolerant,
        "port": draw(st.integers(1, 65535 - ports_num - sparse + 1)),
        "ports_num": ports_num,
        "ports_num_for_sparse": sparse,
        "passes": draw(st.integers(1, 500)),
        "trainer": {
            "entrypoint": draw(st.sampled_from(["python train.py", "sh -c 'run it'"])),
            "workspace": "/workspace",
            "min-instance": trainers,
            "max-instance": trainers + (draw(st.integers(0, 4)) if fault_tolerant else 0),
            "resources": draw(resources(gpus=True)),
        },
        "pserver": {
            "min-instance": pservers,
            "max-instance": pservers + draw(st.integers(0, 2)),
            "resources": draw(resources()),
        },
    }
    if draw(st.booleans()):
        spec[draw(st.sampled_from(["hostNetwork", "HostNetwork", "host_network"]))] = True
    if draw(st.booleans()):
        spec["volumes"] = [{"name": "data", "emptyDir": {}}]
        spec["VolumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    if draw(st.booleans()):
        spec["NodeSelector"] = {"pool": draw(NAME)}
    if draw(st.booleans()):
        secret = {"name": "registry"}
        spec["imagePullSecrets"] = draw(st.sampled_from([secret, [secret]]))
    if fault_tolerant and draw(st.booleans()):
        spec["master"] = {"resources": draw(resources())}
        if draw(st.booleans()):
            spec["master"]["etcd-endpoint"] = "http://etcd.infra:2379"
    return {
        "apiVersion": "paddlepaddle.org/v1",
        "kind": "TrainingJob",
        "metadata": {"name": draw(NAME)},
        "spec": spec,
    }


def render(job: dict[str, Any], mode: str, gpu_resource: str) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as folder:
        config = {
            "kubetrain:namespace": "ml",
            "kubetrain:mode": mode,
            "kubetrain:gpuResource": gpu_resource,
            "kubetrain:jobs": [job],
        }
        return objects(stack_from(Path(folder), config))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(job=trainingjobs(), gpu_resource=GPU_NAME)
def test_valid_specs_render_to_schema_valid_objects(job: dict[str, Any], gpu_resource: str) -> None:
    validator = Validator((1, 33))
    native = render(job, "native", gpu_resource)
    report = validator.validate([Located(o, f"{i}.yaml") for i, o in enumerate(native)])
    assert report.ok, [(r.title, r.findings) for r in report.results if r.findings]
    spec = job["spec"]
    pserver = next(
        o
        for o in native
        if o["kind"] == "ReplicaSet" and o["metadata"]["name"].endswith("-pserver")
    )
    trainer = next(o for o in native if o["kind"] == "Job")
    assert pserver["spec"]["replicas"] == spec["pserver"]["min-instance"]
    assert trainer["spec"]["parallelism"] == spec["trainer"]["min-instance"]
    ports = trainer["spec"]["template"]["spec"]["containers"][0]["ports"]
    assert len(ports) == spec["ports_num"] + spec["ports_num_for_sparse"]
    masters = [o for o in native if o["metadata"]["name"].endswith("-master")]
    assert len(masters) == (1 if spec["fault_tolerant"] else 0)

    crd, cr = render(job, "operator", gpu_resource)
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    errors = [
        e.message for e in jsonschema_rs.validator_for(kubeconform_schema(schema)).iter_errors(cr)
    ]
    assert errors == []
    assert validator.validate([Located(crd, "crd.yaml"), Located(cr, "cr.yaml")]).ok


JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 70000),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
FIELDS = st.sampled_from(
    [
        ("port",),
        ("ports_num",),
        ("passes",),
        ("hostNetwork",),
        ("imagePullSecrets",),
        ("volumes",),
        ("VolumeMounts",),
        ("NodeSelector",),
        ("trainer",),
        ("trainer", "min-instance"),
        ("trainer", "resources"),
        ("pserver", "max-instance"),
        ("master",),
        ("master", "etcd-endpoint"),
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(job=trainingjobs(), field=FIELDS, value=JUNK)
def test_no_input_gives_a_traceback(
    job: dict[str, Any], field: tuple[str, ...], value: Any
) -> None:
    target = job["spec"]
    for part in field[:-1]:
        target = target.setdefault(part, {})
    target[field[-1]] = value
    try:
        render(job, "native", "nvidia.com/gpu")
    except InputError as exc:
        assert exc.problems and all(p.message for p in exc.problems)
