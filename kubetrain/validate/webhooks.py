"""What an operator's validating webhook refuses when a custom resource is created: refusals
only a cluster running that operator makes, reported apart from the API server's own
(``Finding.who`` is ``webhook:<operator>``, the rule ``webhook``).

Mirrored from the source at the release kubetrain targets:

* JobSet v0.9.1, ``pkg/webhooks/jobset_webhook.go``: ``jobSetWebhook.Default`` then
  ``ValidateCreate`` (child Job and Pod names from ``placement.GenJobName`` /
  ``GenPodName`` are DNS-1035 labels, groupName, subdomain and managedBy, dependsOn,
  successPolicy and failurePolicy targets, failure rule names and reasons, the coordinator);
* the training operator v1.9.3, ``pkg/webhooks/<kind>/*_webhook.go`` (``validate<Kind>``: the
  name a DNS-1035 label, ``util.ValidateRunPolicy``'s managedBy, the replica types, their
  containers, images and default container, a single Master or Chief) for PyTorchJob, TFJob,
  XGBoostJob, PaddleJob and JAXJob: the rules are :mod:`kubetrain.models.webhooks`' (one
  function each, which loading a job calls too and words for the stack file), composed here in
  the webhook's order and words.

A webhook only sees what the API server's schema admitted, so objects with schema or API
findings are not given to it. The trainer's TrainJob webhook needs the runtime a job names;
kubetrain checks it where it knows the runtime (``render``), not here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import ValidationError

from ..kube import catalog
from ..kube.names import DNS1035_LABEL, DNS1123_SUBDOMAIN
from ..kube.regex import go_regex
from ..models import webhooks as rules
from ..models.base import JobDocument, job_kinds
from ..models.kinds import declarations
from ..models.kubeflow import KubeflowJob
from ..models.load.kueue_rules import cluster_queue_quota_problems

__all__ = ["Webhook", "webhook_problems"]

Path = tuple[str | int, ...]
Problem = tuple[Path, str]

JOBSET = "webhook:jobset"
TRAINING_OPERATOR = "webhook:training-operator"
KUEUE = "webhook:kueue"


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


# --- JobSet v0.9.1 -------------------------------------------------------------------------------

_JOB_FAILURE_REASONS = (
    "BackoffLimitExceeded",
    "DeadlineExceeded",
    "FailedIndexes",
    "MaxFailedIndexesExceeded",
    "PodFailurePolicy",
)
_RULE_NAME = "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
_TOO_LONG = "must be no more than 63 characters"
_HTTP_PATH = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"


def _domain_prefixed_path(value: str) -> list[str]:
    """apimachinery's ``validation.IsDomainPrefixedPath``: ``<DNS subdomain>/<HTTP path>``."""
    if not value:
        return ["Required value"]
    host, slash, rest = value.partition("/")
    if not slash or not host or not rest:
        return [f'Invalid value: "{value}": must be a domain-prefixed path (such as "acme.io/foo")']
    out = [f'Invalid value: "{host}": {p}' for p in [DNS1123_SUBDOMAIN.check(host)] if p]
    if not go_regex(_HTTP_PATH).fullmatch(rest):
        out.append(
            f"Invalid value: \"{rest}\": Invalid path (regex used for validation is '{_HTTP_PATH}')"
        )
    return out


def _dns1035(value: str, too_long: str | None = None) -> list[str]:
    """``validation.IsDNS1035Label``'s messages, the too-long one replaced as the webhook does."""
    problem = DNS1035_LABEL.check(value)
    if problem is None:
        return []
    if too_long is not None and len(value) > 63:
        return [too_long]
    return [problem]


def _jobset_defaulted(spec: Mapping[str, Any]) -> dict[str, Any]:
    """``jobSetWebhook.Default`` (what the validation then sees): Indexed Jobs, failure rules
    named ``failurePolicyRule<i>``."""
    out = dict(spec)
    jobs = []
    for rjob in _list(spec.get("replicatedJobs")):
        rjob = dict(_map(rjob))
        template = dict(_map(rjob.get("template")))
        job_spec = dict(_map(template.get("spec")))
        job_spec.setdefault("completionMode", "Indexed")
        template["spec"] = job_spec
        rjob["template"] = template
        rjob.setdefault("groupName", "default")
        jobs.append(rjob)
    out["replicatedJobs"] = jobs
    policy = spec.get("failurePolicy")
    if isinstance(policy, Mapping):
        rules = []
        for i, rule in enumerate(_list(policy.get("rules"))):
            rule = dict(_map(rule))
            if not rule.get("name"):
                rule["name"] = f"failurePolicyRule{i}"
            rules.append(rule)
        out["failurePolicy"] = {**policy, "rules": rules}
    return out


def jobset_problems(obj: Mapping[str, Any]) -> list[Problem]:
    """``jobSetWebhook.ValidateCreate`` after ``Default`` (JobSet v0.9.1)."""
    name = str(_map(obj.get("metadata")).get("name") or "")
    spec = _jobset_defaulted(_map(obj.get("spec")))
    jobs = spec["replicatedJobs"]
    out: list[Problem] = []
    if jobs and _map(jobs[0]).get("dependsOn") is not None:
        out.append(
            (
                ("spec", "replicatedJobs", 0, "dependsOn"),
                "DependsOn can't be set for the first ReplicatedJob",
            )
        )
    subdomain = _map(spec.get("network")).get("subdomain")
    path: Path
    if isinstance(subdomain, str) and subdomain:
        path = ("spec", "network", "subdomain")
        if problem := DNS1123_SUBDOMAIN.check(subdomain):
            out.append((path, problem))
        too_long = ".spec.network.subdomain is too long, must be less than 63 characters"
        out += [(path, m) for m in _dns1035(subdomain, too_long)]
    manager = spec.get("managedBy")
    if isinstance(manager, str):
        path = ("spec", "managedBy")
        out += [(path, m) for m in _domain_prefixed_path(manager)]
        if len(manager) > 63:
            out.append((path, "Too long: may not be more than 63 bytes"))
    names: set[str] = set()
    for i, rjob in enumerate(jobs):
        path = ("spec", "replicatedJobs", i)
        rname = str(rjob.get("name") or "")
        names.add(rname)
        replicas = _int(rjob.get("replicas"), 1)
        job_spec = _map(_map(rjob.get("template")).get("spec"))
        parallelism = _int(job_spec.get("parallelism"), 1)
        if parallelism * replicas > 2**31 - 1:
            out.append(
                (
                    path,
                    "the product of replicas and parallelism must not exceed "
                    f"2147483647 for replicatedJob '{rname}'",
                )
            )
        group = str(rjob.get("groupName") or "")
        too_long = ".spec.replicatedJob[].groupName is too long, must be less than 63 characters"
        out += [((*path, "groupName"), m) for m in _dns1035(group, too_long)]
        longest_job = f"{name}-{rname}-{replicas - 1}"  # placement.GenJobName
        too_long = (
            "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
        )
        out += [((*path, "name"), m) for m in _dns1035(longest_job, too_long)]
        completions = job_spec.get("completions")
        if job_spec.get("completionMode") == "Indexed" and isinstance(completions, int):
            # placement.GenPodName plus the 5 characters of a Pod's random suffix.
            longest_pod = f"{name}-{rname}-{replicas - 1}-{completions - 1}-abcde"
            too_long = (
                "JobSet name is too long, pod names generated for this JobSet will exceed 63 "
                "characters"
            )
            out += [((*path, "name"), m) for m in _dns1035(longest_pod, too_long)]
        for dep in _list(rjob.get("dependsOn")):
            dep_name = _map(dep).get("name")
            if dep_name not in names:
                out.append(
                    (
                        (*path, "dependsOn"),
                        f"replicatedJob: {rname} cannot depend on replicatedJob: {dep_name}",
                    )
                )
    success = _map(spec.get("successPolicy"))
    for target in _list(success.get("targetReplicatedJobs")):
        if target not in names:
            out.append(
                (
                    ("spec", "successPolicy", "targetReplicatedJobs"),
                    f"invalid replicatedJob name '{target}' does not appear in "
                    ".spec.ReplicatedJobs",
                )
            )
    out += _failure_policy(spec.get("failurePolicy"), names)
    coordinator = spec.get("coordinator")
    if isinstance(coordinator, Mapping) and (problem := _coordinator(coordinator, jobs)):
        out.append((("spec", "coordinator"), problem))
    return out


def _failure_policy(policy: Any, names: set[str]) -> list[Problem]:
    """``validateFailurePolicy``."""
    out: list[Problem] = []
    if not isinstance(policy, Mapping):
        return out
    by_name: dict[str, list[int]] = {}
    for i, rule in enumerate(_list(policy.get("rules"))):
        rule = _map(rule)
        path = ("spec", "failurePolicy", "rules", i)
        rule_name = str(rule.get("name") or "")
        if not 1 <= len(rule_name) <= 128:
            out.append(
                (
                    (*path, "name"),
                    f"invalid failure policy rule name of length "
                    f"{len(rule_name)}, the rule name must be at least 1 characters long "
                    "and at most 128 characters long",
                )
            )
        by_name.setdefault(rule_name, []).append(i)
        if not go_regex(_RULE_NAME).search(rule_name):
            out.append(
                (
                    (*path, "name"),
                    f"invalid failure policy rule name '{rule_name}', a "
                    "failure policy rule name must start with an alphabetic character, "
                    "optionally followed by a string of alphanumeric characters or '_,:', "
                    "and must end with an alphanumeric character or '_'",
                )
            )
        for target in _list(rule.get("targetReplicatedJobs")):
            if target not in names:
                out.append(
                    (
                        (*path, "targetReplicatedJobs"),
                        f"invalid replicatedJob name "
                        f"'{target}' in failure policy does not appear in "
                        ".spec.ReplicatedJobs",
                    )
                )
        for reason in _list(rule.get("onJobFailureReasons")):
            if reason not in _JOB_FAILURE_REASONS:
                out.append(
                    (
                        (*path, "onJobFailureReasons"),
                        f"invalid job failure reason "
                        f"'{reason}' in failure policy is not a recognized job failure "
                        "reason",
                    )
                )
    for rule_name, indices in sorted(by_name.items()):
        if len(indices) > 1:
            shown = "[" + " ".join(map(str, indices)) + "]"
            out.append(
                (
                    ("spec", "failurePolicy", "rules"),
                    f"rule names are not unique, rules "
                    f"with indices {shown} all have the same name '{rule_name}'",
                )
            )
    return out


def _coordinator(coordinator: Mapping[str, Any], jobs: list[dict[str, Any]]) -> str | None:
    """``validateCoordinator``."""
    wanted = coordinator.get("replicatedJob")
    rjob = next((j for j in jobs if j.get("name") == wanted), None)
    if rjob is None:
        return f"coordinator replicatedJob {wanted} does not exist"
    job_index = _int(coordinator.get("jobIndex"), 0)
    if not 0 <= job_index < _int(rjob.get("replicas"), 1):
        return f"coordinator job index {job_index} is invalid for replicatedJob {rjob['name']}"
    job_spec = _map(_map(rjob.get("template")).get("spec"))
    completions = job_spec.get("completions")
    if job_spec.get("completionMode") != "Indexed" or not isinstance(completions, int):
        return (
            "job for coordinator pod must be indexed completion mode, and completions number "
            "must be set"
        )
    pod_index = _int(coordinator.get("podIndex"), 0)
    if not 0 <= pod_index < completions:
        return (
            f"coordinator pod index {pod_index} is invalid for replicatedJob {wanted} job index "
            f"{job_index}"
        )
    return None


# --- the training operator v1.9.3 ----------------------------------------------------------------


@cache
def _kubeflow_kinds() -> dict[str, type[KubeflowJob]]:
    """The training operator's kinds, whose facts (replica-spec key and types, default
    container, the types that must have one replica or be present) their models declare."""
    return {
        kind: cls
        for (api_version, kind), cls in job_kinds().items()
        if api_version == "kubeflow.org/v1" and issubclass(cls, KubeflowJob)
    }


def kubeflow_problems(obj: Mapping[str, Any]) -> list[Problem]:
    """``validate<Kind>`` of the kind's webhook (training operator v1.9.3) on create: the rules
    of :mod:`kubetrain.models.webhooks`, in the webhook's order and words."""
    kind = str(obj.get("kind"))
    model = _kubeflow_kinds()[kind]
    key, masters = model.REPLICA_SPECS_KEY, model.SINGLE_TYPES
    container = model.replica_spec_model().DEFAULT_CONTAINER
    # TFJob's webhook checks no type names (its controller normalises their case).
    types = None if model.ANY_CASE_TYPES else model.REPLICA_TYPES
    found: list[rules.Refusal] = [
        *rules.name_label(str(_map(obj.get("metadata")).get("name") or ""))
    ]
    spec = _map(obj.get("spec"))
    if kind != "JAXJob":  # validateJAXJob is the one that does not call util.ValidateRunPolicy
        found += rules.managed_by(_map(spec.get("runPolicy")).get("managedBy"))
    specs = spec.get(key)
    if not isinstance(specs, Mapping):
        found.append(rules.Refusal(("spec", key), "Required value: must be required"))
        return [(r.path, r.message) for r in found]
    if kind == "PyTorchJob" and spec.get("elasticPolicy") is not None:
        found += rules.elastic_worker(("spec", key), specs)
        found += rules.elastic_nproc(
            _map(spec.get("elasticPolicy")).get("nProcPerNode"), spec.get("nprocPerNode")
        )
    for rtype, rspec in sorted(specs.items()):
        path = ("spec", key, rtype)
        containers_path = (*path, "template", "spec", "containers")
        if types is not None:
            found += rules.replica_type(path, rtype, types)
        containers = _list(_map(_map(_map(rspec).get("template")).get("spec")).get("containers"))
        found += rules.containers_specified(containers_path, containers)
        found += rules.container_images(containers_path, containers)
        found += rules.default_container(
            containers_path, containers, container, quoted=kind == "PaddleJob"
        )
        replicas = _map(rspec).get("replicas")
        if rtype in masters:
            found += rules.single_replica(path, replicas)
        elif kind == "PyTorchJob":
            found += rules.replica_count(path, replicas)
    if kind == "TFJob":
        found += rules.chief_or_master(("spec", key), specs)
    found += rules.required_types(("spec", key), specs, model.REQUIRED_TYPES)
    return [(r.path, r.message) for r in found]


def admission_check(document: type[JobDocument]) -> Callable[[Mapping[str, Any]], list[Problem]]:
    """The admission of a declared kind whose model states it (``admission_problems``, the
    rules load time applies too): the object read as the model; an object its schema refuses is
    the schema's finding (the admission never sees it)."""

    def check(obj: Mapping[str, Any]) -> list[Problem]:
        doc = dict(obj)
        meta = _map(doc.get("metadata"))
        doc["metadata"] = {**meta, "namespace": meta.get("namespace") or "default"}
        try:
            job = document.model_validate(doc)
        except (ValidationError, TypeError, ValueError):
            return []
        return job.admission_problems()

    return check


@dataclass(frozen=True)
class Webhook:
    """An operator's validating webhook, attached to the row of each kind it admits: who
    refuses (``webhook:<operator>``), the versions it serves, and its refusals of a new
    object."""

    origin: str
    versions: tuple[str, ...]
    check: Callable[[Mapping[str, Any]], list[Problem]]


def _attach() -> None:
    catalog.attach(catalog.JOB_SET, "webhook", Webhook(JOBSET, ("v1alpha2",), jobset_problems))
    # A declared kind whose model states its operator's admission (Volcano's Job).
    for found in declarations():
        cls = found.document
        if cls.WEBHOOK and found.expanded_as is None:
            version = cls.API_VERSION.rpartition("/")[2]
            hook = Webhook(f"webhook:{cls.WEBHOOK}", (version,), admission_check(cls))
            catalog.attach(catalog.GroupKind.parse(cls.API_VERSION, cls.KIND), "webhook", hook)
    for kind in _kubeflow_kinds():
        hook = Webhook(TRAINING_OPERATOR, ("v1",), kubeflow_problems)
        catalog.attach(("kubeflow.org", kind), "webhook", hook)
    # Kueue v0.19.2's ClusterQueue webhook: the quotas (what render refuses at load too).
    hook = Webhook(KUEUE, ("v1beta1", "v1beta2"), cluster_queue_quota_problems)
    catalog.attach(("kueue.x-k8s.io", "ClusterQueue"), "webhook", hook)


_attach()


def webhook_problems(obj: Any) -> Iterator[tuple[str, Path, str]]:
    """(origin, path, message) of each refusal of the webhook that admits ``obj``, if any."""
    if not isinstance(obj, Mapping):
        return
    hook: Webhook | None = catalog.of(obj).attached.get("webhook")
    if hook is None or str(obj.get("apiVersion")).rpartition("/")[2] not in hook.versions:
        return
    for path, message in hook.check(obj):
        yield hook.origin, path, message
