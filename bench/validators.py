"""Why kubetrain validates with jsonschema-rs: the same strict Kubernetes schemas, the same
objects, three validators.

    python bench/validators.py [--objects N]

(a) ``jsonschema`` (Draft 2020-12, the schemas registered once, the validator built once),
(b) ``jsonschema-rs`` (compiled once), and (c) ``kubernetes_validate.validate()`` per object,
which reads and resolves its schema files on every call (a sample, extrapolated). Objects are
the pods and services kubetrain renders for TFJobs with 2 PS and 4 GPU workers.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
from referencing import Registry, Resource

from kubetrain.kube import schemas as k8s

VERSION = (1, 33)


def sample_objects(n: int) -> list[dict[str, Any]]:
    import tempfile

    import yaml

    from kubetrain.builders import build_stack
    from kubetrain.models import load_stack

    jobs = max(1, n // 12)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\n")
        container = {
            "name": "tensorflow",
            "image": "tf:2.15",
            "resources": {"limits": {"cpu": "4", "nvidia.com/gpu": 1}},
        }
        docs = [
            {
                "apiVersion": "kubeflow.org/v1",
                "kind": "TFJob",
                "metadata": {"name": f"job-{i}"},
                "spec": {
                    "tfReplicaSpecs": {
                        "PS": {"replicas": 2, "template": {"spec": {"containers": [container]}}},
                        "Worker": {
                            "replicas": 4,
                            "template": {"spec": {"containers": [container]}},
                        },
                    }
                },
            }
            for i in range(jobs)
        ]
        stack = root / "Pulumi.bench.yaml"
        stack.write_text(
            yaml.safe_dump({"config": {"kubetrain:namespace": "bench", "kubetrain:jobs": docs}})
        )
        return [b.obj for b in build_stack(load_stack(stack))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=6000)
    parser.add_argument("--baseline-sample", type=int, default=300)
    args = parser.parse_args()
    objs = sample_objects(args.objects)
    folder = k8s.version_dir(VERSION)
    defs = json.loads((folder / "_definitions.json").read_text())
    registry = Registry().with_resource(k8s.DEFINITIONS_URI, Resource.from_contents(defs))
    schemas = {
        kind: json.loads((folder / f"{kind.lower()}-v1.json").read_text())
        for kind in ("Pod", "Service")
    }

    py = {
        kind: jsonschema.Draft202012Validator(schema, registry=registry)
        for kind, schema in schemas.items()
    }
    start = time.perf_counter()
    assert all(py[o["kind"]].is_valid(o) for o in objs)
    py_rate = len(objs) / (time.perf_counter() - start)

    rs = {kind: k8s.builtin_validator(VERSION, "v1", kind) for kind in schemas}
    start = time.perf_counter()
    assert all(rs[o["kind"]].is_valid(o) for o in objs)  # type: ignore[union-attr]
    rs_rate = len(objs) / (time.perf_counter() - start)

    sample = objs[: args.baseline_sample]
    start = time.perf_counter()
    for o in sample:
        kubernetes_validate.validate(o, "1.33", strict=True)
    kv_rate = len(sample) / (time.perf_counter() - start)

    print(
        f"{len(objs)} objects (pods and services), Kubernetes {VERSION[0]}.{VERSION[1]} strict schemas"
    )
    print(f"  jsonschema:               {py_rate:>10.0f} objects/s")
    print(
        f"  jsonschema-rs:            {rs_rate:>10.0f} objects/s  ({rs_rate / py_rate:.0f}x jsonschema)"
    )
    print(f"  kubernetes_validate():    {kv_rate:>10.0f} objects/s  (sample of {len(sample)})")


if __name__ == "__main__":
    main()
