"""Native workloads of the Kubeflow kinds (``kubetrain:nativeWorkload`` pod | job | jobset).

What must hold, against oracles where there are some: every replica's pod is the operator's in
all three modes (environment byte for byte after Kubernetes' ``$(VAR)`` expansion, hostname,
Services, gang, Pod Security, GPUs); the Jobs obey the API server's Job rules (the apiserver
corpus, ``ValidateJob``) and the JobSets the upstream CRD and webhook; the operator's run policy
maps onto the Job controller per Kubernetes version (the bundled schemas say which fields exist).
"""

from __future__ import annotations

import copy
import json
import re
import shutil
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from components import TFJob
from kubetrain.builders import BuildContext, build_job
from kubetrain.builders.workloads import NO_BACKOFF_LIMIT, NON_RETRYABLE_EXIT_CODES
from kubetrain.kube.apiextensions import (
    CRDVersion,
    apply_defaults,
    crd_versions,
    validate_crd,
    validate_custom_resource,
)
from kubetrain.kube.apiserver import object_issues
from kubetrain.kube.expansion import container_environment, expand, mapping_func_for
from kubetrain.kube.features import (
    JOB_FEATURES,
    enabled_by_default,
    rule_requires_pod_conditions,
    stage,
)
from kubetrain.kube.immutable import update_refusals
from kubetrain.kube.names import DNS1035_LABEL
from kubetrain.kube.schemas import definitions, supported_versions
from kubetrain.kube.stored import stored_form
from kubetrain.models import InputError, load_job, load_stack
from kubetrain.validate import Located, Validator
from kubetrain.validate.schemas import model_schema

from conftest import REPO, needs_apiserver_corpus, needs_upstream_crds
from helpers import objects, pick, replica_pods, stack_from
from pulumi_harness import by_identity, expected_identity, run_pulumi

WORKLOADS = ("pod", "job", "jobset")
SHARED = REPO.parent / "shared"
JOBSET_CRD = SHARED / "crds" / "jobset.x-k8s.io" / "jobset.x-k8s.io_jobsets.yaml"
CORPUS = SHARED / "apiserver-corpus" / "create.jsonl"

TF_TEMPLATE = {"spec": {"containers": [{"name": "tensorflow", "image": "tf:2.15"}]}}


def document(kind: str, name: str, spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    """A ``kubeflow.org/v1`` job document."""
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": kind,
        "metadata": {"name": name, **meta},
        "spec": spec,
    }


# --- one stack of every Kubeflow feature, rendered in each mode ----------------------------------

#: A job whose env uses $(VAR) references, escapes, envFrom and valueFrom, so the environment
#: comparison exercises the kubelet's expansion, and whose init container reads them too.
EXPANSION_JOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "expand"},
    "spec": {
        "runPolicy": {"activeDeadlineSeconds": 600},
        "pytorchReplicaSpecs": {
            "Master": {
                "replicas": 1,
                "restartPolicy": "Always",
                "template": {
                    "spec": {
                        "initContainers": [
                            {
                                "name": "fetch",
                                "image": "busybox:1.36",
                                "env": [{"name": "WHERE", "value": "$(HOSTNAME)/$$(RANK)"}],
                            }
                        ],
                        "containers": [
                            {
                                "name": "pytorch",
                                "image": "pytorch/pytorch:2.3.0",
                                "envFrom": [{"configMapRef": {"name": "defaults"}, "prefix": "D_"}],
                                "env": [
                                    {"name": "BASE", "value": "/data"},
                                    {"name": "URL", "value": "tcp://$(MASTER_ADDR):$(MASTER_PORT)"},
                                    {"name": "DIR", "value": "$(BASE)/$(D_X)-$(UNDEFINED)-$"},
                                    {
                                        "name": "POD",
                                        "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                                    },
                                    {"name": "ODD", "value": "$$$(BASE)é$é"},
                                ],
                            }
                        ],
                    }
                },
            },
            "Worker": {
                "replicas": 2,
                "restartPolicy": "ExitCode",
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "pytorch",
                                "image": "pytorch/pytorch:2.3.0",
                                "env": [{"name": "ME", "value": "rank $(RANK) of $(WORLD_SIZE)"}],
                            }
                        ]
                    }
                },
            },
        },
    },
}


def _project(tmp: Path, workload: str, **settings: Any) -> Path:
    """A project whose stack holds Kubeflow's published examples, the tfjob and pytorchjob golden
    cases' jobs and :data:`EXPANSION_JOB`, under ``workload``."""
    shutil.copytree(REPO / "stacks" / "kubeflow-examples", tmp / "examples", dirs_exist_ok=True)
    jobs = [EXPANSION_JOB]
    for case in ("tfjob", "pytorchjob"):
        stack = yaml.safe_load((REPO / "tests/cases" / case / f"Pulumi.{case}.yaml").read_text())
        jobs += [
            # Both cases have a job "full": the PyTorchJobs get a prefix.
            {**j, "metadata": {**j["metadata"], "name": f"{case[:2]}-{j['metadata']['name']}"}}
            for j in stack["config"]["kubetrain:jobs"]
            if j["metadata"].get("annotations", {}).get("kubetrain.io/mode") != "operator"
        ]
    # The tfjob case's job file (v1alpha1 jobs); the pytorchjob case's is the examples'.
    shutil.copy(REPO / "tests/cases/tfjob/jobs.yaml", tmp / "tfjob-jobs.yaml")
    config = {
        "kubetrain:namespace": "ml",
        "kubetrain:kubernetesVersion": "1.33",
        "kubetrain:nativeWorkload": workload,
        "kubetrain:external": {
            "persistentVolumeClaims": ["strategy-volume"],
            "configMaps": ["defaults"],
        },
        "kubetrain:jobFiles": ["examples/*.yaml", "tfjob-jobs.yaml"],
        "kubetrain:jobs": jobs,
        **{f"kubetrain:{k}": v for k, v in settings.items()},
    }
    stack_from(tmp, config)
    return tmp / "stacks" / "Pulumi.test.yaml"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """workload -> objects of the feature stack, gang-scheduled by Volcano, Pod Security
    restricted (so both decorations are compared across modes)."""
    out = {}
    for workload in WORKLOADS:
        path = _project(
            tmp_path_factory.mktemp(workload),
            workload,
            gangScheduler="volcano",
            podSecurity="restricted",
        )
        objs = objects(load_stack(path))
        report = Validator((1, 33)).validate(Located(o, "x") for o in objs)
        assert report.ok, [(r.title, r.findings) for r in report.results if r.findings][:3]
        out[workload] = objs
    return out


def kinds(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


# --- the pods are the operator's in every mode ---------------------------------------------------


def _value_from(entry: Any) -> str:
    # What the cluster resolves (a field of the pod, a key of a Secret): the same reference in
    # every mode resolves to the same value, except the pod's own name (see the test below).
    return "<" + json.dumps(entry["valueFrom"], sort_keys=True) + ">"


def _source(entry: Any) -> dict[str, str]:
    return {"X": "from " + json.dumps(entry, sort_keys=True)}


#: Annotations the delivery engines read off the object itself (the Pod; under a Job or JobSet,
#: that object): not part of the pod a controller creates.
ENGINE_ANNOTATIONS = ("pulumi.com/", "kustomize.toolkit.fluxcd.io/", "argocd.argoproj.io/")


def stored_pod(pod: dict[str, Any]) -> dict[str, Any]:
    """A pod, or a pod template, as the API server stores the pod (kube/stored.py): a JobSet,
    a custom resource, keeps its templates as written, and the Job the JobSet controller
    creates from one is stored in that form. Engine annotations left out."""
    meta = copy.deepcopy(pod["metadata"])
    annotations = {
        k: v for k, v in meta.get("annotations", {}).items() if not k.startswith(ENGINE_ANNOTATIONS)
    }
    meta["annotations"] = annotations or None
    spec = copy.deepcopy(pod["spec"])
    return stored_form({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


def environments(pod: dict[str, Any]) -> Iterator[tuple[str, dict[str, bytes]]]:
    """(container name, environment as the process sees it, values as bytes) of every container
    and init container of a pod as stored, after the kubelet's expansion."""
    spec = stored_pod(pod)["spec"]
    for c in [*spec.get("initContainers", ()), *spec["containers"]]:
        env = container_environment(c, _value_from, _source)
        yield c["name"], {k: v.encode("utf-8", "surrogateescape") for k, v in env.items()}


@pytest.mark.parametrize("workload", ["job", "jobset"])
def test_every_pod_environment_is_the_operators_byte_for_byte(
    rendered: dict[str, list[dict[str, Any]]], workload: str
) -> None:
    operator = replica_pods(rendered["pod"])
    mine = replica_pods(rendered[workload])
    assert len(operator) > 30 and mine.keys() == operator.keys()
    compared = 0
    for name, pod in operator.items():
        assert dict(environments(mine[name])) == dict(environments(pod)), name
        compared += sum(len(env) for _, env in environments(pod))
    assert compared > 100
    # The expansion ran: earlier variables and envFrom's expanded, an undefined one kept, $$
    # escaped, Go's byte-wise copy of a "$" before a non-ASCII byte. The operator appends its
    # variables after the template's, so a template value cannot use them (in any mode).
    env = dict(environments(mine["expand-master-0"]))
    assert env["pytorch"]["URL"] == b"tcp://$(MASTER_ADDR):$(MASTER_PORT)"
    assert env["pytorch"]["MASTER_ADDR"] == b"expand-master-0"
    assert (
        env["pytorch"]["DIR"]
        == b"/data/from "
        + json.dumps(
            {"configMapRef": {"name": "defaults"}, "prefix": "D_"}, sort_keys=True
        ).encode()
        + b"-$(UNDEFINED)-$"
    )
    assert env["pytorch"]["ODD"] == "$/dataé$Ã".encode() + b"\xa9"
    assert env["fetch"]["WHERE"] == b"$(HOSTNAME)/$(RANK)"


@pytest.mark.parametrize("workload", ["job", "jobset"])
def test_the_pod_is_the_operators_but_for_what_its_controller_needs(
    rendered: dict[str, list[dict[str, Any]]], workload: str
) -> None:
    """Labels, annotations (Volcano's gang annotations included) and the pod spec (containers,
    Pod Security, GPUs, scheduler) are the operator's; only the hostname is added (a Job's pod
    gets a random name), the restart policy mapped, and the deadline moved to the Job."""
    operator = replica_pods(rendered["pod"])
    mine = replica_pods(rendered[workload])
    for name, pod in operator.items():
        template, pod = stored_pod(mine[name]), stored_pod(pod)
        for key in ("labels", "annotations"):  # the pod's name is its controller's to give
            assert template["metadata"].get(key) == pod["metadata"].get(key), (name, key)
        expected = copy.deepcopy(pod["spec"])
        expected.pop("activeDeadlineSeconds", None)
        expected["hostname"] = name
        if expected["restartPolicy"] == "Always":
            expected["restartPolicy"] = "OnFailure"
        assert template["spec"] == expected, name
    restricted = mine["tf-full-worker-0"]["spec"]["containers"][0]["securityContext"]
    assert restricted["allowPrivilegeEscalation"] is False
    gpus = mine["tf-full-worker-0"]["spec"]["containers"][0]["resources"]
    assert gpus["limits"]["nvidia.com/gpu"] == gpus["requests"]["nvidia.com/gpu"]


def test_services_and_pod_groups_are_the_same_in_every_mode(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    """The per-index headless Services (so the hosts of TF_CONFIG, MASTER_ADDR and the
    rendezvous resolve as under the operator) and the PodGroups (minMember from every pod)."""
    services = [kinds(rendered[w], "Service") for w in WORKLOADS]
    groups = [kinds(rendered[w], "PodGroup") for w in WORKLOADS]
    assert len(services[0]) > 30 and services[0] == services[1] == services[2]
    assert len(groups[0]) > 5 and groups[0] == groups[1] == groups[2]
    full = pick(rendered["jobset"], "PodGroup", "py-full")
    assert full["spec"]["minMember"] == 4  # the pytorchjob case's master and three workers


def test_the_pod_name_is_the_one_thing_a_pod_sees_differently(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    """A Job's pod is named <job>-<suffix>: fieldRef metadata.name resolves to that, not to the
    operator's pod name. The hostname (HOSTNAME, socket.gethostname) stays the operator's."""
    template = replica_pods(rendered["job"])["expand-master-0"]
    pod_env = next(c for c in template["spec"]["containers"] if c["name"] == "pytorch")["env"]
    (pod_name,) = [e["valueFrom"]["fieldRef"] for e in pod_env if e["name"] == "POD"]
    assert pod_name["fieldPath"] == "metadata.name"
    assert template["spec"]["hostname"] == "expand-master-0"


# --- $(VAR) expansion: third_party/forked/golang/expansion ---------------------------------------

# The cases of upstream's expand_test.go (doExpansionTest), as (input, expected).
EXPANSION_CASES = [
    ("$(VAR_A)", "A"),
    ("$(VAR_A)-$(VAR_A)", "A-A"),
    ("$(VAR_A)-1", "A-1"),
    ("___$(VAR_B)___", "___B___"),
    ("___$(VAR_C)", "___C"),
    ("$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"),
    ("$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"),
    ("$$(VAR_A)_$$(VAR_B)", "$(VAR_A)_$(VAR_B)"),
    ("f000-$$VAR_A", "f000-$VAR_A"),
    ("foo\\$(VAR_C)bar", "foo\\Cbar"),
    ("foo\\\\$(VAR_C)bar", "foo\\\\Cbar"),
    ("foo\\\\\\\\$(VAR_A)bar", "foo\\\\\\\\Abar"),
    ("$(VAR_A$(VAR_B))", "$(VAR_A$(VAR_B))"),
    ("$(VAR_A$(VAR_B)", "$(VAR_A$(VAR_B)"),
    ("$(VAR_REF)", "$(VAR_A)"),
    ("%%$(VAR_REF)--$(VAR_REF)%%", "%%$(VAR_A)--$(VAR_A)%%"),
    ("foo$(VAR_EMPTY)bar", "foobar"),
    ("foo$(VAR_Awhoops!", "foo$(VAR_Awhoops!"),
    ("f00__(VAR_A)__", "f00__(VAR_A)__"),
    ("$?_boo_$!", "$?_boo_$!"),
    ("$VAR_A", "$VAR_A"),
    ("$(VAR_DNE)", "$(VAR_DNE)"),
    ("$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"),
    ("$$$$$$(VAR_A)", "$$$(VAR_A)"),
    ("$$$$$$$(GOOD_ODDS)", "$$$$(GOOD_ODDS)"),
    ("$$$$$$$(VAR_A)", "$$$A"),
    ("$VAR_A)", "$VAR_A)"),
    ("${VAR_A}", "${VAR_A}"),
    ("$(VAR_B)_______$(A", "B_______$(A"),
    ("$(VAR_C)_______$(", "C_______$("),
    ("$(VAR_A)foobarzab$", "Afoobarzab$"),
    ("foo-\\$(VAR_A", "foo-\\$(VAR_A"),
    ("--$($($($($--", "--$($($($($--"),
    ("$($($($($--foo$(", "$($($($($--foo$("),
    ("foo0--$($($($(", "foo0--$($($($("),
    ("$(foo$$var)", "$(foo$$var)"),
    ("\n", "\n"),
]


@pytest.mark.parametrize("dual", [False, True], ids=["MappingFuncFor", "two contexts"])
def test_expansion_follows_upstream_cases(dual: bool) -> None:
    if dual:
        first = {"VAR_A": "A", "VAR_EMPTY": ""}
        mapping = mapping_func_for(first, {"VAR_B": "B", "VAR_C": "C", "VAR_REF": "$(VAR_A)"})
    else:
        context = {"VAR_A": "A", "VAR_B": "B", "VAR_C": "C", "VAR_REF": "$(VAR_A)", "VAR_EMPTY": ""}
        mapping = mapping_func_for(context)
    assert [expand(i, mapping) for i, _ in EXPANSION_CASES] == [e for _, e in EXPANSION_CASES]


def test_environment_follows_the_kubelets_order() -> None:
    """TestMapReference: each value sees the variables defined before it; envFrom first, not
    expanded; a later definition of a name wins."""
    container = {
        "envFrom": [{"secretRef": {"name": "s"}}],
        "env": [
            {"name": "FOO", "value": "bar"},
            {"name": "ZOO", "value": "$(FOO)-1"},
            {"name": "BLU", "value": "$(ZOO)-2"},
            {"name": "S", "value": "$(S)+"},
            {"name": "FOO", "value": "$(FOO)$(FOO)"},
        ],
    }
    env = container_environment(container, _value_from, lambda _: {"S": "$(FOO)"})
    assert env == {"S": "$(FOO)+", "FOO": "barbar", "ZOO": "bar-1", "BLU": "bar-1-2"}


# --- the Job API, per Kubernetes version ------------------------------------------------------


@pytest.mark.parametrize("version", supported_versions(), ids=lambda v: f"{v[0]}.{v[1]}")
def test_feature_table_matches_the_bundled_api_schemas(version: tuple[int, int]) -> None:
    """A gate's field is in the Job API from its alpha version on, and the rule's
    onPodConditions is required exactly where kube/features.py says."""
    defs = definitions(version)["$defs"]
    job_spec = defs["io.k8s.api.batch.v1.JobSpec"]["properties"]
    for feature in JOB_FEATURES.values():
        assert (feature.field in job_spec) == (stage(feature.gate, version) != "-"), feature
    rule = defs["io.k8s.api.batch.v1.PodFailurePolicyRule"]
    assert ("onPodConditions" in rule.get("required", [])) == rule_requires_pod_conditions(version)


def job_api_problems(job: dict[str, Any]) -> list[str]:
    """The parts of ValidateJob (pkg/apis/batch/validation/validation.go: ValidateJobSpec,
    validatePodFailurePolicy, validatePodFailurePolicyRuleOnExitCodes, ValidateGeneratedSelector)
    the Jobs kubetrain writes could break; the pod template itself is the Validator's."""
    spec, pod = job["spec"], job["spec"]["template"]["spec"]
    out = []
    if pod.get("restartPolicy") not in ("OnFailure", "Never"):
        out.append("template restartPolicy must be OnFailure or Never")
    if "selector" in spec or spec.get("manualSelector"):
        out.append("selector not auto-generated")
    for key in ("completions", "parallelism", "backoffLimit", "activeDeadlineSeconds"):
        if key in spec and not 0 <= spec[key] <= 2**31 - 1:
            out.append(f"{key} out of range")
    if spec.get("completionMode", "NonIndexed") not in ("NonIndexed", "Indexed"):
        out.append("completionMode")
    policy = spec.get("podFailurePolicy")
    if policy is not None:
        if pod.get("restartPolicy") != "Never":
            out.append("podFailurePolicy needs restartPolicy Never")
        if spec.get("podReplacementPolicy", "Failed") != "Failed":
            out.append("podReplacementPolicy must be Failed with a podFailurePolicy")
        names = {c["name"] for c in [*pod.get("initContainers", ()), *pod["containers"]]}
        rules = policy["rules"]
        if len(rules) > 20:
            out.append("too many rules")
        for rule in rules:
            if rule["action"] not in ("FailJob", "Ignore", "Count", "FailIndex"):
                out.append("action")
            codes, conditions = rule.get("onExitCodes"), rule.get("onPodConditions") or []
            if (codes is None) == (not conditions):
                out.append("exactly one of onExitCodes and onPodConditions")
            if codes is not None:
                values = codes["values"]
                if codes.get("containerName") not in (None, *names):
                    out.append("containerName is no container of the pod")
                if codes["operator"] not in ("In", "NotIn"):
                    out.append("operator")
                if not 0 < len(values) <= 255 or values != sorted(set(values)):
                    out.append("values must be 1 to 255, sorted, unique")
                if codes["operator"] == "In" and 0 in values:
                    out.append("In must not hold 0")
    return out


def all_jobs(objs: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every Job, those a JobSet will create included (as its controller builds them)."""
    for obj in objs:
        if obj["kind"] == "Job":
            yield obj
        elif obj["kind"] == "JobSet":
            for rjob in obj["spec"]["replicatedJobs"]:
                template = rjob["template"]
                meta = {
                    **template.get("metadata", {}),
                    "name": rjob["name"],
                    "namespace": obj["metadata"]["namespace"],
                }
                yield {"apiVersion": "batch/v1", "kind": "Job", **template, "metadata": meta}


@cache
def corpus_job_restart_policies() -> dict[str, set[str]]:
    """What a real kube-apiserver v1.36 answered to Job templates' restart policies."""
    verdicts: dict[str, set[str]] = {"accepted": set(), "rejected": set()}
    for line in CORPUS.read_text().splitlines():
        case = json.loads(line)
        if case["kind"] == "Job" and case["family"] == "restart-policy":
            policy = case["object"]["spec"]["template"]["spec"]["restartPolicy"]
            verdicts[case["verdict"]].add(policy)
    return verdicts


@needs_apiserver_corpus
@pytest.mark.parametrize("workload", ["job", "jobset"])
def test_jobs_obey_the_api_servers_job_rules(
    rendered: dict[str, list[dict[str, Any]]], workload: str
) -> None:
    jobs = list(all_jobs(rendered[workload]))
    assert len(jobs) > 30
    verdicts = corpus_job_restart_policies()
    assert {"OnFailure", "Never"} <= verdicts["accepted"] and "Always" in verdicts["rejected"]
    for job in jobs:
        assert job_api_problems(job) == [], job["metadata"]["name"]
        # kubetrain's own mirror of kube-apiserver's ValidateJob (kube/apiserver) agrees.
        assert object_issues(job, (1, 33)) == [], job["metadata"]["name"]
        assert job["spec"]["template"]["spec"]["restartPolicy"] in verdicts["accepted"]
    # The checks can fail.
    broken = copy.deepcopy(next(j for j in jobs if "podFailurePolicy" in j["spec"]))
    broken["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    broken["spec"]["podFailurePolicy"]["rules"][-1]["onExitCodes"]["values"].insert(0, 0)
    assert job_api_problems(broken) == [
        "podFailurePolicy needs restartPolicy Never",
        "In must not hold 0",
    ]
    assert {issue.path[-1] for issue in object_issues(broken, (1, 33))} == {0, "restartPolicy"}


@pytest.mark.parametrize(
    ("version", "replacement", "conditions"),
    [
        ((1, 26), False, True),
        ((1, 28), False, True),
        ((1, 29), True, False),
        ((1, 37), True, False),
    ],
)
def test_the_job_of_an_exit_code_replica_per_version(
    tmp_path: Path, version: tuple[int, int], replacement: bool, conditions: bool
) -> None:
    """ExitCode: a disrupted pod (DisruptionTarget) is replaced without counting, as the
    operator's PastBackoffLimit counts restarts of running pods only; then fail the Job on 1-127
    of the default container, retry the rest; fields only where the version serves them; every
    object valid against that version's schemas."""
    job = {**EXPANSION_JOB, "metadata": {"name": "v"}}
    objs = objects(
        stack_from(
            tmp_path,
            {
                "kubetrain:kubernetesVersion": f"{version[0]}.{version[1]}",
                "kubetrain:external": {"configMaps": ["defaults"]},
                "kubetrain:jobs": [job],
            },
        )
    )
    report = Validator(version).validate(Located(o, "x") for o in objs)
    assert report.ok, [(r.title, r.findings) for r in report.results if r.findings]
    worker = pick(objs, "Job", "v-worker-1")["spec"]
    rule = {
        "action": "FailJob",
        "onExitCodes": {
            "containerName": "pytorch",
            "operator": "In",
            "values": list(range(1, 128)),
        },
    }
    if conditions:
        rule["onPodConditions"] = []
    disrupted = {
        "action": "Ignore",
        "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
    }
    assert worker["podFailurePolicy"] == {"rules": [disrupted, rule]}
    assert ("podReplacementPolicy" in worker) == replacement
    assert worker["template"]["spec"]["restartPolicy"] == "Never"
    assert job_api_problems({"spec": worker}) == []


@pytest.mark.parametrize(
    ("restart", "backoff", "pod_policy", "job_backoff"),
    [
        ("Always", None, "OnFailure", NO_BACKOFF_LIMIT),
        ("OnFailure", 4, "OnFailure", 4),
        ("Never", 4, "Never", 0),
        ("ExitCode", None, "Never", NO_BACKOFF_LIMIT),
        ("ExitCode", 0, "Never", 0),
    ],
)
@pytest.mark.parametrize("workload", ["job", "jobset"])
def test_run_policy_maps_onto_the_job_controller(
    tmp_path: Path,
    workload: str,
    restart: str,
    backoff: int | None,
    pod_policy: str,
    job_backoff: int,
) -> None:
    """backoffLimit: the operator's (none: no limit) for the policies it retries, 0 under Never,
    which it never retries; the deadline on the Job (counted from its start, over every retry),
    not the pod; suspend on the Job, or on the JobSet, which passes it to its Jobs."""
    run_policy: dict[str, Any] = {"activeDeadlineSeconds": 3600, "suspend": True}
    if backoff is not None:
        run_policy["backoffLimit"] = backoff
    worker = {"replicas": 2, "restartPolicy": restart, "template": TF_TEMPLATE}
    job = document("TFJob", "m", {"runPolicy": run_policy, "tfReplicaSpecs": {"Worker": worker}})
    config = {"kubetrain:nativeWorkload": workload, "kubetrain:jobs": [job]}
    objs = objects(stack_from(tmp_path, config))
    (job_spec,) = [j["spec"] for j in all_jobs(objs) if j["metadata"]["name"].endswith("1")]
    assert job_spec["template"]["spec"]["restartPolicy"] == pod_policy
    assert job_spec["backoffLimit"] == job_backoff
    assert job_spec["activeDeadlineSeconds"] == 3600
    assert "activeDeadlineSeconds" not in job_spec["template"]["spec"]
    assert ("podFailurePolicy" in job_spec) == (restart == "ExitCode")
    assert (job_spec["completions"], job_spec["parallelism"]) == (1, 1)
    if workload == "job":
        assert job_spec["suspend"] is True
        annotations = pick(objs, "Job", "m-worker-1")["metadata"]["annotations"]
        assert annotations["pulumi.com/skipAwait"] == "true"
    else:
        assert "suspend" not in job_spec
        assert pick(objs, "JobSet", "m")["spec"]["suspend"] is True


def test_non_retryable_exit_codes_are_the_operators() -> None:
    """train.IsRetryableExitCode: 128 and above are retried, 1-127 fail the job (0 succeeds)."""
    assert tuple(c for c in range(256) if 0 < c < 128) == NON_RETRYABLE_EXIT_CODES


def test_ttl_is_refused_in_render_mode_and_written_for_pulumi(tmp_path: Path) -> None:
    worker = {"template": {"spec": {"containers": [{"name": "pytorch", "image": "p"}]}}}
    spec = {"runPolicy": {"ttlSecondsAfterFinished": 60}, "pytorchReplicaSpecs": {"Worker": worker}}
    job = document("PyTorchJob", "t", spec)
    for workload, kind in (("job", "Job"), ("jobset", "JobSet")):
        stack = stack_from(
            tmp_path, {"kubetrain:nativeWorkload": workload, "kubetrain:jobs": [job]}
        )
        with pytest.raises(InputError, match=r"re-creates the .* the TTL deletes"):
            objects(stack)
        (obj,) = kinds(objects(stack, "pulumi"), kind)
        assert obj["spec"]["ttlSecondsAfterFinished"] == 60
    pods = stack_from(tmp_path, {"kubetrain:nativeWorkload": "pod", "kubetrain:jobs": [job]})
    assert [o["kind"] for o in objects(pods)] == ["Service", "Pod"]  # pods: no TTL, as before


# --- JobSet --------------------------------------------------------------------------------------


@cache
def jobset_crd() -> dict[str, Any]:
    (crd,) = [d for d in yaml.safe_load_all(JOBSET_CRD.read_text()) if d]
    return crd


@cache
def jobset_crd_version() -> CRDVersion:
    """The v1alpha2 JobSet as the API server's apiextensions sees it (kube/apiextensions)."""
    assert validate_crd(jobset_crd()) == []
    (version,) = [v for v in crd_versions(jobset_crd()) if v.version == "v1alpha2"]
    return version


def jobset_webhook_problems(jobset: dict[str, Any]) -> list[str]:
    """kubernetes-sigs/jobset v0.9 pkg/webhooks/jobset_webhook.go ValidateCreate: child Job names
    (placement.GenJobName) DNS-1035, success targets and failure-rule names that exist."""
    spec, name = jobset["spec"], jobset["metadata"]["name"]
    rjobs = [r["name"] for r in spec["replicatedJobs"]]
    out = []
    for rjob in spec["replicatedJobs"]:
        job_name = f"{name}-{rjob['name']}-{rjob.get('replicas', 1) - 1}"
        out += [f"{job_name}: {p}"] if (p := DNS1035_LABEL.check(job_name)) else []
        if problem := DNS1035_LABEL.check(rjob.get("groupName", "default")):
            out.append(f"groupName: {problem}")
    out += [f"unknown target {t}" for t in spec["successPolicy"]["targetReplicatedJobs"]]
    out = [p for p in out if not p.startswith("unknown target ") or p[15:] not in rjobs]
    if len(set(rjobs)) != len(rjobs):
        out.append("replicatedJob names repeat")
    return out


@needs_upstream_crds
def test_jobsets_are_valid_against_the_upstream_crd_and_webhook(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    jobsets = kinds(rendered["jobset"], "JobSet")
    golden = sorted((REPO / "tests/cases/kubeflow-jobset/expected").rglob("jobset-*.yaml"))
    jobsets += [yaml.safe_load(p.read_text()) for p in golden]
    assert len(jobsets) > 10
    crd = jobset_crd_version()
    for jobset in jobsets:
        assert validate_custom_resource(crd.node, jobset, version=(1, 33)) == []
        assert jobset_webhook_problems(jobset) == []
    broken = copy.deepcopy(jobsets[0])
    broken["spec"]["network"]["enableDnsHostnames"] = False
    broken["spec"]["startupPolicy"]["startupPolicyOrder"] = "InOrder"
    broken["spec"]["replicatedJobs"][-1]["dependsOn"] = [{"name": "a", "status": "Ready"}]
    problems = [i.message for i in validate_custom_resource(crd.node, broken, version=(1, 33))]
    assert len(problems) == 2, problems  # the unknown field; the CRD's CEL rule
    broken["spec"]["successPolicy"]["targetReplicatedJobs"].append("nope-0")
    assert jobset_webhook_problems(broken) == ["unknown target nope-0"]


def _added(before: Any, after: Any, path: str = "") -> Iterator[str]:
    """Paths of the values ``after`` holds that ``before`` does not."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in after:
            if key not in before:
                yield f"{path}.{key}"
            else:
                yield from _added(before[key], after[key], f"{path}.{key}")
    elif isinstance(before, list) and isinstance(after, list):
        for i, (x, y) in enumerate(zip(before, after, strict=True)):
            yield from _added(x, y, f"{path}[{i}]")


@needs_upstream_crds
def test_jobsets_hold_every_default_of_the_jobset_crd_but_the_pods_own(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    """The API server defaults a custom resource from its CRD before it stores it: what it would
    add to a JobSet kubetrain writes is only Kubernetes' own pod defaults (a port's protocol),
    which pods and Jobs do not write either."""
    crd = jobset_crd_version()
    added = []
    for jobset in kinds(rendered["jobset"], "JobSet"):
        defaulted = copy.deepcopy(jobset)
        apply_defaults(crd.node, defaulted)
        added += list(_added(jobset, defaulted))
    assert added and all(
        re.search(r"\.template\.spec\.template\.spec\..*\.protocol$", p) for p in added
    )
    # Without kubetrain's explicit values the CRD would add them: the check can fail.
    bare = copy.deepcopy(kinds(rendered["jobset"], "JobSet")[0])
    del (
        bare["spec"]["failurePolicy"]["restartStrategy"],
        bare["spec"]["replicatedJobs"][0]["groupName"],
    )
    apply_defaults(crd.node, bare)
    assert bare["spec"]["failurePolicy"]["restartStrategy"] == "Recreate"
    assert bare["spec"]["replicatedJobs"][0]["groupName"] == "default"


def _schema_paths(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(node, dict):
        return
    for key, sub in (node.get("properties") or {}).items():
        yield f"{path}.{key}", sub
        yield from _schema_paths(sub, f"{path}.{key}")
    if isinstance(node.get("items"), dict):
        yield from _schema_paths(node["items"], f"{path}[]")


#: What the JobSet model has (v0.12.0, the trainer's pin) beyond ../shared/crds' v0.9.1 CRD:
#: field paths added, and enum values added per path. e2e/test_fidelity.py compares the model
#: with the v0.12.0 CRD itself (the tier builds JobSet from the trainer's module).
JOBSET_V0_12_FIELDS = (
    ".spec.volumeClaimPolicies",
    ".spec.failurePolicy.rules[].onJobFailureMessagePatterns",
)
JOBSET_V0_12_ENUMS = {
    ".spec.failurePolicy.rules[].action": ["RestartJob", "RestartJobAndIgnoreMaxRestarts"],
    ".spec.failurePolicy.restartStrategy": ["InPlaceRestart"],
}


@needs_upstream_crds
def test_the_jobset_model_is_a_part_of_the_upstream_crd() -> None:
    """Every field of kubetrain's JobSet model is a field of the upstream CRD, with the same
    enums and defaults, so what validate accepts the API server accepts: v0.9.1's, and the
    listed fields and values of v0.12.0."""
    model = model_schema("jobset.x-k8s.io/v1alpha2", "JobSet")
    assert model is not None
    (version,) = [v for v in jobset_crd()["spec"]["versions"] if v["name"] == "v1alpha2"]
    upstream = dict(_schema_paths(version["schema"]["openAPIV3Schema"]))
    mine = dict(_schema_paths(_resolve(model, model)))
    assert len(mine) > 15
    added = {p for p in mine if p.startswith(JOBSET_V0_12_FIELDS)}
    assert {p for p in added if p in JOBSET_V0_12_FIELDS} == set(JOBSET_V0_12_FIELDS)
    assert not added & set(upstream), "a v0.12.0 field is in the v0.9.1 CRD: list it no more"
    for path, node in mine.items():
        if path in added:
            continue
        assert path in upstream, path
        for key in ("enum", "default"):
            if key in node:
                theirs = upstream[path].get(key)
                if key == "enum":
                    theirs = [*theirs, *JOBSET_V0_12_ENUMS.get(path, [])]
                assert node[key] == theirs, (path, key)


def _resolve(node: Any, root: dict[str, Any]) -> Any:
    """``node`` with local ``$ref``s inlined and ``anyOf: [X, null]`` reduced to X (pydantic's
    spelling of an optional field); Kubernetes types stay references."""
    if isinstance(node, list):
        return [_resolve(n, root) for n in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref", "")
    if ref.startswith("#/$defs/"):
        return _resolve(
            {
                **root["$defs"][ref.rsplit("/", 1)[1]],
                **{k: v for k, v in node.items() if k != "$ref"},
            },
            root,
        )
    options = [o for o in node.get("anyOf", ()) if o != {"type": "null"}]
    if len(options) == 1:
        rest = {k: v for k, v in node.items() if k != "anyOf"}
        return _resolve({**options[0], **rest}, root)
    return {k: _resolve(v, root) for k, v in node.items()}


@pytest.mark.parametrize(
    ("job", "operator", "targets"),
    [
        ("tf-smoke-gpu", "All", ["master-0"]),
        ("dist-mnist-for-e2e-test", "All", ["worker-0"]),
        ("tf-full", "All", ["chief-0"]),
        ("py-full", "All", ["master-0"]),
        ("py-elastic", "Any", ["worker-0", "worker-1"]),
        ("legacy", "All", ["master-0"]),
    ],
)
def test_a_jobset_succeeds_when_the_operators_job_does(
    rendered: dict[str, list[dict[str, Any]]], job: str, operator: str, targets: list[str]
) -> None:
    """TFJob (UpdateJobStatus): its Chief or Master, else worker 0; PyTorchJob (v1.9.0
    UpdateJobStatus): its Master, else every worker, or any worker of an elastic job. A failed
    Job fails the JobSet, which then deletes the Jobs still running (PS included), as the
    operator fails the whole job."""
    jobset = pick(rendered["jobset"], "JobSet", job)
    assert jobset["spec"]["successPolicy"] == {
        "operator": operator,
        "targetReplicatedJobs": targets,
    }
    assert jobset["spec"]["failurePolicy"] == {"maxRestarts": 0, "restartStrategy": "Recreate"}
    assert jobset["spec"]["network"]["enableDNSHostnames"] is False


def test_all_workers_success_policy(tmp_path: Path) -> None:
    golden = REPO / "tests/cases/kubeflow-jobset/expected/kubeflow/jobset-all-workers.yaml"
    jobset = yaml.safe_load(golden.read_text())
    assert jobset["spec"]["successPolicy"]["targetReplicatedJobs"] == [
        "worker-0",
        "worker-1",
        "worker-2",
    ]
    assert [r["name"] for r in jobset["spec"]["replicatedJobs"]] == [
        "ps-0",
        "worker-0",
        "worker-1",
        "worker-2",
    ]


# --- the setting and the annotation ----------------------------------------------------------------


def tfjob(name: str = "m", **meta: Any) -> dict[str, Any]:
    worker = {"replicas": 2, "template": TF_TEMPLATE}
    return document("TFJob", name, {"tfReplicaSpecs": {"Worker": worker}}, **meta)


def test_the_default_is_a_job_per_index_and_the_annotation_overrides_the_stack(
    tmp_path: Path,
) -> None:
    jobs = [tfjob("a")] + [
        tfjob(w, annotations={"kubetrain.io/native-workload": w}) for w in WORKLOADS
    ]
    objs = objects(stack_from(tmp_path, {"kubetrain:jobs": jobs}))
    wrappers = {
        o["metadata"].get("labels", {}).get("app.kubernetes.io/instance"): o["kind"]
        for o in objs
        if o["kind"] != "Service"
    }
    assert wrappers == {"a": "Job", "pod": "Pod", "job": "Job", "jobset": "JobSet"}
    stacked = objects(
        stack_from(tmp_path, {"kubetrain:nativeWorkload": "jobset", "kubetrain:jobs": [tfjob()]})
    )
    assert [o["kind"] for o in stacked] == ["Service", "Service", "JobSet"]


def test_suspend_is_refused_for_pods_only(tmp_path: Path) -> None:
    job = tfjob()
    job["spec"]["runPolicy"] = {"suspend": True}
    for workload in ("job", "jobset"):
        config = {"kubetrain:nativeWorkload": workload, "kubetrain:jobs": [job]}
        assert objects(stack_from(tmp_path, config))
    with pytest.raises(InputError, match="bare pods"):
        stack_from(tmp_path, {"kubetrain:nativeWorkload": "pod", "kubetrain:jobs": [job]})


# --- the Pulumi components ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "annotation", "workload"),
    [
        ({"native_workload": "pod"}, None, "pod"),
        ({}, None, "job"),
        ({"nativeWorkload": "jobset"}, None, "jobset"),
        ({"native_workload": "pod"}, "jobset", "jobset"),
    ],
    ids=["pod-snake", "job-default", "jobset-camel", "jobset-annotation"],
)
def test_tfjob_component_registers_each_workload_where_it_belongs(
    settings: dict[str, Any], annotation: str | None, workload: str
) -> None:
    """Jobs (like Pods) belong to their replica type's TFReplicaSet; a JobSet, which holds every
    replica, to the TFJob. Pulumi waits for neither: a Job carries pulumi.com/skipAwait, and
    pulumi-kubernetes does not wait for custom resources."""
    metadata: dict[str, Any] = {"name": "mnist", "namespace": "ml"}
    if annotation:
        metadata["annotations"] = {"kubetrain.io/native-workload": annotation}
    spec = {
        "tf_replica_specs": {
            "PS": {"template": TF_TEMPLATE},
            "Worker": {"replicas": 2, "restart_policy": "ExitCode", "template": TF_TEMPLATE},
        },
        "run_policy": {"backoff_limit": 2, "suspend": True, "ttl_seconds_after_finished": 30},
    }
    args = {
        "metadata": metadata,
        "spec": spec,
        "settings": {"gang_scheduler": "volcano", **settings},
    }
    if workload == "pod":
        del spec["run_policy"]
    run = run_pulumi(lambda: TFJob("ml/mnist", args).mode)  # type: ignore[arg-type]
    replicas = {
        "PS": {"template": TF_TEMPLATE},
        "Worker": {"replicas": 2, "restartPolicy": "ExitCode", "template": TF_TEMPLATE},
    }
    doc_spec: dict[str, Any] = {"tfReplicaSpecs": replicas}
    if workload != "pod":
        doc_spec["runPolicy"] = {"backoffLimit": 2, "suspend": True, "ttlSecondsAfterFinished": 30}
    doc = document("TFJob", "mnist", doc_spec, **{k: v for k, v in metadata.items() if k != "name"})
    loaded, stack_settings = load_job(doc, settings=args["settings"], file="t")
    expected = build_job(loaded, BuildContext(stack_settings, "pulumi"))
    registered = run.kubernetes_objects()
    assert by_identity(registered) == expected_identity(expected)
    wrapper = {"pod": "Pod", "job": "Job", "jobset": "JobSet"}[workload]
    wrappers = [r for r in registered if r.plain["kind"] == wrapper]
    assert len(wrappers) == (1 if workload == "jobset" else 3)
    for reg in wrappers:
        parent = run.parent_of(reg)
        assert parent is not None
        if workload == "jobset":
            assert reg.type == "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"
            assert parent.type == "kubetrain:index:TFJob"
            assert reg.plain["spec"]["ttlSecondsAfterFinished"] == 30  # Pulumi mode only
        else:
            assert parent.type == "kubetrain:index:TFReplicaSet"
        if workload == "job":
            assert reg.type == "kubernetes:batch/v1:Job"
            assert reg.plain["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"
    assert run.result == "native"


# --- what a workload cannot express, said where it matters ---------------------------------------


def warnings_of(tmp_path: Path, job: dict[str, Any], workload: str) -> list[tuple[Any, str]]:
    from kubetrain.builders.tfjob import TFTrainingJob

    stack = stack_from(tmp_path, {"kubetrain:nativeWorkload": workload, "kubetrain:jobs": [job]})
    expansion = TFTrainingJob(stack.jobs[0].job, BuildContext(stack.settings))  # type: ignore[arg-type]
    return expansion.workload_warnings()


@pytest.mark.parametrize(
    ("change", "workloads", "path", "words"),
    [
        ({}, {"job"}, ("spec", "tfReplicaSpecs", "PS"), "parameter servers never exit"),
        (
            {"runPolicy": {"cleanPodPolicy": "Running"}},
            {"job"},
            ("spec", "runPolicy", "cleanPodPolicy"),
            "no Job knows when the whole job ends",
        ),
        (
            {"runPolicy": {"cleanPodPolicy": "All", "activeDeadlineSeconds": 60}},
            {"job", "jobset"},
            ("spec", "runPolicy", "cleanPodPolicy"),
            "",
        ),
        ({"successPolicy": "AllWorkers"}, {"job"}, ("spec", "successPolicy"), "on its own"),
        ({"enableDynamicWorker": True}, {"jobset"}, ("spec", "enableDynamicWorker"), "fails"),
        (
            {"restartPolicy": "Always"},
            {"job", "jobset"},
            ("spec", "tfReplicaSpecs", "Worker", "restartPolicy"),
            "runs as OnFailure",
        ),
        (
            {"env": [{"name": "P", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]},
            {"job", "jobset"},
            ("spec", "tfReplicaSpecs", "Worker", "template", "spec", "containers", 0, "env", 0),
            "read HOSTNAME",
        ),
    ],
    ids=[
        "ps-no-deadline",
        "clean-running",
        "clean-all",
        "all-workers",
        "dynamic",
        "always",
        "name",
    ],
)
def test_what_a_workload_cannot_express_is_said_at_the_field(
    tmp_path: Path, change: dict[str, Any], workloads: set[str], path: tuple[Any, ...], words: str
) -> None:
    worker: dict[str, Any] = {"replicas": 2, "template": copy.deepcopy(TF_TEMPLATE)}
    spec: dict[str, Any] = {"tfReplicaSpecs": {"PS": {"template": TF_TEMPLATE}, "Worker": worker}}
    if "restartPolicy" in change:
        worker["restartPolicy"] = change["restartPolicy"]
    elif "env" in change:
        worker["template"]["spec"]["containers"][0]["env"] = change["env"]
    else:
        spec.update(change)
    if change and "activeDeadlineSeconds" not in spec.get("runPolicy", {}):
        spec.setdefault("runPolicy", {})["activeDeadlineSeconds"] = 3600  # only the one warning
    job = document("TFJob", "w", spec)
    for workload in WORKLOADS:
        found = warnings_of(tmp_path, job, workload)
        if workload in workloads:
            assert [p for p, _ in found] == [path], workload
            assert words in found[0][1]
        else:
            assert found == [], workload


@needs_upstream_crds
def test_validate_with_the_jobset_crd_passes_the_rendered_prod_tree(run) -> None:
    """``kubetrain validate --crd``: the committed JobSets of the prod stack, as the API server
    would take them with the JobSet CRD installed."""
    result = run("validate", "rendered/prod", "--crd", str(JOBSET_CRD))
    assert result.exit_code == 0, result.stdout
    assert "JobSet" in (REPO / "rendered/prod/ml-prod/jobset-resnet50.yaml").read_text()


def test_the_docs_table_of_job_features_is_generated_from_the_code() -> None:
    versions = [(1, m) for m in range(25, 38)]
    assert versions == list(supported_versions())
    rows = [
        "| field (gate) | " + " | ".join(f"{a}.{b}" for a, b in versions) + " |",
        "|---|" + "---|" * len(versions),
    ]
    for f in JOB_FEATURES.values():
        stages = " | ".join(stage(f.gate, v) for v in versions)
        rows.append(f"| `{f.field}` ({f.gate}, {f.kep}) | {stages} |")
    page = (REPO / "docs" / "native-workloads.md").read_text()
    table = page.split("generated by tests/test_native_workloads.py -->\n", 1)[1]
    assert table.split("\n<!-- end job-features -->", 1)[0] == "\n".join(rows)
    assert enabled_by_default("JobPodReplacementPolicy", (1, 29))
    assert not enabled_by_default("JobManagedBy", (1, 31))


def _edited(jobset: dict[str, Any], change: Any) -> dict[str, Any]:
    out = copy.deepcopy(jobset)
    change(out)
    return out


def _pod_of_first(jobset: dict[str, Any]) -> dict[str, Any]:
    pod: dict[str, Any] = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    return pod


@pytest.mark.parametrize(
    ("suspended", "change", "refused"),
    [
        (False, lambda j: j["metadata"].setdefault("labels", {}).update(team="a"), []),
        (
            False,
            lambda j: _pod_of_first(j)["spec"].update(nodeSelector={"a": "b"}),
            ["spec.replicatedJobs"],
        ),
        (True, lambda j: _pod_of_first(j)["spec"].update(nodeSelector={"a": "b"}), []),
        (True, lambda j: _pod_of_first(j)["spec"].update(hostname="x"), ["spec.replicatedJobs"]),
        (
            False,
            lambda j: j["spec"]["successPolicy"].update(operator="Any"),
            ["spec.successPolicy"],
        ),
        (False, lambda j: j["spec"].update(suspend=True), []),
    ],
    ids=[
        "labels",
        "node-selector",
        "node-selector-suspended",
        "hostname-suspended",
        "success",
        "suspend",
    ],
)
def test_what_a_jobset_update_may_change(
    rendered: dict[str, list[dict[str, Any]]], suspended: bool, change: Any, refused: list[str]
) -> None:
    """The JobSet webhook's ValidateUpdate and the CRD's immutability rules: plan replaces a
    JobSet whose edit they refuse (Flux, Argo CD and Pulumi then re-create it)."""
    jobset = copy.deepcopy(pick(rendered["jobset"], "JobSet", "py-full"))
    if suspended:
        jobset["spec"]["suspend"] = True
    assert [r.path for r in update_refusals(jobset, _edited(jobset, change))] == refused
    assert "kustomize.toolkit.fluxcd.io/force" in jobset["metadata"]["annotations"]
