"""Which edits the API server refuses to make in place, per kind, after its update validation.

:func:`update_refusals` takes an object as it is applied now and as it would be applied next
(both as kubetrain renders them) and returns what kube-apiserver's ``Validate<Kind>Update``
would refuse, each :class:`Refusal` naming the field. A refusal that is ``replaceable`` is an
immutable field: deleting the object and creating it again applies the edit (what ``pulumi up``
does, and what Flux's ``kustomize.toolkit.fluxcd.io/force`` and Argo CD's
``Force=true,Replace=true`` do). One that is not is an object the server refuses however it
is sent.

Kinds and the upstream functions they follow (``k8s.io/kubernetes/pkg/apis/<group>/validation``):

- Pod, ``ValidatePodUpdate``: in the spec only container images, activeDeadlineSeconds (set, or
  lowered), added tolerations, removed schedulingGates and terminationGracePeriodSeconds
  (negative to 1) may change.
- Job, ``ValidateJobSpecUpdate``: selector, template (unless the Job is suspended: then its
  scheduling directives may change), completions (unless an elastic Indexed Job),
  completionMode, podFailurePolicy, successPolicy, backoffLimitPerIndex and managedBy.
- StatefulSet, ``ValidateStatefulSetUpdate``: everything in the spec but replicas, ordinals,
  template, updateStrategy, revisionHistoryLimit, persistentVolumeClaimRetentionPolicy and
  minReadySeconds; and a switch to OnDelete that keeps the live object's defaulted
  rollingUpdate.
- ReplicaSet and Deployment, ``ValidateReplicaSetUpdate`` / ``ValidateDeploymentUpdate``: the
  selector (apps/v1).
- Service, ``ValidateServiceUpdate``: clusterIP(s) and the primary IP family, unless the Service
  becomes or stops being an ExternalName; loadBalancerClass between LoadBalancer Services;
  healthCheckNodePort while one is needed; then ``ValidateService`` of the result (a headless
  Service is a ClusterIP one).
- ResourceQuota, ``ValidateResourceQuotaUpdate``: the set of scopes.
- RoleBinding and ClusterRoleBinding, ``ValidateRoleBindingUpdate`` /
  ``ValidateClusterRoleBindingUpdate``: roleRef.
- Secret and ConfigMap, ``ValidateSecretUpdate`` / ``ValidateConfigMapUpdate``: a Secret's type,
  and everything once ``immutable: true``.
- PersistentVolumeClaim, ``ValidatePersistentVolumeClaimUpdate``: the spec but the storage
  requests (expansion) and volumeAttributesClassName.
- Namespace, the PodSecurity admission plugin: Pod Security labels whose value is not a level or
  version, unless they were already so.
- CustomResourceDefinition, ``ValidateCustomResourceDefinitionSpecUpdate`` (apiextensions):
  group, names.plural, and once established scope and names.kind.
- JobSet, a custom resource whose own webhook and CRD rules refuse edits: replicatedJobs (but
  the pod templates' scheduling fields while suspended), managedBy, successPolicy,
  failurePolicy, network and startupPolicy.

- TrainJob (Kubeflow Trainer v2.3.0, the CRD's ``self == oldSelf`` rules,
  ``manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml``): runtimeRef, trainer,
  initializer, managedBy and activeDeadlineSeconds; in a runtime patch (matched by its
  manager) the manager and the pod templates' containers, init containers, volumes, image pull
  secrets, security context, service account and termination grace period.
- PyTorchJob (training-operator v1.9.0 CRD): runPolicy.schedulingPolicy.queue.
- LocalQueue (Kueue v0.19.2 CRD): clusterQueue.
- Kueue's webhooks (v0.19.2, ``pkg/controller/jobframework/validation.go``
  ``validateUpdateForQueueName``), for every kind Kueue manages (Job, JobSet, StatefulSet, the
  Kubeflow jobs, MPIJob, TrainJob): the ``kueue.x-k8s.io/queue-name`` label may change only
  while the job is suspended. Only a cluster running Kueue refuses it; kubetrain assumes one
  where the new object names a queue.

Every other kind (ServiceAccount, Role, other custom resources...) changes in place.
``metadata.name`` and ``namespace`` name the object, so a change of them is another object (a
delete and an add), not an update.

The comparison is semantic, as ``apiequality.Semantic.DeepEqual`` on the decoded objects: both
sides are put in stored form first (``cpu: 1`` equals ``cpu: "1"``), and an absent field equals
its zero value. A field kubetrain does not write that the server defaults is compared with its
default where it is immutable (a StatefulSet's podManagementPolicy, a Service's type...).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from . import catalog
from .apiserver.core import pod_security_label_problems
from .paths import first_difference, semantic_equal
from .quantity import parse_quantity
from .stored import stored_form

__all__ = [
    "API_SERVER",
    "JOBSET_WEBHOOK",
    "Refusal",
    "queue_name",
    "replacement_field",
    "update_refusals",
]

Obj = Mapping[str, Any]
#: Origins of a refusal.
API_SERVER = "API server"
JOBSET_WEBHOOK = "JobSet webhook"
KUEUE_WEBHOOK = "Kueue webhook"
#: The label a job names its Kueue LocalQueue with.
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


@dataclass(frozen=True)
class Refusal:
    """One thing the API server refuses in an update: the field and why."""

    path: str
    message: str
    #: Whether deleting and re-creating the object applies the edit (an immutable field).
    replaceable: bool = True
    #: Who refuses it: the API server (its validation, a CRD's rules, an admission plugin it
    #: runs by default) or a named webhook, which only a cluster running that operator has.
    origin: str = API_SERVER

    def __str__(self) -> str:
        who = "" if self.origin == API_SERVER else f" ({self.origin})"
        return f"{self.path}: {self.message}{who}"


IMMUTABLE = "field is immutable"


def _get(obj: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(part)
    return obj


def _map(obj: Any, path: str) -> Mapping[str, Any]:
    """The mapping at ``path``, or an empty one (absent, or not a mapping: a ``spec: 1.5`` the
    schema check reports)."""
    value = _get(obj, path)
    return value if isinstance(value, Mapping) else {}


def _immutable(before: Obj, after: Obj, *paths: str, default: Any = None) -> list[Refusal]:
    """A refusal for each of ``paths`` whose value changed (``default`` stands for absent or
    empty: the server's defaulting of an empty string, ``SetDefaults_Secret``'s type)."""
    out = []
    for path in paths:
        old, new = _get(before, path), _get(after, path)
        if default is not None:
            old = default if old in (None, "") else old
            new = default if new in (None, "") else new
        if not semantic_equal(old, new):
            out.append(Refusal(path, IMMUTABLE))
    return out


# --- Pod --------------------------------------------------------------------------------------

_POD_UPDATABLE = (
    "pod updates may not change fields other than spec.containers[*].image, "
    "spec.initContainers[*].image, spec.activeDeadlineSeconds, spec.tolerations (only additions "
    "to existing tolerations), spec.schedulingGates (only removals) and "
    "spec.terminationGracePeriodSeconds (from a negative value to 1)"
)


def _pod(before: Obj, after: Obj) -> list[Refusal]:
    """``ValidatePodUpdate``: munge every field the update may change back to its old value and
    require the rest of the spec to be equal."""
    old = dict(_map(before, "spec"))
    new = dict(_map(after, "spec"))
    out: list[Refusal] = []
    for field in ("containers", "initContainers"):
        # A list of the wrong type is the schema's finding; compared as a value below.
        old_c, new_c = old.get(field) or [], new.get(field) or []
        if not isinstance(old_c, list) or not isinstance(new_c, list):
            continue
        if len(old_c) != len(new_c):
            # ValidateContainerUpdates: containers may not be added or removed.
            return [Refusal(f"spec.{field}", "pod updates may not add or remove containers")]
        new[field] = [
            {**n, "image": o.get("image")}
            if isinstance(n, Mapping) and isinstance(o, Mapping)
            else n
            for o, n in zip(old_c, new_c, strict=True)
        ]
    # activeDeadlineSeconds: set from none, or lowered; never raised or removed.
    old_deadline, new_deadline = old.get("activeDeadlineSeconds"), new.get("activeDeadlineSeconds")
    if new_deadline is None and old_deadline is not None:
        out.append(
            Refusal(
                "spec.activeDeadlineSeconds",
                "must not update from a positive integer to nil value",
                replaceable=True,
            )
        )
    elif new_deadline is not None and old_deadline is not None and new_deadline > old_deadline:
        out.append(
            Refusal("spec.activeDeadlineSeconds", "must be less than or equal to previous value")
        )
    new["activeDeadlineSeconds"] = old_deadline
    # validateOnlyAddedTolerations: every old toleration stays.
    old_tolerations = old.get("tolerations") or []
    new_tolerations = new.get("tolerations") or []
    if any(t not in new_tolerations for t in old_tolerations):
        out.append(Refusal("spec.tolerations", "existing toleration can not be modified"))
    new["tolerations"] = old_tolerations
    # validateOnlyDeletedSchedulingGates: gates may only be removed.
    old_gates = old.get("schedulingGates") or []
    old_names = {g.get("name") for g in old_gates if isinstance(g, Mapping)}
    added: dict[Any, int] = {}
    for i, gate in enumerate(new.get("schedulingGates") or []):
        added[gate.get("name") if isinstance(gate, Mapping) else None] = i
    for name, i in added.items():
        if name not in old_names:
            out.append(
                Refusal(
                    f"spec.schedulingGates[{i}].name",
                    f"only deletion is allowed, but found new scheduling gate '{name}'",
                )
            )
    new["schedulingGates"] = old_gates
    grace_old, grace_new = (
        old.get("terminationGracePeriodSeconds"),
        new.get("terminationGracePeriodSeconds"),
    )
    if isinstance(grace_old, int) and grace_old < 0 and grace_new == 1:
        new["terminationGracePeriodSeconds"] = grace_old
    changed = first_difference(old, new, "spec")
    if changed is not None:
        out.append(Refusal(changed, _POD_UPDATABLE))
    return out


# --- batch ------------------------------------------------------------------------------------

#: What a suspended Job that never started may change in its template
#: (``JobValidationOptions.AllowMutableSchedulingDirectives``).
_SCHEDULING_DIRECTIVES = (
    ("metadata", "labels"),
    ("metadata", "annotations"),
    ("spec", "nodeSelector"),
    ("spec", "affinity"),
    ("spec", "tolerations"),
    ("spec", "schedulingGates"),
)


def _job(before: Obj, after: Obj) -> list[Refusal]:
    """``ValidateJobSpecUpdate``."""
    out = _immutable(before, after, "spec.selector")
    old_template = copy.deepcopy(dict(_map(before, "spec.template")))
    new_template = copy.deepcopy(dict(_map(after, "spec.template")))
    if _get(before, "spec.suspend") is True:
        for part, key in _SCHEDULING_DIRECTIVES:
            old_part = old_template.setdefault(part, {})
            new_template.setdefault(part, {})[key] = old_part.get(key)
    changed = first_difference(old_template, new_template, "spec.template")
    if changed is not None:
        out.append(Refusal("spec.template", f"{IMMUTABLE} ({changed} changed)"))
    old_completions, new_completions = (
        _get(before, "spec.completions"),
        _get(after, "spec.completions"),
    )
    elastic = (
        _get(after, "spec.completionMode") == "Indexed"
        and new_completions == _get(after, "spec.parallelism")
        and old_completions == _get(before, "spec.parallelism")
    )
    if old_completions != new_completions and not elastic:
        out.append(Refusal("spec.completions", IMMUTABLE))
    out += _immutable(before, after, "spec.completionMode", default="NonIndexed")
    out += _immutable(
        before,
        after,
        "spec.podFailurePolicy",
        "spec.successPolicy",
        "spec.backoffLimitPerIndex",
        "spec.managedBy",
    )
    return out


# --- apps -------------------------------------------------------------------------------------

#: ``ValidateStatefulSetUpdate``: the only spec fields an update may change.
_STATEFULSET_UPDATABLE = frozenset(
    {
        "replicas",
        "ordinals",
        "template",
        "updateStrategy",
        "revisionHistoryLimit",
        "persistentVolumeClaimRetentionPolicy",
        "minReadySeconds",
    }
)
_STATEFULSET_DEFAULTS = {"podManagementPolicy": "OrderedReady"}


def _statefulset(before: Obj, after: Obj) -> list[Refusal]:
    old = {**_STATEFULSET_DEFAULTS, **_map(before, "spec")}
    new = {**_STATEFULSET_DEFAULTS, **_map(after, "spec")}
    out = []
    for key in sorted((set(old) | set(new)) - _STATEFULSET_UPDATABLE):
        changed = first_difference(old.get(key), new.get(key), f"spec.{key}")
        if changed is not None:
            out.append(
                Refusal(
                    changed,
                    "updates to statefulset spec for fields other than "
                    + ", ".join(sorted(_STATEFULSET_UPDATABLE))
                    + " are forbidden",
                )
            )
    return out + _defaulted_rolling_update(before, after)


def _defaulted_rolling_update(before: Obj, after: Obj) -> list[Refusal]:
    """A live StatefulSet whose manifest leaves ``updateStrategy.rollingUpdate`` out got it from
    the server's defaults (``SetDefaults_StatefulSet``: ``partition: 0`` under RollingUpdate),
    owned by no field manager: server-side apply of a manifest switching to ``OnDelete`` keeps
    it, and ``ValidateStatefulSetSpec`` refuses a rollingUpdate under OnDelete. Written in the
    manifest before, it is the manager's and goes with it. A new object applies cleanly."""
    old = _get(before, "spec.updateStrategy") or {}
    new = _get(after, "spec.updateStrategy") or {}
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return []
    if (old.get("type") or "RollingUpdate") != "RollingUpdate" or "rollingUpdate" in old:
        return []
    if new.get("type") != "OnDelete" or "rollingUpdate" in new:
        return []
    return [
        Refusal(
            "spec.updateStrategy.rollingUpdate",
            "only allowed for updateStrategy 'RollingUpdate' (the live object's default "
            "{partition: 0}, which server-side apply keeps)",
        )
    ]


def _selector(before: Obj, after: Obj) -> list[Refusal]:
    """``ValidateReplicaSetUpdate`` / ``ValidateDeploymentUpdate`` (apps/v1)."""
    return _immutable(before, after, "spec.selector")


# --- core -------------------------------------------------------------------------------------


def _service(before: Obj, after: Obj) -> list[Refusal]:
    """``ValidateServiceUpdate``: clusterIPs may not change unless the Service becomes or stops
    being an ExternalName; then ``ValidateService`` of the result, of which kubetrain mirrors
    the rule an edit of a headless Service can break."""
    out = []
    old_type = _get(before, "spec.type") or "ClusterIP"
    new_type = _get(after, "spec.type") or "ClusterIP"
    if "ExternalName" not in (old_type, new_type):
        for path in ("spec.clusterIP", "spec.clusterIPs"):
            old, new = _get(before, path), _get(after, path)
            # A field the applier never set keeps the allocated value: not a change.
            if old is not None and new is not None and not semantic_equal(old, new):
                out.append(Refusal(path, "may not change once set"))
        # validateUpgradeDowngradeIPFamilies: the primary family stays (headless Services and
        # a switch to or from headless excepted); a family the applier never set is kept.
        old_families, new_families = _get(before, "spec.ipFamilies"), _get(after, "spec.ipFamilies")
        headless = (
            _get(before, "spec.clusterIP") == "None",
            _get(after, "spec.clusterIP") == "None",
        )
        if (
            not any(headless)
            and isinstance(old_families, list)
            and isinstance(new_families, list)
            and old_families
            and new_families
            and old_families[0] != new_families[0]
        ):
            out.append(Refusal("spec.ipFamilies[0]", "may not change once set"))
    if old_type == new_type == "LoadBalancer" and not semantic_equal(
        _get(before, "spec.loadBalancerClass"), _get(after, "spec.loadBalancerClass")
    ):
        # validateLoadBalancerClassField
        out.append(Refusal("spec.loadBalancerClass", "may not change once set"))
    if _needs_health_check(before) and _needs_health_check(after):
        # validateServiceExternalTrafficFieldsUpdate; an unset port is the allocated one.
        old_port, new_port = (
            _get(before, "spec.healthCheckNodePort"),
            _get(after, "spec.healthCheckNodePort"),
        )
        if old_port is not None and new_port is not None and old_port != new_port:
            out.append(Refusal("spec.healthCheckNodePort", "field is immutable"))
    if _get(after, "spec.clusterIP") == "None" and new_type in ("LoadBalancer", "NodePort"):
        out.append(
            Refusal(
                "spec.clusterIP",
                f"may not be set to 'None' for {new_type} services",
                replaceable=False,
            )
        )
    return out


def _needs_health_check(service: Obj) -> bool:
    """``apiservice.NeedsHealthCheck``: a LoadBalancer Service with externalTrafficPolicy Local."""
    return bool(
        _get(service, "spec.type") == "LoadBalancer"
        and _get(service, "spec.externalTrafficPolicy") == "Local"
    )


def _secret(before: Obj, after: Obj) -> list[Refusal]:
    """``ValidateSecretUpdate``: the type, and everything once immutable."""
    out = _immutable(before, after, "type", default="Opaque")
    return out + _immutable_data(before, after)


def _immutable_data(before: Obj, after: Obj) -> list[Refusal]:
    """``immutable: true`` Secrets and ConfigMaps: data may not change, nor may immutable be
    unset (``ValidateSecretUpdate``, ``ValidateConfigMapUpdate``)."""
    if _get(before, "immutable") is not True:
        return []
    out = []
    if _get(after, "immutable") is not True:
        out.append(Refusal("immutable", "field is immutable when `immutable` is set"))
    for path in ("data", "stringData", "binaryData"):
        if not semantic_equal(_get(before, path), _get(after, path)):
            out.append(Refusal(path, "field is immutable when `immutable` is set"))
    return out


def _pvc(before: Obj, after: Obj) -> list[Refusal]:
    """``ValidatePersistentVolumeClaimUpdate``: the spec is immutable but its storage requests
    (expansion) and volumeAttributesClassName."""
    old = copy.deepcopy(dict(_map(before, "spec")))
    new = copy.deepcopy(dict(_map(after, "spec")))
    for spec in (old, new):
        spec.pop("volumeAttributesClassName", None)
        if isinstance(spec.get("resources"), dict):  # of the wrong type: compared as it is
            spec["resources"].pop("requests", None)
        # volumeName is bound by the controller; an applier that leaves it out keeps it.
        spec.pop("volumeName", None)
    changed = first_difference(old, new, "spec")
    out = (
        [Refusal(changed, "spec is immutable after creation except resources.requests")]
        if changed
        else []
    )
    # A claim's storage request may grow, never shrink below what the volume has (its
    # status.capacity, which a bound claim's request is: RecoverVolumeExpansionFailure allows
    # no less).
    old_size = _quantity(_get(before, "spec.resources.requests.storage"))
    new_size = _quantity(_get(after, "spec.resources.requests.storage"))
    if old_size is not None and new_size is not None and new_size < old_size:
        out.append(
            Refusal(
                "spec.resources.requests.storage",
                "field can not be less than previous value (a volume never shrinks)",
            )
        )
    return out


def _quantity(value: Any) -> Fraction | None:
    try:
        return parse_quantity(value).value if value is not None else None
    except (ValueError, TypeError):
        return None


def _resource_quota(before: Obj, after: Obj) -> list[Refusal]:
    """``ValidateResourceQuotaUpdate``: the set of scopes."""

    def scopes(obj: Obj) -> set[str]:
        value = _get(obj, "spec.scopes")
        return set(map(str, value)) if isinstance(value, list) else set()

    return [] if scopes(before) == scopes(after) else [Refusal("spec.scopes", IMMUTABLE)]


def _role_binding(before: Obj, after: Obj) -> list[Refusal]:
    """``ValidateRoleBindingUpdate`` / ``ValidateClusterRoleBindingUpdate``."""
    if semantic_equal(_get(before, "roleRef"), _get(after, "roleRef")):
        return []
    return [Refusal("roleRef", "cannot change roleRef")]


def _namespace(before: Obj, after: Obj) -> list[Refusal]:
    """The PodSecurity admission plugin on update (Kubernetes v1.36
    ``pod-security-admission/admission/admission.go`` ``Admission.ValidateNamespace``): invalid
    Pod Security labels are refused unless the Namespace had exactly the same problems."""
    new = pod_security_label_problems(_get(after, "metadata.labels"))
    if not new or new == pod_security_label_problems(_get(before, "metadata.labels")):
        return []
    return [
        Refusal(f"metadata.labels[{key}]", f'Invalid value: "{value}": {message}', False)
        for key, value, message in new
    ]


def _crd(before: Obj, after: Obj) -> list[Refusal]:
    """``ValidateCustomResourceDefinitionSpecUpdate``; kubetrain's CRDs are established once
    applied, so scope and names.kind count as immutable too."""
    return _immutable(before, after, "spec.group", "spec.names.plural", "spec.names.kind") + (
        _immutable(before, after, "spec.scope", default="Namespaced")
    )


# --- JobSet (kubernetes-sigs/jobset, a custom resource kubetrain emits) ------------------------

#: Pod-template fields the JobSet webhook lets change while the JobSet is (or becomes)
#: suspended, for Kueue.
_JOBSET_SUSPENDED_MUTABLE = (
    ("metadata", "annotations"),
    ("metadata", "labels"),
    ("spec", "nodeSelector"),
    ("spec", "tolerations"),
    ("spec", "schedulingGates"),
)


VOLCANO_WEBHOOK = "Volcano's admission webhook"
_VOLCANO_UPDATE = (
    "job updates may not change fields other than `minAvailable`, `tasks[*].replicas under "
    "spec` and `PriorityClassName`"
)


def _volcano_job(before: Obj, after: Obj) -> list[Refusal]:
    """Not the API server's own: Volcano v1.15.1's admission of a Job update
    (``pkg/webhooks/admission/jobs/validate/admit_job.go`` validateJobUpdate, and the
    ``jobs-validating`` ValidatingAdmissionPolicy): no task added or removed, and nothing of the
    spec changed but ``minAvailable``, ``priorityClassName`` and each task's ``replicas`` and
    ``minAvailable``."""
    old_tasks = _get(before, "spec.tasks") or []
    new_tasks = _get(after, "spec.tasks") or []
    if not isinstance(old_tasks, list) or not isinstance(new_tasks, list):
        return []
    if len(old_tasks) != len(new_tasks):
        return [Refusal("spec.tasks", "job updates may not add or remove tasks",
                        origin=VOLCANO_WEBHOOK)]  # fmt: skip

    def frozen(obj: Obj) -> Any:
        spec = copy.deepcopy(_get(obj, "spec") or {})
        if not isinstance(spec, dict):
            return spec
        for key in ("minAvailable", "priorityClassName"):
            spec.pop(key, None)
        for task in spec.get("tasks") or []:
            if isinstance(task, dict):
                task.pop("replicas", None)
                task.pop("minAvailable", None)
        return spec

    changed = first_difference(frozen(before), frozen(after), "spec")
    if changed is None:
        return []
    return [Refusal(changed, _VOLCANO_UPDATE, origin=VOLCANO_WEBHOOK)]


def _jobset(before: Obj, after: Obj) -> list[Refusal]:
    """Not the API server's own: the JobSet webhook's ``ValidateUpdate`` (v0.9,
    ``pkg/webhooks/jobset_webhook.go``: replicatedJobs and managedBy immutable, the pod
    templates' scheduling fields excepted while suspended) and the CRD's ``self == oldSelf``
    rules (successPolicy, failurePolicy, network, startupPolicy)."""
    old_jobs = copy.deepcopy(_get(before, "spec.replicatedJobs") or [])
    new_jobs = copy.deepcopy(_get(after, "spec.replicatedJobs") or [])
    if _get(before, "spec.suspend") is True or _get(after, "spec.suspend") is True:
        # The webhook copies the old values of these fields into the new object before it
        # compares: leaving them out of both sides is the same.
        for job in [*old_jobs, *new_jobs]:
            pod = _get(job, "template.spec.template")
            for part, key in _JOBSET_SUSPENDED_MUTABLE:
                if isinstance(pod, dict) and isinstance(pod.get(part), dict):
                    pod[part].pop(key, None)
    out = []
    changed = first_difference(old_jobs, new_jobs, "spec.replicatedJobs")
    if changed is not None:
        message = f"{IMMUTABLE} ({changed} changed)"
        out.append(Refusal("spec.replicatedJobs", message, origin=JOBSET_WEBHOOK))
    out += [
        dataclasses.replace(r, origin=JOBSET_WEBHOOK)
        for r in _immutable(before, after, "spec.managedBy")
    ]
    return out + _immutable(
        before,
        after,
        "spec.successPolicy",
        "spec.failurePolicy",
        "spec.network",
        "spec.startupPolicy",
    )


# --- Trainer v2, Kubeflow v1 and Kueue custom resources: their CRDs' transition rules ----------

#: The fields of a TrainJob runtime patch's pod template the CRD makes immutable.
_PATCH_POD_FIELDS = (
    "containers",
    "initContainers",
    "imagePullSecrets",
    "securityContext",
    "serviceAccountName",
    "terminationGracePeriodSeconds",
    "volumes",
)


def _trainjob(before: Obj, after: Obj) -> list[Refusal]:
    """The TrainJob CRD's ``self == oldSelf`` rules (trainer v2.3.0). A runtime patch's rules
    apply between the patches of one manager (``runtimePatches`` is a map keyed by it)."""
    out = _transition(
        before,
        after,
        "spec.runtimeRef",
        "spec.trainer",
        "spec.initializer",
        "spec.managedBy",
        "spec.activeDeadlineSeconds",
    )
    old_patches = {p.get("manager"): p for p in _dicts(_get(before, "spec.runtimePatches"))}
    for i, patch in enumerate(_dicts(_get(after, "spec.runtimePatches"))):
        old = old_patches.get(patch.get("manager"))
        if old is None:
            continue
        jobs_path = "trainingRuntimeSpec.template.spec.replicatedJobs"
        old_jobs = {j.get("name"): j for j in _dicts(_get(old, jobs_path))}
        for k, job in enumerate(_dicts(_get(patch, jobs_path))):
            old_job = old_jobs.get(job.get("name"))
            if old_job is None:
                continue
            where = (
                f"spec.runtimePatches[{i}].trainingRuntimeSpec.template.spec.replicatedJobs[{k}]"
                ".template.spec.template.spec"
            )
            pod = _get(job, "template.spec.template.spec")
            old_pod = _get(old_job, "template.spec.template.spec")
            pod = pod if isinstance(pod, Mapping) else {}
            old_pod = old_pod if isinstance(old_pod, Mapping) else {}
            for name in _PATCH_POD_FIELDS:
                old_value, value = old_pod.get(name), pod.get(name)
                changed = old_value is not None and value is not None
                if changed and first_difference(old_value, value) is not None:
                    out.append(Refusal(f"{where}.{name}", IMMUTABLE))
    return out


def _transition(before: Obj, after: Obj, *paths: str) -> list[Refusal]:
    """A CRD's ``self == oldSelf`` rule on each of ``paths``: the API server evaluates a
    transition rule only where the field is set in both the old and the new object
    (apiextensions-apiserver's CEL validator), so setting it or removing it is accepted."""
    out = []
    for path in paths:
        old, new = _get(before, path), _get(after, path)
        if old is not None and new is not None and not semantic_equal(old, new):
            out.append(Refusal(path, IMMUTABLE))
    return out


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _pytorchjob(before: Obj, after: Obj) -> list[Refusal]:
    """The PyTorchJob CRD's rule (training-operator v1.9.0): the scheduling queue."""
    return _transition(before, after, "spec.runPolicy.schedulingPolicy.queue")


def _localqueue(before: Obj, after: Obj) -> list[Refusal]:
    """The LocalQueue CRD's rule (Kueue v0.19.2): its ClusterQueue."""
    return _transition(before, after, "spec.clusterQueue")


def queue_name(obj: Obj) -> str:
    """The Kueue queue ``obj`` names (its ``kueue.x-k8s.io/queue-name`` label), or ""."""
    labels = _get(obj, "metadata.labels")
    value = labels.get(KUEUE_QUEUE_LABEL) if isinstance(labels, Mapping) else None
    return value if isinstance(value, str) else ""


def kueue_refusals(before: Obj, after: Obj) -> list[Refusal]:
    """Kueue's ``validateUpdateForQueueName`` (v0.19.2, pkg/controller/jobframework/
    validation.go): a job's queue may change only while the new object is suspended, taking it
    out of its queue included. Assumed where the old or the new object names a queue (then the
    cluster runs Kueue)."""
    kueue = catalog.of(after).kueue
    if kueue is None or queue_name(before) == queue_name(after):
        return []
    if kueue.suspend_path and _get(after, kueue.suspend_path) is True:
        return []
    path = f"metadata.labels[{KUEUE_QUEUE_LABEL}]"
    return [Refusal(path, IMMUTABLE + " unless the job is suspended", origin=KUEUE_WEBHOOK)]


def _normalised(obj: Obj) -> dict[str, Any]:
    return stored_form(copy.deepcopy(dict(obj)))


def _dotted(path: tuple[str | int, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def crd_rule_refusals(before: Obj, after: Obj) -> list[Refusal]:
    """The transition rules (``oldSelf``) of a third-party kind's real CRD
    (:mod:`kubetrain.kube.crds`) that refuse the edit: Kueue's ResourceFlavor ``nodeLabels``
    and ``topologyName`` once a topology is set, a Topology's levels...
    (``validate_custom_resource_update``)."""
    from .apiextensions import crd_versions, validate_custom_resource_update
    from .crds import derived_crd

    api_version, kind = str(after.get("apiVersion", "")), str(after.get("kind", ""))
    real = derived_crd(api_version, kind)
    if real is None or before.get("apiVersion") != api_version:
        return []
    found = [v for v in crd_versions(real.definition()) if v.api_version == api_version]
    if not found:
        return []
    return [
        Refusal(_dotted(issue.path), issue.message)
        for issue in validate_custom_resource_update(found[0].node, before, after)
    ]


def update_refusals(before: Obj, after: Obj) -> list[Refusal]:
    """What the API server refuses when ``before`` is updated in place to ``after`` (empty: the
    update is accepted, as far as these rules go). Both are one object (same kind and name)."""
    rules = catalog.of(after).update_rules
    out = kueue_refusals(before, after)
    if rules is not None:
        out = rules(_normalised(before), _normalised(after)) + out
    # The CRD's own transition rules, where the kind's hand-written rules above do not already
    # refuse the same field.
    named = {r.path for r in out}
    out += [r for r in crd_rule_refusals(before, after) if r.path not in named]
    return out


def replacement_field(before: Obj, after: Obj) -> Refusal | None:
    """The first immutable field that forces ``before`` to be replaced to become ``after``
    (``None``: the change can be made in place)."""
    for refusal in update_refusals(before, after):
        if refusal.replaceable:
            return refusal
    return None


def may_need_replacement(kind: str, api_version: str) -> bool:
    """Whether objects of this kind have immutable fields at all."""
    row = catalog.lookup((api_version.rpartition("/")[0], kind))
    return row.update_rules is not None or row.kueue is not None
