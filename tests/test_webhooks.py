"""Who refuses: operators' validating webhooks (kubetrain/validate/webhooks.py) reported apart
from the API server's own refusals, and the origin of every finding in validate's reports."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubetrain.models import InputError, load_job
from kubetrain.models import webhooks as rules
from kubetrain.models.errors import format_path
from kubetrain.validate import Located, Validator
from kubetrain.validate.webhooks import jobset_problems, kubeflow_problems, webhook_problems

TEMPLATE = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i:1"}]}}}}


def jobset(**spec: Any) -> dict[str, Any]:
    base = {
        "replicatedJobs": [
            {"name": "driver", "replicas": 1, "template": copy.deepcopy(TEMPLATE)},
            {"name": "workers", "replicas": 2, "template": copy.deepcopy(TEMPLATE)},
        ]
    }
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {**base, **spec},
    }


def messages(found: list[tuple[Any, str]]) -> list[str]:
    return [".".join(map(str, path)) + ": " + message for path, message in found]


def test_a_valid_jobset_passes_the_webhook() -> None:
    assert jobset_problems(jobset(successPolicy={"operator": "All"})) == []


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"successPolicy": {"operator": "All", "targetReplicatedJobs": ["nope"]}},
            "spec.successPolicy.targetReplicatedJobs: invalid replicatedJob name 'nope' does "
            "not appear in .spec.ReplicatedJobs",
        ),
        (
            {"failurePolicy": {"rules": [{"name": "fail-fast", "action": "FailJobSet"}]}},
            "spec.failurePolicy.rules.0.name: invalid failure policy rule name 'fail-fast'",
        ),
        (
            {"failurePolicy": {"rules": [{"action": "FailJobSet", "onJobFailureReasons": ["X"]}]}},
            "spec.failurePolicy.rules.0.onJobFailureReasons: invalid job failure reason 'X'",
        ),
        (
            {
                "failurePolicy": {
                    "rules": [
                        {"name": "same", "action": "FailJobSet"},
                        {"name": "same", "action": "RestartJobSet"},
                    ]
                }
            },
            "spec.failurePolicy.rules: rule names are not unique, rules with indices [0 1] all "
            "have the same name 'same'",
        ),
        (
            {"network": {"subdomain": "Bad_Sub"}},
            "spec.network.subdomain: 'Bad_Sub' is not a valid DNS-1123 subdomain",
        ),
        (
            {"coordinator": {"replicatedJob": "workers", "jobIndex": 5}},
            "spec.coordinator: coordinator job index 5 is invalid for replicatedJob workers",
        ),
        ({"managedBy": "nodomain"}, 'spec.managedBy: Invalid value: "nodomain": must be a '),
    ],
    ids=[
        "success-target",
        "rule-name",
        "failure-reason",
        "rule-names-unique",
        "subdomain",
        "coordinator",
        "managed-by",
    ],
)
def test_the_jobset_webhook_refuses(spec: dict[str, Any], expected: str) -> None:
    found = messages(jobset_problems(jobset(**spec)))
    assert any(f.startswith(expected) for f in found), found


def test_jobset_names_of_children_are_dns_labels() -> None:
    long = jobset()
    long["metadata"]["name"] = "x" * 60
    assert messages(jobset_problems(long)) == [
        "spec.replicatedJobs.0.name: JobSet name is too long, job names generated for this "
        "JobSet will exceed 63 characters",
        "spec.replicatedJobs.1.name: JobSet name is too long, job names generated for this "
        "JobSet will exceed 63 characters",
    ]
    depends = jobset()
    depends["spec"]["replicatedJobs"][1]["dependsOn"] = [{"name": "later", "status": "Ready"}]
    assert messages(jobset_problems(depends)) == [
        "spec.replicatedJobs.1.dependsOn: replicatedJob: workers cannot depend on "
        "replicatedJob: later"
    ]


def pytorchjob(**replicas: Any) -> dict[str, Any]:
    container = {"name": "pytorch", "image": "torch:2"}
    specs = {
        rtype: {"replicas": n, "template": {"spec": {"containers": [dict(container)]}}}
        for rtype, n in replicas.items()
    }
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "mnist", "namespace": "ml"},
        "spec": {"pytorchReplicaSpecs": specs},
    }


def test_the_training_operator_webhook() -> None:
    assert kubeflow_problems(pytorchjob(Master=1, Worker=2)) == []
    assert messages(kubeflow_problems(pytorchjob(Master=2, Chief=1))) == [
        'spec.pytorchReplicaSpecs.Chief: Unsupported value: "Chief": supported values: '
        '"Master", "Worker"',
        "spec.pytorchReplicaSpecs.Master.replicas: Forbidden: must be 1",
    ]
    unnamed = pytorchjob(Worker=1)
    unnamed["metadata"]["name"] = "Mnist"
    unnamed["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0] = {
        "name": "main"
    }
    found = messages(kubeflow_problems(unnamed))
    assert found[0].startswith("metadata.name: should match: 'Mnist' is not a valid DNS-1035")
    assert found[1:] == [
        "spec.pytorchReplicaSpecs.Worker.template.spec.containers.0.image: Required value: "
        "must be required",
        "spec.pytorchReplicaSpecs.Worker.template.spec.containers: Required value: must have at "
        "least one container with name pytorch",
    ]


# --- findings say who refuses ---------------------------------------------------------------


def test_webhook_findings_are_apart_from_the_api_servers(tmp_path: Path, run) -> None:
    refused = jobset(successPolicy={"operator": "All", "targetReplicatedJobs": ["nope"]})
    broken = jobset()
    broken["spec"]["replicatedJobs"][0]["replicas"] = "two"  # the CRD's schema refuses it
    (tmp_path / "js.yaml").write_text(yaml.safe_dump_all([refused, broken]))
    text = run("validate", "js.yaml", cwd=tmp_path)
    assert text.exit_code == 1
    assert (
        "spec.successPolicy.targetReplicatedJobs: invalid replicatedJob name 'nope' does not "
        "appear in .spec.ReplicatedJobs (webhook:jobset)" in text.stdout
    )
    report = json.loads(run("validate", "js.yaml", "--output", "json", cwd=tmp_path).stdout)
    origins = [[e["origin"] for e in r.get("validationErrors", [])] for r in report["resources"]]
    # The object the schema refuses never reaches the webhook (admission order).
    assert origins[0] == ["webhook:jobset"]
    assert "api-server" in origins[1] and "webhook:jobset" not in origins[1]


def test_every_finding_has_an_origin(tmp_path: Path, run) -> None:
    docs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad"}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "dg=="}},
        {"apiVersion": "example.com/v1", "kind": "Unknown", "metadata": {"name": "u"}},
    ]
    (tmp_path / "all.yaml").write_text(yaml.safe_dump_all(docs))
    report = json.loads(run("validate", "all.yaml", "--output", "json", cwd=tmp_path).stdout)
    found = {
        (e["rule"], e["origin"])
        for r in report["resources"]
        for key in ("validationErrors", "warnings")
        for e in r.get(key, [])
    }
    assert found == {
        ("api", "api-server"),
        ("secret-data", "kubetrain"),
        ("schema-missing", "input"),
    }


def test_webhooks_see_only_what_the_server_admitted() -> None:
    validator = Validator((1, 36))
    bad = jobset(successPolicy={"operator": "All", "targetReplicatedJobs": ["nope"]})
    bad["metadata"]["name"] = "UPPER"
    result = validator.check(Located(bad, "x.yaml"))
    assert {f.who for f in result.findings} == {"api-server"}
    assert list(webhook_problems({"apiVersion": "v1", "kind": "ConfigMap"})) == []


# --- one rule, two wordings -----------------------------------------------------------------


def _replicas(kind: str, key: str, container: str, **replicas: Any) -> dict[str, Any]:
    job = pytorchjob(**replicas)
    job["kind"] = kind
    specs = job["spec"].pop("pytorchReplicaSpecs")
    for spec in specs.values():
        spec["template"]["spec"]["containers"][0]["name"] = container
    job["spec"][key] = specs
    return job


def _elastic(**spec: Any) -> dict[str, Any]:
    job = pytorchjob(Master=1, **({"Worker": 2} if "nprocPerNode" in spec else {}))
    job["spec"].update(spec)
    return job


#: Each rule load time words for the stack file and validate words as the webhook does, with a
#: job it refuses (container_images too, though at load time the API server's own rule on the
#: embedded pod template refuses a container without an image first).
SHARED = [
    ("default_container", _replicas("PyTorchJob", "pytorchReplicaSpecs", "main", Worker=1)),
    ("single_replica", pytorchjob(Master=2, Worker=1)),
    ("replica_count", pytorchjob(Master=1, Worker=0)),
    ("elastic_worker", _elastic(elasticPolicy={"minReplicas": 1, "maxReplicas": 2})),
    ("elastic_nproc", _elastic(elasticPolicy={"nProcPerNode": 2}, nprocPerNode="2")),
    ("chief_or_master", _replicas("TFJob", "tfReplicaSpecs", "tensorflow", Chief=1, Master=1)),
    ("required_types", _replicas("XGBoostJob", "xgbReplicaSpecs", "xgboost", Worker=1)),
]


@pytest.mark.parametrize(("rule", "job"), SHARED, ids=[rule for rule, _ in SHARED])
def test_load_time_and_the_webhook_run_one_rule(
    rule: str, job: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both refuse the job by the one function of kubetrain.models.webhooks: without it,
    neither does."""

    def loaded() -> list[str]:
        try:
            load_job(job, file="job.yaml")
        except InputError as exc:
            return [f"{format_path(p.path)}: {p.message}" for p in exc.problems]
        return []

    by_webhook, at_load = messages(kubeflow_problems(job)), loaded()
    assert by_webhook and at_load, (by_webhook, at_load)
    monkeypatch.setattr(rules, rule, lambda *args, **kwargs: iter(()))
    assert messages(kubeflow_problems(job)) == [] and loaded() == []
