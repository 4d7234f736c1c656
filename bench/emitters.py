"""Benchmark: YAML emitters on TFJob pods and services.

    python bench/emitters.py [--objects N] [--repeat R] [--pure-subset M] [--ryml-python PATH]

Generates N (default 12,000) objects the way the TFJob controller lays a job out: for every
replica a Pod (training.kubeflow.org/* labels, a ``tensorflow`` container with image, ports,
resources with ``nvidia.com/gpu``, env with a long JSON ``TF_CONFIG``) and a headless Service
(ports, selector). Then it writes all of them to YAML, one string per object, with

    (a) PyYAML, libyaml's C emitter (``CSafeDumper``)
    (b) PyYAML, pure Python (``SafeDumper``): a subset only, the rate extrapolated
    (c) kubetrain.render.yamlout.dump
    (d) kubetrain's dump over 2 worker processes (multiprocessing, fork; pool start-up,
        transfer of the results and shutdown included) and (d2) the same with spawn, where
        the inputs are pickled to the workers
    (e) rapidyaml (``ryml``): json.dumps, parse, set block style, emit; needs an interpreter
        where ``import ryml`` works: this one, ``--ryml-python PATH`` or $RYML_PYTHON

Every method runs in a fresh process of its own, so caches start cold and the peak resident
memory (ru_maxrss) is that method's alone. Times are the best of R runs (default 3). The first
documents of every method are loaded back with CSafeLoader and compared with the inputs.
PyYAML gets ``sort_keys=False, default_flow_style=False, indent=2, width=10**9`` (no folding,
as kubetrain and kubectl).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CHECKED_DOCS = 50  # documents of each method loaded back and compared with the inputs


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------

MODELS = ["mnist", "resnet50", "bert-base", "wide-deep", "transformer-xl", "inception-v3"]
IMAGES = {
    "mnist": "kubeflow/tf-dist-mnist-test:latest",
    "resnet50": "gcr.io/kubeflow-examples/tf-resnet50:v1.2.3",
    "bert-base": "registry.example.com:5000/ml/bert-pretrain@sha256:9f2c1d0e4b7a",
    "wide-deep": "tensorflow/tensorflow:2.15.0-gpu",
    "transformer-xl": "nvcr.io/nvidia/tensorflow:23.10-tf2-py3",
    "inception-v3": "kubeflow/tf-benchmarks:1.15",
}


def _uid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _labels(job: str, model: str, rtype: str, index: int) -> dict[str, str]:
    return {
        "app.kubernetes.io/managed-by": "kubetrain",
        "app.kubernetes.io/name": model,
        "app.kubernetes.io/part-of": "kubetrain",
        "training.kubeflow.org/job-name": job,
        "training.kubeflow.org/operator-name": "tfjob-controller",
        "training.kubeflow.org/replica-index": str(index),
        "training.kubeflow.org/replica-type": rtype,
    }


def _pod(job: str, ns: str, model: str, uid: str, rtype: str, index: int, cluster: Any) -> Any:
    labels = _labels(job, model, rtype, index)
    if rtype == "chief":
        labels["training.kubeflow.org/job-role"] = "master"
    tf_config = json.dumps(
        {"cluster": cluster, "task": {"type": rtype, "index": index}, "environment": "cloud"},
        separators=(",", ":"),
    )
    gpus = 0 if rtype == "ps" else 1
    limits: dict[str, Any] = {"cpu": "4" if gpus else "2", "memory": "16Gi" if gpus else "4Gi"}
    requests: dict[str, Any] = {"cpu": "2" if gpus else "1", "memory": "8Gi" if gpus else "2Gi"}
    if gpus:
        limits["nvidia.com/gpu"] = gpus
        requests["nvidia.com/gpu"] = gpus
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "schedulerName": "default-scheduler",
        "hostname": f"{job}-{rtype}-{index}",
        "subdomain": job,
        "serviceAccountName": "kubetrain-runner",
        "containers": [
            {
                "name": "tensorflow",
                "image": IMAGES[model],
                "imagePullPolicy": "IfNotPresent",
                "command": ["python", f"/opt/{model}/train.py"],
                "args": [
                    "--train_steps=20000",
                    "--batch_size=128",
                    "--learning_rate=0.001",
                    f"--model_dir=gs://ml-dev-models/{job}",
                ],
                "ports": [{"name": "tfjob-port", "containerPort": 2222, "protocol": "TCP"}],
                "env": [
                    {"name": "TF_CONFIG", "value": tf_config},
                    {"name": "PYTHONUNBUFFERED", "value": "1"},
                    {"name": "TF_CPP_MIN_LOG_LEVEL", "value": "2"},
                    {
                        "name": "POD_NAME",
                        "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                    },
                ],
                "resources": {"limits": limits, "requests": requests},
                "volumeMounts": [
                    {"name": "data", "mountPath": "/data", "readOnly": True},
                    {"name": "dshm", "mountPath": "/dev/shm"},
                ],
            }
        ],
        "volumes": [
            {"name": "data", "persistentVolumeClaim": {"claimName": f"{model}-data"}},
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "2Gi"}},
        ],
    }
    if gpus:
        spec["nodeSelector"] = {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}
        spec["tolerations"] = [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{job}-{rtype}-{index}",
            "namespace": ns,
            "labels": labels,
            "annotations": {"sidecar.istio.io/inject": "false"},
            "ownerReferences": [
                {
                    "apiVersion": "kubeflow.org/v1",
                    "kind": "TFJob",
                    "name": job,
                    "uid": uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
    }


def _service(job: str, ns: str, model: str, uid: str, rtype: str, index: int) -> Any:
    labels = _labels(job, model, rtype, index)
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": f"{job}-{rtype}-{index}",
            "namespace": ns,
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": "kubeflow.org/v1",
                    "kind": "TFJob",
                    "name": job,
                    "uid": uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "clusterIP": "None",
            "ports": [{"name": "tfjob-port", "port": 2222, "targetPort": 2222}],
            "selector": {k: v for k, v in labels.items() if k.startswith("training.")},
        },
    }


def make_objects(n: int, seed: int = 12000) -> list[Any]:
    """``n`` objects: a Pod and a Service for each replica of as many TFJobs as it takes."""
    rng = random.Random(seed)
    out: list[Any] = []
    j = 0
    while len(out) < n:
        model = MODELS[j % len(MODELS)]
        job = f"{model}-{j:05d}"
        ns = f"ml-{('dev', 'staging', 'prod')[j % 3]}"
        uid = _uid(rng)
        shape = {"chief": 1, "ps": rng.randint(1, 3), "worker": rng.randint(2, 12)}
        cluster = {
            rtype: [f"{job}-{rtype}-{i}.{ns}.svc:2222" for i in range(count)]
            for rtype, count in shape.items()
        }
        for rtype, count in shape.items():
            for i in range(count):
                out.append(_pod(job, ns, model, uid, rtype, i, cluster))
                out.append(_service(job, ns, model, uid, rtype, i))
        j += 1
    return out[:n]


# ---------------------------------------------------------------------------------------------
# Methods (each runs in a process of its own)
# ---------------------------------------------------------------------------------------------

_OBJECTS: list[Any] = []  # inherited by forked pool workers


def _pyyaml(dumper_name: str) -> Callable[[list[Any]], list[str]]:
    import yaml

    dumper = getattr(yaml, dumper_name)

    def run(objs: list[Any]) -> list[str]:
        return [
            yaml.dump(
                o,
                Dumper=dumper,
                sort_keys=False,
                default_flow_style=False,
                indent=2,
                width=10**9,
            )
            for o in objs
        ]

    return run


def _kubetrain(objs: list[Any]) -> list[str]:
    from kubetrain.render.yamlout import dump

    return [dump(o) for o in objs]


def _dump_range(bounds: tuple[int, int]) -> list[str]:
    from kubetrain.render.yamlout import dump

    return [dump(o) for o in _OBJECTS[bounds[0] : bounds[1]]]


def _dump_objects(objs: list[Any]) -> list[str]:
    from kubetrain.render.yamlout import dump

    return [dump(o) for o in objs]


def _chunks(n: int, parts: int) -> list[tuple[int, int]]:
    size = -(-n // parts)
    return [(i, min(i + size, n)) for i in range(0, n, size)]


def _kubetrain_processes(start_method: str, processes: int) -> Callable[[list[Any]], list[str]]:
    import multiprocessing

    ctx = multiprocessing.get_context(start_method)
    # Several chunks per worker, so one that finishes early takes another.
    parts = processes * 4

    def run(objs: list[Any]) -> list[str]:
        global _OBJECTS
        _OBJECTS = objs
        out: list[str] = []
        with ctx.Pool(processes) as pool:
            if start_method == "fork":
                for chunk in pool.imap(_dump_range, _chunks(len(objs), parts)):
                    out.extend(chunk)
            else:
                pieces = [objs[a:b] for a, b in _chunks(len(objs), parts)]
                for chunk in pool.imap(_dump_objects, pieces):
                    out.extend(chunk)
            pool.close()
            pool.join()
        return out

    return run


def _ryml(objs: list[Any]) -> list[str]:
    import ryml

    block = ryml.BLOCK
    out = []
    for o in objs:
        tree = ryml.parse_in_arena(json.dumps(o).encode())
        for node in range(tree.size()):
            if tree.is_container(node) and tree.num_children(node):
                tree.set_container_style(node, block)
        out.append(ryml.emit_yaml(tree))
    return out


def _runner(method: str, processes: int) -> Callable[[list[Any]], list[str]]:
    if method == "c":
        return _pyyaml("CSafeDumper")
    if method == "pure":
        return _pyyaml("SafeDumper")
    if method in ("kubetrain", "fork", "spawn"):
        import kubetrain.render.yamlout  # noqa: F401 - loaded before timing; fork inherits it
    if method == "kubetrain":
        return _kubetrain
    if method in ("fork", "spawn"):
        return _kubetrain_processes(method, processes)
    if method == "ryml":
        return _ryml
    raise ValueError(method)


def _cold() -> None:
    """Empty kubetrain's scalar caches, so that every timed run starts as a real one does."""
    if "kubetrain.render.yamlout" in sys.modules:
        sys.modules["kubetrain.render.yamlout"].clear_caches()


def _rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def worker(method: str, n: int, repeat: int, subset: int, processes: int) -> dict[str, Any]:
    objs = make_objects(n)
    if method == "pure":
        objs = objs[:subset]
    run = _runner(method, processes)
    gc.collect()
    rss_inputs = _rss_kib()
    best = float("inf")
    docs: list[str] = []
    for _ in range(repeat):
        docs = []
        _cold()
        gc.collect()
        t0 = time.perf_counter()
        docs = run(objs)
        best = min(best, time.perf_counter() - t0)
    assert len(docs) == len(objs)
    return {
        "method": method,
        "objects": len(objs),
        "seconds": best,
        "rate": len(objs) / best,
        "pods": sum(o["kind"] == "Pod" for o in objs),
        "bytes": sum(len(d.encode()) for d in docs),
        "rss_inputs_kib": rss_inputs,
        "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "children_maxrss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
        "sample": docs[:CHECKED_DOCS],
        "python": sys.executable,
    }


def pods_only(n: int, repeat: int) -> tuple[float, float]:
    """kubetrain's and CSafeDumper's rates on Pods alone (CSafeDumper on 1,000 of them)."""
    from kubetrain.render.yamlout import dump

    pods = [o for o in make_objects(n) if o["kind"] == "Pod"]
    best = float("inf")
    for _ in range(repeat):
        _cold()
        t0 = time.perf_counter()
        for o in pods:
            dump(o)
        best = min(best, time.perf_counter() - t0)
    c_pods = pods[:1000]
    c_run = _pyyaml("CSafeDumper")
    c_best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        c_run(c_pods)
        c_best = min(c_best, time.perf_counter() - t0)
    return len(pods) / best, len(c_pods) / c_best


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


def _run_worker(python: str, method: str, args: argparse.Namespace) -> dict[str, Any]:
    argv = [python, __file__, "--worker", method, "--objects", str(args.objects)]
    argv += ["--repeat", str(args.repeat), "--pure-subset", str(args.pure_subset)]
    argv += ["--processes", str(args.processes)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"}
    run = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT)
    if run.returncode != 0:
        raise RuntimeError(f"{method} failed:\n{run.stderr}")
    result: dict[str, Any] = json.loads(run.stdout)
    return result


def _ryml_python(args: argparse.Namespace) -> str | None:
    candidates = [args.ryml_python, os.environ.get("RYML_PYTHON"), sys.executable]
    for python in candidates:
        if not python:
            continue
        probe = subprocess.run([python, "-c", "import ryml"], capture_output=True)
        if probe.returncode == 0:
            return str(python)
    return None


def _check(result: dict[str, Any], objs: list[Any]) -> str:
    import yaml

    for text, obj in zip(result["sample"], objs, strict=False):
        if yaml.load(text, Loader=yaml.CSafeLoader) != obj:
            return "MISMATCH"
    return "ok"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=12000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pure-subset", type=int, default=1200)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--ryml-python", default=None)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        result = worker(args.worker, args.objects, args.repeat, args.pure_subset, args.processes)
        json.dump(result, sys.stdout)
        return

    objs = make_objects(args.objects)
    pods = sum(o["kind"] == "Pod" for o in objs)
    print(
        f"{args.objects} objects ({pods} Pods, {args.objects - pods} Services), "
        f"best of {args.repeat}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    labels = {
        "c": "(a) PyYAML CSafeDumper",
        "pure": "(b) PyYAML SafeDumper (pure)",
        "kubetrain": "(c) kubetrain dump",
        "fork": f"(d) kubetrain dump, {args.processes} procs (fork)",
        "spawn": f"(d2) kubetrain dump, {args.processes} procs (spawn)",
        "ryml": "(e) rapidyaml",
    }
    results: dict[str, dict[str, Any]] = {}
    for method in ("c", "pure", "kubetrain", "fork", "spawn"):
        results[method] = _run_worker(sys.executable, method, args)
    ryml_python = _ryml_python(args)
    if ryml_python is not None:
        results["ryml"] = _run_worker(ryml_python, "ryml", args)

    print(f"{'method':<40} {'objects/s':>10} {'seconds':>8} {'peak RSS':>9} {'growth':>8}")
    for method, r in results.items():
        seconds = r["seconds"] * args.objects / r["objects"]
        growth = (r["maxrss_kib"] - r["rss_inputs_kib"]) / 1024
        note = ""
        if method == "pure":
            note = f"  extrapolated from {r['objects']} objects"
        if r["children_maxrss_kib"]:
            note += f"  + workers' peak RSS {r['children_maxrss_kib'] / 1024:.0f} MiB each"
        if method == "ryml":
            note += "  (via JSON: every string double-quoted)"
        check = _check(r, objs)
        print(
            f"{labels[method]:<40} {r['rate']:>10,.0f} {seconds:>8.3f} "
            f"{r['maxrss_kib'] / 1024:>5.0f} MiB {growth:>+5.0f} MiB  "
            f"load-back {check}{note}"
        )
    if ryml_python is None:
        print(
            f"{labels['ryml']:<40} unavailable: no interpreter with `import ryml` "
            "(pip install rapidyaml in a scratch venv, then --ryml-python PATH)"
        )
    print(
        "peak RSS: the method's process (inputs, imports, all outputs kept); growth: peak RSS "
        "minus RSS before the first run"
    )

    c, kt, fork, spawn = (results[m] for m in ("c", "kubetrain", "fork", "spawn"))
    print(f"output: {kt['bytes'] / 1e6:.1f} MB from kubetrain, {c['bytes'] / 1e6:.1f} MB from C")
    print(f"kubetrain / CSafeDumper: {kt['rate'] / c['rate']:.1f}x")
    kt_pods, c_pods = pods_only(args.objects, args.repeat)
    print(f"on Pods alone: kubetrain {kt_pods:,.0f} Pods/s, CSafeDumper {c_pods:,.0f} Pods/s")
    by_fork = kt["seconds"] / fork["seconds"]
    by_spawn = kt["seconds"] / spawn["seconds"]
    if by_fork >= 1.25 and by_spawn >= 1.0:
        verdict = f"{args.processes} processes ({by_fork:.2f}x with fork, {by_spawn:.2f}x spawn)"
    else:
        verdict = (
            f"a single process ({kt['seconds']:.2f} s): {args.processes} processes gain "
            f"{by_fork:.2f}x with fork ({kt['seconds'] - fork['seconds']:+.2f} s) and "
            f"{by_spawn:.2f}x with spawn/forkserver (macOS, Windows, Python 3.14's Linux default)"
            ", for twice the memory"
        )
    print(f"conclusion for {args.objects} objects: {verdict}")
    print(f"(load average at the end {os.getloadavg()[0]:.1f}: figures are only comparable on")
    print(" an otherwise idle machine)")


if __name__ == "__main__":
    main()
