"""The contract under generated hostile input (hypothesis): whatever a stack file, a job
document or a file given to ``validate`` holds, kubetrain ends with exit 0, 1 or 2, never a
traceback, writes nothing unless it succeeds, and never shows a value planted where a credential
lives (an env var named like one, an annotation, a flag, Secret data, ``kubetrain:credentials``)
on stdout, stderr, in a report or a rendered file."""

from __future__ import annotations

import copy
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, currently_in_test_context, event, given, settings
from hypothesis import strategies as st

from kubetrain.cli import main
from kubetrain.models import InputError, load_job

SECRET = "pl4ntedS3cretValue"

CONTAINER = {"name": "tensorflow", "image": "tf:2", "args": ["--steps", "10"]}
TEMPLATE = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [CONTAINER]}}
JOBS: list[dict[str, Any]] = [
    {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "tf", "annotations": {"note": "x"}},
        "spec": {
            "runPolicy": {"backoffLimit": 3},
            "tfReplicaSpecs": {
                "PS": {"replicas": 1, "template": TEMPLATE},
                "Worker": {"replicas": 2, "restartPolicy": "OnFailure", "template": TEMPLATE},
            },
        },
    },
    {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "torch"},
        "spec": {
            "elasticPolicy": {"rdzvBackend": "c10d", "minReplicas": 1, "maxReplicas": 2},
            "pytorchReplicaSpecs": {
                "Worker": {
                    "replicas": 2,
                    "restartPolicy": "OnFailure",
                    "template": {"spec": {"containers": [{"name": "pytorch", "image": "torch:2"}]}},
                }
            },
        },
    },
    {
        "apiVersion": "kubeflow.org/v1alpha1",
        "kind": "TFJob",
        "metadata": {"name": "old"},
        "spec": {
            "replicaSpecs": [{"replicas": 2, "tfReplicaType": "WORKER", "template": TEMPLATE}]
        },
    },
    {
        "apiVersion": "paddlepaddle.org/v1",
        "kind": "TrainingJob",
        "metadata": {"name": "paddle"},
        "spec": {
            "port": 7164,
            "fault_tolerant": True,
            "trainer": {
                "entrypoint": "python train.py",
                "workspace": "/w",
                "min-instance": 1,
                "max-instance": 2,
                "resources": {"limits": {"cpu": "1"}},
            },
            "pserver": {"min-instance": 1, "max-instance": 1},
            "NodeSelector": {"disk": "ssd"},
        },
    },
    {
        "apiVersion": "kubetrain.io/v1alpha1",
        "kind": "Learner",
        "metadata": {"name": "lrn"},
        "spec": {
            "trainingId": "t-1",
            "learners": 2,
            "framework": {"name": "tensorflow", "version": "1.15", "command": "python m.py"},
            "resources": {"cpus": 1, "memory": "1Gi"},
            "dataStores": {
                "trainingData": {
                    "type": "mount_cos",
                    "bucket": "b",
                    "endpoint": "https://s3.example.com",
                    "credentials": "cos",
                }
            },
            "env": {"MODEL_DIR": "model"},
        },
    },
]

# Values that are no one's secret, hostile in shape or content.
HOSTILE = st.one_of(
    st.sampled_from(
        [
            None,
            True,
            0,
            -1,
            2**31,
            2**63,
            2**64,
            10**40,
            1.5,
            1e308,
            float("inf"),
            float("-inf"),
            float("nan"),
            "",
            " 3 ",
            "3_0",
            "yes",
            "010",
            "../../etc/passwd",
            "/dev/zero",
            "a" * 300,
            "x\x7fy",
            "\x1b[2J",
            "\u202egnp.exe",
            "\ufffe",
            "\x85",
            "\x00",
            "$(HOME)",
            [],
            {},
            [[[[[[["deep"]]]]]]],
            {True: "x"},
            {1: "x"},
            {None: "x"},
            {"": "x"},
            {"apiVersion": "v1"},
        ]
    ),
    st.text(max_size=8),
    st.integers(),
)

# Where a credential lives, by kubetrain's rules, and what can be planted there.
PLANTED = st.one_of(
    st.just(SECRET),
    st.just([SECRET]),
    st.just({"k": SECRET}),
    st.just(f"NAME={SECRET}"),
)
#: A credential on a command line: one word, two words, inside a shell line.
FLAG_FORMS = st.sampled_from(
    [
        lambda name: [f"--{name}={SECRET}"],
        lambda name: ["train", f"--{name}", SECRET, "--steps", "9"],
        lambda name: ["sh", "-c", f"train -{name} {SECRET} --steps 9"],
        lambda name: [f"{name.upper()}={SECRET}", "train"],
    ]
)
CREDENTIAL_NAMES = st.sampled_from(
    [
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASSWORD",
        "HF_TOKEN",
        "api-key",
        "password",
        "token",
        "COS_APIKEY",
    ]
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from paths(item, (*prefix, i))


def at(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


@st.composite
def hostile_jobs(draw: st.DrawFn) -> dict[str, Any]:
    """A job document of any kind, with up to two hostile changes and perhaps a planted
    credential."""
    job = copy.deepcopy(draw(st.sampled_from(JOBS)))
    for _ in range(draw(st.integers(0, 2))):
        where = draw(st.sampled_from(list(paths(job))[1:]))
        parent, key = at(job, where[:-1]), where[-1]
        change = draw(st.sampled_from(["replace", "add-key", "remove"]))
        if change == "replace":
            parent[key] = copy.deepcopy(draw(HOSTILE))
        elif change == "add-key" and isinstance(parent[key], dict):
            parent[key][
                draw(st.text(max_size=6) | st.sampled_from(["spec", "env", "template"]))
            ] = copy.deepcopy(draw(HOSTILE))
        elif isinstance(parent, dict):
            del parent[key]
    plant = draw(st.sampled_from(["none", "env", "annotation", "flag", "learner-env"]))
    name = draw(CREDENTIAL_NAMES)
    secret = copy.deepcopy(draw(PLANTED))
    containers = [
        c
        for p in paths(job)
        if p and p[-1] == "containers" and isinstance(at(job, p), list)
        for c in at(job, p)
        if isinstance(c, dict)
    ]
    if plant == "env" and containers:
        containers[0]["env"] = [{"name": name, "value": secret}]
    elif plant == "flag" and containers:
        # A flag on the command line, or a mapping of credential-named keys where it belongs.
        containers[0]["args"] = (
            draw(FLAG_FORMS)(name) if isinstance(secret, str) else [{name: secret}]
        )
    elif plant == "annotation" and isinstance(job.get("metadata"), dict):
        job["metadata"]["annotations"] = {name: secret}
    elif plant == "learner-env" and isinstance(job.get("spec"), dict):
        job["spec"]["env"] = {name: secret}
    return job


STACK_EXTRAS = st.fixed_dictionaries(
    {},
    optional={
        "kubetrain:mode": st.sampled_from(["native", "operator"]) | HOSTILE,
        "kubetrain:nativeWorkload": st.sampled_from(["pod", "job", "jobset"]),
        "kubetrain:namespace": st.sampled_from(["ml", "default"]) | HOSTILE,
        "kubetrain:kubernetesVersion": st.sampled_from(["1.30", "1.33", 1.3]) | HOSTILE,
        "kubetrain:credentials": st.just({"db": {"password": SECRET}})
        | st.just({"db": SECRET})
        | st.just(SECRET)
        | st.just({"db": {"password": [SECRET]}}),
        "kubetrain:gitops": st.just({"repoURL": f"https://ci:{SECRET}@git.example.com/x.git"})
        | st.just({"repoURL": "https://git.example.com/x.git"}),
        "kubetrain:jobFiles": st.sampled_from([["/etc/*"], ["../*.yaml"], ["stacks/*.yaml"]]),
        "aws:region": HOSTILE,
    },
)


def project() -> Path:
    root = Path(tempfile.mkdtemp(prefix="kubetrain-hostile-"))
    (root / "stacks").mkdir()
    (root / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\nstackConfigDir: stacks\n")
    return root


def everything_written(root: Path) -> str:
    rendered = root / "rendered"
    if not rendered.exists():
        return ""
    return "".join(p.read_text(errors="replace") for p in rendered.rglob("*") if p.is_file())


def check_contract(root: Path, *args: str, never: tuple[str, ...] = (SECRET,)) -> int:
    """Run ``kubetrain ARGS`` in ``root`` and check the contract (an exception escaping is a
    failed test, with its traceback)."""
    old = os.getcwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.stderr)
    if currently_in_test_context():  # also called outside a property (a fixture's render)
        event(f"{args[0]} exit {result.exit_code}")
    shown = result.stdout + result.stderr
    assert not [s for s in never if s in shown], shown
    assert "Traceback" not in shown
    if args[0] == "render":
        written = everything_written(root)
        assert SECRET not in written
        if result.exit_code != 0:
            assert not (root / "rendered").exists(), result.stderr
    return result.exit_code


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    jobs=st.lists(hostile_jobs(), min_size=1, max_size=2), extras=STACK_EXTRAS, style=st.booleans()
)
def test_no_stack_file_breaks_the_contract(jobs: list[dict], extras: dict, style: bool) -> None:
    root = project()
    try:
        config = {"kubetrain:secretStore": {"name": "vault"}, **extras, "kubetrain:jobs": jobs}
        text = yaml.dump({"config": config}, Dumper=yaml.SafeDumper, default_flow_style=style)
        (root / "stacks" / "Pulumi.dev.yaml").write_text(text)
        check_contract(root, "render")
        check_contract(root, "diff")
    finally:
        shutil.rmtree(root)


def _plant_in_manifest(shape: str, name: str, flags: Any) -> dict[str, Any]:
    """A plain manifest holding a credential the way ``shape`` says."""
    meta: dict[str, Any] = {"name": "m"}
    container: dict[str, Any] = dict(CONTAINER)
    if shape == "configmap-data":
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {name: SECRET}}
    if shape == "annotation":
        meta["annotations"] = {name: SECRET}
    elif shape == "env":
        container["env"] = [{"name": name, "value": SECRET}]
    else:
        container["args"] = flags(name)
    pod_spec = {"restartPolicy": "Never", "containers": [container]}
    if shape == "env":  # in a Job's pod template
        job_spec = {"template": {"spec": pod_spec}}
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": job_spec}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shape=st.sampled_from(["configmap-data", "annotation", "env", "flag"]),
    name=CREDENTIAL_NAMES,
    flags=FLAG_FORMS,
)
def test_no_plain_manifest_carries_a_credential(shape: str, name: str, flags: Any) -> None:
    """Plain manifests (``kubetrain:manifests``) beside a valid job: a credential planted in
    any of them is refused, never written or shown."""
    root = project()
    try:
        config = {
            "kubetrain:namespace": "ml",
            "kubetrain:jobs": [copy.deepcopy(JOBS[0])],
            "kubetrain:manifests": [_plant_in_manifest(shape, name, flags)],
        }
        (root / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))
        assert check_contract(root, "render") == 2
    finally:
        shutil.rmtree(root)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.sampled_from([yaml.safe_dump({"config": {"kubetrain:jobs": [job]}}) for job in JOBS]),
    cut=st.integers(0, 2000),
    insert=st.sampled_from(
        [
            "",
            "&a ",
            "*a",
            "!!binary ",
            "!!python/object:os.system ",
            "<<: ",
            "\t",
            "{",
            "? ",
            "\x00",
            "%YAML 1.1\n",
            "---\n",
            "\\",
        ]
    ),
)
def test_no_mangled_text_breaks_the_contract(text: str, cut: int, insert: str) -> None:
    root = project()
    try:
        cut = min(cut, len(text))
        (root / "stacks" / "Pulumi.dev.yaml").write_text(text[:cut] + insert + text[cut:])
        check_contract(root, "render")
    finally:
        shutil.rmtree(root)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    job=hostile_jobs(),
    settings_=st.dictionaries(
        st.sampled_from(["mode", "namespace", "gpuResource"]), HOSTILE, max_size=2
    ),
)
def test_no_component_argument_breaks_the_contract(job: dict, settings_: dict) -> None:
    """What a Pulumi component receives goes through the same rules (as plain data: YAML-only
    types do not reach it)."""
    try:
        load_job(job, settings={"secretStore": {"name": "vault"}, **settings_}, file="component")
    except InputError as exc:
        assert SECRET not in str(exc)


def _holding(kind: str, field: str) -> Any:
    """An object of ``kind`` with a planted value under ``field`` (Secret or ConfigMap data)."""
    return lambda s: {"apiVersion": "v1", "kind": kind, "metadata": {"name": "x"}, field: {"k": s}}


def _pod(s: Any) -> dict[str, Any]:
    env = [{"name": "X", "value": s}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "annotations": {"password": s}},
        "spec": {"containers": [{"name": "c", "image": "i", "env": env}]},
    }


OBJECT_SECRETS = st.sampled_from(
    [
        _holding("Secret", "data"),
        _holding("Secret", "stringData"),
        _holding("ConfigMap", "data"),
        _pod,
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    make=OBJECT_SECRETS,
    secret=PLANTED | st.just(1.2345e30),
    mangle=st.lists(
        st.tuples(st.sampled_from(["kind", "apiVersion", "metadata", "spec"]), HOSTILE), max_size=2
    ),
    output=st.sampled_from(["text", "json", "junit"]),
)
def test_no_validated_file_breaks_the_contract(
    make: Any, secret: Any, mangle: list, output: str
) -> None:
    root = project()
    try:
        obj = make(secret)
        for key, value in mangle:
            obj[key] = copy.deepcopy(value)
        (root / "a.yaml").write_text(yaml.dump(obj, Dumper=yaml.SafeDumper))
        check_contract(root, "validate", "a.yaml", "--output", output, never=(SECRET, "1.2345"))
    finally:
        shutil.rmtree(root)
