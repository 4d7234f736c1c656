"""The API server's create-time checks beyond the corpus: the kinds the corpus does not hold
(Deployment, DaemonSet, CronJob, ReplicationController, PodTemplate, ConfigMap, Namespace,
PersistentVolumeClaim, ClusterRole, ClusterRoleBinding), checks that changed between Kubernetes
versions, mutations of the corpus' accepted objects whose verdict follows from upstream's rules,
and robustness: no input makes a check fail.

Each case names the upstream rule it stands for; ``tests/test_apiserver_corpus.py`` holds the
checks to a real server's verdicts.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetrain.kube.apiserver import embedded_issues, handled_kinds, object_issues
from kubetrain.kube.apiserver.batch import parse_cron
from kubetrain.models.errors import format_path

from conftest import REPO

V = (1, 36)
CONTAINER = {"name": "main", "image": "tf:2"}
TEMPLATE = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [CONTAINER]}}


def obj(api_version: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": "x", "namespace": "ml"},
        **fields,
    }


def cron_job(schedule: str, **job_spec: Any) -> dict[str, Any]:
    template = {"spec": {"restartPolicy": "Never", "containers": [CONTAINER]}}
    spec = {"schedule": schedule, "jobTemplate": {"spec": {**job_spec, "template": template}}}
    return obj("batch/v1", "CronJob", spec=spec)


def workload(kind: str, **spec: Any) -> dict[str, Any]:
    base = {"selector": {"matchLabels": {"app": "x"}}, "template": copy.deepcopy(TEMPLATE)}
    return obj("apps/v1", kind, spec={**base, **spec})


def paths(found: list[Any]) -> list[str]:
    return [f"{format_path(i.path)}: {i.message}" for i in found]


VALID = [
    workload("Deployment"),
    workload("Deployment", strategy={"type": "Recreate"}, replicas=0, minReadySeconds=5),
    workload(
        "DaemonSet",
        updateStrategy={
            "type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
        },
    ),
    workload(
        "StatefulSet",
        serviceName="x",
        volumeClaimTemplates=[
            {
                "metadata": {"name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            }
        ],
    ),
    obj(
        "batch/v1",
        "CronJob",
        spec={
            "schedule": "*/5 * * * *",
            "jobTemplate": {
                "spec": {
                    "template": {"spec": {"restartPolicy": "OnFailure", "containers": [CONTAINER]}}
                }
            },
        },
    ),
    obj(
        "batch/v1",
        "CronJob",
        spec={
            "schedule": "@hourly",
            "timeZone": "Etc/UTC",
            "jobTemplate": {
                "spec": {
                    "template": {"spec": {"restartPolicy": "Never", "containers": [CONTAINER]}}
                }
            },
        },
    ),
    obj("v1", "ReplicationController", spec={"template": copy.deepcopy(TEMPLATE)}),
    obj("v1", "PodTemplate", template=copy.deepcopy(TEMPLATE)),
    obj("v1", "ConfigMap", data={"a.conf": "x"}, binaryData={"b.bin": "eA=="}),
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}},
    obj(
        "v1",
        "PersistentVolumeClaim",
        spec={
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "10Gi"}},
            "storageClassName": "fast",
        },
    ),
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "r"},
        "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "b"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"},
        "subjects": [
            {"kind": "ServiceAccount", "name": "s", "namespace": "ml"},
            {"kind": "Group", "name": "devs"},
        ],
    },
    obj(
        "v1",
        "Service",
        spec={
            "type": "NodePort",
            "ports": [{"port": 80, "nodePort": 30080}],
            "externalTrafficPolicy": "Local",
        },
    ),
    obj("v1", "Secret", type="kubernetes.io/tls", data={"tls.crt": "eA==", "tls.key": "eA=="}),
    # The policy kinds (kubetrain/kube/apiserver/policy.py).
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "hi"},
     "value": 1_000_000_000, "preemptionPolicy": "Never"},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
     "metadata": {"name": "system-node-critical"}, "value": 2_000_001_000},
    {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
     "metadata": {"name": "j", "namespace": "ml"},
     "spec": {"podSelector": {"matchLabels": {"volcano.sh/job-name": "j"}},
              "ingress": [{"from": [{"podSelector": {"matchLabels": {"a": "b"}}},
                                    {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}],
                           "ports": [{"port": 80, "endPort": 90, "protocol": "TCP"},
                                     {"port": "http"}]}],
              "egress": [{"to": [{"namespaceSelector": {}}]}],
              "policyTypes": ["Ingress", "Egress"]}},
    {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia"},
     "handler": "nvidia", "overhead": {"podFixed": {"cpu": "100m", "example.com/x": "1"}},
     "scheduling": {"nodeSelector": {"gpu": "true"},
                    "tolerations": [{"key": "gpu", "operator": "Exists"}]}},
    obj("v1", "ResourceQuota", spec={
        "hard": {"requests.cpu": "10", "pods": "20", "requests.nvidia.com/gpu": "4",
                 "count/jobs.batch": "5"},
        "scopeSelector": {"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "In", "values": ["hi"]}]}}),
    obj("v1", "ResourceQuota", spec={"hard": {"pods": "3"}, "scopes": ["BestEffort"]}),
    obj("v1", "LimitRange", spec={"limits": [
        {"type": "Container", "min": {"cpu": "100m"}, "max": {"cpu": "2"},
         "default": {"cpu": "1"}, "defaultRequest": {"cpu": "500m"},
         "maxLimitRequestRatio": {"cpu": "4"}},
        {"type": "PersistentVolumeClaim", "max": {"storage": "100Gi"}},
        {"type": "Pod", "max": {"cpu": "-1"}}]}),
    obj("v1", "LimitRange", spec={}),  # LimitRangeSpec.Limits is not required by the server
    # a volume without a source is an emptyDir (SetDefaults_Volume)
    obj("v1", "Pod", spec={"containers": [{**CONTAINER, "volumeMounts": [
        {"name": "scratch", "mountPath": "/s"}]}], "volumes": [{"name": "scratch"}]}),
    {**obj("rbac.authorization.k8s.io/v1", "RoleBinding"),
     "roleRef": {"apiGroup": "", "kind": "Role", "name": "r"}},  # defaulted to rbac's group
]  # fmt: skip


@pytest.mark.parametrize("valid", VALID, ids=lambda o: o["kind"])
def test_valid_objects_pass(valid: dict[str, Any]) -> None:
    assert paths(object_issues(valid, V)) == []


# (object, the finding expected among its findings; "<path>: <start of message>")
INVALID = [
    # apps ValidateDeploymentSpec / ValidateRollingUpdateDeployment
    (
        workload("Deployment", strategy={"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}),
        "spec.strategy.rollingUpdate.maxUnavailable: invalid value 0: may not be 0",
    ),
    (
        workload("Deployment", strategy={"type": "Recreate", "rollingUpdate": {}}),
        "spec.strategy.rollingUpdate: forbidden",
    ),
    (
        workload("Deployment", progressDeadlineSeconds=5, minReadySeconds=10),
        "spec.progressDeadlineSeconds: invalid value 5: must be greater than minReadySeconds",
    ),
    (
        workload("Deployment", selector={"matchLabels": {"app": "y"}}),
        "spec.template.metadata.labels: invalid value",
    ),
    (
        workload("Deployment", strategy={"rollingUpdate": {"maxSurge": "150%"}}),
        "spec.strategy.rollingUpdate.maxSurge: invalid value '150%': must not be greater than 100%",
    ),
    # apps ValidateDaemonSetSpec / ValidateRollingUpdateDaemonSet
    (
        workload(
            "DaemonSet", updateStrategy={"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}}
        ),
        "spec.updateStrategy.rollingUpdate.maxSurge: invalid value 1: may not be set",
    ),
    (
        workload(
            "DaemonSet",
            template={**TEMPLATE, "spec": {"restartPolicy": "Never", "containers": [CONTAINER]}},
        ),
        "spec.template.spec.restartPolicy: unsupported value 'Never'",
    ),
    # apps ValidateStatefulSetSpec (claim templates count as volumes from 1.34)
    (workload("StatefulSet", podManagementPolicy="Random"), "spec.podManagementPolicy: invalid"),
    (
        workload("StatefulSet", serviceName="Bad_Name"),
        "spec.serviceName: 'Bad_Name' is not a valid",
    ),
    (
        workload("StatefulSet", volumeClaimTemplates=[{"metadata": {"name": "d"}, "spec": {}}]),
        "spec.volumeClaimTemplates[0].spec.accessModes: required field is missing",
    ),
    # batch ValidateCronJobCreate / validateScheduleFormat / ValidateJobTemplateSpec
    (cron_job("61 * * * *"), "spec.schedule: 61 is out of range (0-59)"),
    (
        cron_job("CRON_TZ=UTC 0 * * *"),
        "spec.schedule: invalid value 'CRON_TZ=UTC 0 * * *': cannot use TZ",
    ),
    (
        cron_job("@daily", selector={}),
        "spec.jobTemplate.spec.selector: invalid value {}: `selector` will be auto-generated",
    ),
    ({**cron_job("@daily"), "metadata": {"name": "c" * 53}}, "metadata.name: invalid value"),
    # batch validateJobSpec: indexed jobs, pod failure policy
    (
        obj(
            "batch/v1",
            "Job",
            spec={
                "completionMode": "Indexed",
                "template": {"spec": {"restartPolicy": "Never", "containers": [CONTAINER]}},
            },
        ),
        "spec.completions: required field is missing: when completion mode is Indexed",
    ),
    (
        obj(
            "batch/v1",
            "Job",
            spec={
                "podFailurePolicy": {
                    "rules": [
                        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [3, 1]}}
                    ]
                },
                "template": {"spec": {"restartPolicy": "OnFailure", "containers": [CONTAINER]}},
            },
        ),
        "spec.podFailurePolicy.rules[0].onExitCodes.values: invalid value [3,1]: must be ordered",
    ),
    # core ValidateReplicationController, ValidatePodTemplate, ValidateConfigMap
    (
        obj(
            "v1",
            "ReplicationController",
            spec={"selector": {"app": "y"}, "template": copy.deepcopy(TEMPLATE)},
        ),
        "spec.template.metadata.labels: invalid value",
    ),
    (
        obj("v1", "PodTemplate", template={"spec": {"containers": []}}),
        "template.spec.containers: required field is missing",
    ),
    (
        obj("v1", "ConfigMap", data={"a": "x"}, binaryData={"a": "eA=="}),
        # The path names the key; a value under ConfigMap data is never quoted (docs/security.md).
        "data.a: invalid value (a string, not shown): duplicate of key present in binaryData",
    ),
    (obj("v1", "ConfigMap", data={"bad key": "x"}), "data.bad key: 'bad key' is not a valid"),
    # core ValidateNamespace, ValidatePersistentVolumeClaim
    (
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml.dev"}},
        "metadata.name: 'ml.dev' is not a valid DNS-1123 label",
    ),
    (
        obj(
            "v1",
            "PersistentVolumeClaim",
            spec={
                "accessModes": ["ReadWriteOncePod", "ReadWriteOnce"],
                "resources": {"requests": {"storage": "0"}},
            },
        ),
        "spec.accessModes: forbidden: may not use ReadWriteOncePod with other access modes",
    ),
    (
        obj(
            "v1",
            "PersistentVolumeClaim",
            spec={"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "0"}}},
        ),
        "spec.resources.storage: invalid value '0': must be greater than zero",
    ),
    # rbac ValidateClusterRole / ValidateClusterRoleBinding
    (
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "r"},
            "rules": [
                {
                    "verbs": ["get"],
                    "resources": ["pods", "nodes"],
                    "resourceNames": ["a"],
                    "apiGroups": [""],
                }
            ],
        },
        "rules[0].resourceNames: required field is missing: resource names cannot apply",
    ),
    (
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "b"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "s"}],
        },
        "roleRef.kind: unsupported value 'Role'",
    ),
    (
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "b"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "r",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "s"}],
        },
        "subjects[0].namespace: required field is missing",
    ),
    # core ValidateService: LoadBalancer-only fields, node port range, ExternalName
    (
        obj(
            "v1",
            "Service",
            spec={"ports": [{"port": 80}], "loadBalancerSourceRanges": ["10.0.0.0/8"]},
        ),
        "spec.LoadBalancerSourceRanges: forbidden",
    ),
    (
        obj(
            "v1",
            "Service",
            spec={"type": "ExternalName", "externalName": "bad_host", "clusterIP": "None"},
        ),
        "spec.clusterIPs: forbidden: may not be set for ExternalName services",
    ),
    # core ValidateSecret: the type's keys; values never shown
    (
        obj(
            "v1",
            "Secret",
            type="kubernetes.io/dockerconfigjson",
            data={".dockerconfigjson": "bm90IGpzb24="},
        ),
        'data[".dockerconfigjson"]: must be JSON (the value is not shown)',
    ),
    # meta ValidateObjectMeta: the finalizers of the core API groups
    (
        {**workload("Deployment"), "metadata": {"name": "x", "finalizers": ["cleanup"]}},
        "metadata.finalizers: invalid value 'cleanup'",
    ),
    # what the server refuses in metadata before validation
    (
        {**workload("Deployment"), "metadata": {"name": "x", "uid": "a.b"}},
        "metadata.uid: forbidden: a manifest may not set it",
    ),
    (
        workload("Deployment", template={**TEMPLATE, "metadata": {
            "labels": {"app": "x"}, "deletionTimestamp": "yesterday"}}),
        "spec.template.metadata.deletionTimestamp: invalid value 'yesterday': not an RFC 3339",
    ),
    (
        obj("v1", "PersistentVolumeClaim", spec={"accessModes": ["ReadWriteOnce"], "resources": {
            "requests": {"storage": "1Gi", "example.com/x": "x"}}}),
        "spec.resources.requests[\"example.com/x\"]: 'x' is not a quantity",
    ),
    (
        {**workload("Deployment"), "metadata": {"name": "x", "managedFields": []}},
        "metadata.managedFields: forbidden: must be nil",
    ),
    (
        {**workload("Deployment"), "metadata": {"name": "x", "resourceVersion": "a:b"}},
        "metadata.resourceVersion: invalid value 'a:b': must be an unsigned integer",
    ),
    (
        {**workload("Deployment"), "metadata": {"name": "x", "creationTimestamp": "2024-13-01"}},
        "metadata.creationTimestamp: invalid value '2024-13-01': not an RFC 3339 time",
    ),
    # apps ValidateStatefulSetSpec: ordinals, claim templates as template volumes
    (
        workload("StatefulSet", serviceName="s", ordinals={"start": -1}),
        "spec.ordinals.start: invalid value -1: must be greater than or equal to 0",
    ),
    (
        workload("StatefulSet", serviceName="s", volumeClaimTemplates=[
            {"metadata": {"name": "R4_Data"}, "spec": {"accessModes": ["ReadWriteOnce"],
             "resources": {"requests": {"storage": "1Gi"}}}}]),
        "spec.template.spec.volumes[0].name: 'R4_Data' is not a valid",
    ),
    # scheduling ValidatePriorityClass
    (
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "hi"}, "value": 1_000_000_001},
        "value: forbidden: maximum allowed value of a user defined priority is 1000000000",
    ),
    (
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "system-hi"}, "value": 1},
        "metadata.name: forbidden: priority class names with 'system-' prefix are reserved",
    ),
    (
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "hi"}, "value": 1, "preemptionPolicy": "Sometimes"},
        "preemptionPolicy: unsupported value 'Sometimes'",
    ),
    # node ValidateRuntimeClass
    (
        {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "r"},
         "handler": "Run_SC"},
        "handler: 'Run_SC' is not a valid",
    ),
    (
        {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "r"},
         "handler": "h", "overhead": {"podFixed": {"cpu": "-100m"}}},
        "overhead.limits.cpu: invalid value '-100m': must be greater than or equal to 0",
    ),
    (
        {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "r"},
         "handler": "h", "scheduling": {"tolerations": [{"key": "a", "operator": "Exists"},
                                                        {"key": "a", "operator": "Exists"}]}},
        "scheduling.tolerations[1]: duplicate value",
    ),
    # core ValidateResourceQuotaSpec
    (
        obj("v1", "ResourceQuota", spec={"hard": {"cpus": "1"}}),
        "spec.hard.cpus: invalid value 'cpus': must be a standard resource for quota",
    ),
    (
        obj("v1", "ResourceQuota", spec={"hard": {"pods": "1500m"}}),
        "spec.hard.pods: invalid value '1500m': must be an integer",
    ),
    (
        obj("v1", "ResourceQuota", spec={"hard": {"cpu": "1"}, "scopes": ["BestEffort"]}),
        "spec.scopes: invalid value [\"BestEffort\"]: unsupported scope applied to resource",
    ),
    (
        obj("v1", "ResourceQuota", spec={"scopes": ["Terminating", "NotTerminating"]}),
        "spec.scopes: invalid value [\"Terminating\",\"NotTerminating\"]: conflicting scopes",
    ),
    (
        obj("v1", "ResourceQuota", spec={"scopeSelector": {"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "Exists", "values": ["a"]}]}}),
        "spec.scopeSelector.matchExpressions.values: invalid value [\"a\"]: must be no value",
    ),
    (
        obj("v1", "ResourceQuota", spec={"scopeSelector": {"matchExpressions": [
            {"scopeName": "Team", "operator": "Equals"}]}}),
        "spec.scopeSelector.matchExpressions.scopeName: invalid value 'Team': unsupported scope",
    ),
    # core ValidateLimitRange
    (
        obj("v1", "LimitRange", spec={"limits": [
            {"type": "Container", "max": {"cpu": "2"}, "default": {"cpu": "4"}}]}),
        "spec.limits[0].default.cpu: invalid value '2': default value 4 is greater than max",
    ),
    (
        obj("v1", "LimitRange", spec={"limits": [
            {"type": "Container", "min": {"cpu": "1"}, "max": {"cpu": "2"},
             "maxLimitRequestRatio": {"cpu": "10"}}]}),
        "spec.limits[0].maxLimitRequestRatio.cpu: invalid value '10': ratio 10 is greater than "
        "max/min = 2.000000",
    ),
    (
        obj("v1", "LimitRange", spec={"limits": [{"type": "Pod", "default": {"cpu": "1"}}]}),
        "spec.limits[0].default: forbidden: may not be specified when `type` is 'Pod'",
    ),
    (
        obj("v1", "LimitRange", spec={"limits": [{"type": "PersistentVolumeClaim",
                                                  "max": {"cpu": "1"}}]}),
        "spec.limits[0].limits: required field is missing: either minimum or maximum storage",
    ),
    (
        obj("v1", "LimitRange", spec={"limits": [{"type": "Node"}]}),
        "spec.limits[0].type: invalid value 'Node': must be a standard limit type",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("invalid", "expected"), INVALID, ids=[f"{o['kind']}-{e.split(': ')[0]}" for o, e in INVALID]
)
def test_invalid_objects_are_refused(invalid: dict[str, Any], expected: str) -> None:
    found = paths(object_issues(invalid, V))
    assert any(f.startswith(expected) for f in found), found


def test_a_list_map_key_of_the_wrong_type_is_no_crash() -> None:
    # Found by e2e/test_validation_oracle.py: a port's containerPort {} crashed the keyed-list
    # check (an unhashable key); the schema reports the type, the list check skips the item.
    ports = [{"containerPort": {}, "name": "a"}, {"containerPort": {}, "name": "b"}]
    found = object_issues(pod(containers=[{**CONTAINER, "ports": ports}]), V)
    assert not any("duplicate" in i.message for i in found)
    twice = [{"containerPort": 80}, {"containerPort": 80}]
    found = object_issues(pod(containers=[{**CONTAINER, "ports": twice}]), V)
    assert any("duplicate entries" in i.message for i in found)


def test_what_server_side_apply_makes_of_nulls_and_spaces() -> None:
    # Asked of kube-apiserver v1.36.2 by server-side apply with dry run: a null element of a
    # list keyed by its items (ports, env, volumeMounts) is refused, of an atomic list (args)
    # accepted; a quantity with spaces around it is read without them; an empty
    # creationTimestamp cannot be decoded, a null one is no timestamp.
    for key in ("ports", "env", "volumeMounts"):
        found = paths(object_issues(pod(containers=[{**CONTAINER, key: [None]}]), V))
        assert f"spec.containers[0].{key}: element 0: associative list with keys may not have " \
            "a null element" in found, key  # fmt: skip
    assert paths(object_issues(pod(containers=[{**CONTAINER, "args": [None]}]), V)) == []
    spaced = {**CONTAINER, "resources": {"limits": {"cpu": " 1"}, "requests": {"cpu": "1 "}}}
    assert paths(object_issues(pod(containers=[spaced]), V)) == []
    empty = {**pod(), "metadata": {"name": "x", "namespace": "ml", "creationTimestamp": ""}}
    assert paths(object_issues(empty, V)) == [
        "metadata.creationTimestamp: invalid value '': not an RFC 3339 time: the server cannot "
        "decode the object"
    ]
    empty["metadata"]["creationTimestamp"] = None
    assert paths(object_issues(empty, V)) == []


def test_every_handled_kind_has_a_valid_case() -> None:
    kinds = {f"{o['apiVersion']}/{o['kind']}" for o in VALID}
    assert "v1/LimitRange" in kinds  # the list holds the policy kinds
    tested_elsewhere = {
        "apps/v1/ReplicaSet",
        "batch/v1/Job",
        "v1/ServiceAccount",
        "rbac.authorization.k8s.io/v1/Role",
    }
    assert handled_kinds() - kinds == tested_elsewhere


# --- where the server changed between versions ------------------------------------------------


def pod(**spec: Any) -> dict[str, Any]:
    return obj("v1", "Pod", spec={"containers": [dict(CONTAINER)], **spec})


@pytest.mark.parametrize(
    ("case", "older", "newer"),
    [
        # RelaxedEnvironmentVariableValidation, beta in 1.32
        (
            pod(containers=[{**CONTAINER, "env": [{"name": "1ABC", "value": "x"}]}]),
            (1, 31),
            (1, 32),
        ),
        # SidecarContainers, beta in 1.29: restartPolicy on an init container, else dropped
        (
            pod(
                initContainers=[
                    {
                        **CONTAINER,
                        "name": "side",
                        "restartPolicy": "Always",
                        "readinessProbe": {"exec": {"command": ["true"]}},
                    }
                ]
            ),
            (1, 28),
            (1, 29),
        ),
        # ContainerRestartRules, beta in 1.35: restartPolicy on a regular container
        (pod(containers=[{**CONTAINER, "restartPolicy": "Never"}]), (1, 34), (1, 35)),
        # ContainerRestartRules: an init container may say OnFailure (not only Always)
        (
            pod(initContainers=[{**CONTAINER, "name": "prep", "restartPolicy": "OnFailure"}]),
            (1, 34),
            (1, 35),
        ),
        # PodLifecycleSleepActionAllowZero, beta in 1.32: `sleep: {}` is 0 seconds
        (
            pod(containers=[{**CONTAINER, "lifecycle": {"preStop": {"sleep": {}}}}]),
            (1, 31),
            (1, 32),
        ),
        # RelaxedServiceNameValidation, beta in 1.36: a Service name is a DNS label
        (
            {
                **obj("v1", "Service", spec={"ports": [{"port": 80}]}),
                "metadata": {"name": "1abc", "namespace": "ml"},
            },
            (1, 35),
            (1, 36),
        ),
    ],
    ids=[
        "env-names",
        "sidecars",
        "container-restart-policy",
        "init-restart-policy",
        "sleep-zero",
        "service-name-label",
    ],
)
def test_checks_follow_the_kubernetes_version(case: dict[str, Any], older: Any, newer: Any) -> None:
    assert object_issues(case, older), "refused before the change"
    assert paths(object_issues(case, newer)) == []


def test_a_statefulset_max_unavailable_is_dropped_while_its_feature_is_off() -> None:
    # kube-apiserver v1.36.2 drops rollingUpdate.maxUnavailable (MaxUnavailableStatefulSet is
    # off) and accepts any value there (../shared/apiserver-corpus-r4, "maxUnavailable 0").
    for value in (0, "0%", "150%", "half"):
        sts = workload("StatefulSet", serviceName="s",
                       updateStrategy={"rollingUpdate": {"maxUnavailable": value}})  # fmt: skip
        assert paths(object_issues(sts, V)) == [], value
    sts = workload(
        "StatefulSet", serviceName="s", updateStrategy={"rollingUpdate": {"partition": -1}}
    )
    assert paths(object_issues(sts, V))  # the rest of rollingUpdate is still checked


def test_a_claim_template_named_like_a_pod_volume_or_twice_is_one_volume() -> None:
    claim = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
             "resources": {"requests": {"storage": "1Gi"}}}}  # fmt: skip
    sts = workload("StatefulSet", serviceName="s", volumeClaimTemplates=[claim, claim])
    sts["spec"]["template"]["spec"]["volumes"] = [{"name": "data", "emptyDir": {}}]
    sts["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = [
        {"name": "data", "mountPath": "/d"}
    ]
    assert paths(object_issues(sts, V)) == []
    sts["spec"]["volumeClaimTemplates"].append({**claim, "metadata": {}})
    assert sorted(paths(object_issues(sts, V))) == [
        "spec.template.spec.volumes[1].name: required field is missing",
        "spec.template.spec.volumes[1].persistentVolumeClaim.claimName: required field is missing",
    ]


def test_statefulset_names_are_dns_labels_from_1_27() -> None:
    sts = {**workload("StatefulSet"), "metadata": {"name": "a.b", "namespace": "ml"}}
    assert paths(object_issues(sts, (1, 26))) == []
    assert paths(object_issues(sts, (1, 27)))[0].startswith("metadata.name: 'a.b' is not a valid")


def test_statefulset_templates_are_validated_from_1_34() -> None:
    sts = workload("StatefulSet")
    sts["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = [
        {"name": "missing", "mountPath": "/m"}
    ]
    assert paths(object_issues(sts, (1, 33))) == []
    assert paths(object_issues(sts, (1, 34))) == [
        "spec.template.spec.containers[0].volumeMounts[0].name: 'missing' not found: no volume "
        "of that name in spec.volumes"
    ]
    # A volume claim template is a volume the mounts may use.
    sts["spec"]["volumeClaimTemplates"] = [
        {
            "metadata": {"name": "missing"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
            },
        }
    ]
    assert paths(object_issues(sts, (1, 34))) == []


def test_pod_level_resources_hold_their_containers() -> None:
    # validatePodResourceConsistency (PodLevelResources, beta in 1.34).
    def container(name: str, cpu: str, **extra: Any) -> dict[str, Any]:
        return {**CONTAINER, "name": name, "resources": {"limits": {"cpu": cpu}}, **extra}

    spec = {
        "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "2"}},
        "containers": [container("a", "1"), container("b", "1500m")],
        # A sidecar runs beside the containers; a plain init container only before them.
        "initContainers": [
            container("init", "2"),
            container("side", "250m", restartPolicy="Always"),
        ],
    }
    case = obj("v1", "Pod", spec=spec)
    assert paths(object_issues(case, (1, 33))) == []
    assert paths(object_issues(case, (1, 34))) == [
        # a (1) + b (1.5) + side (0.25): requests default to limits
        "spec.resources.requests.cpu: invalid value '2': must be greater than or equal to "
        "aggregate container requests of 2750m"
    ]
    spec["resources"] = {"requests": {"cpu": "3"}, "limits": {"cpu": "1200m"}}
    assert paths(object_issues(case, (1, 34))) == [
        "spec.resources.requests: invalid value '3': must be less than or equal to cpu limit of "
        "1200m",
        "spec.resources.containers[1].cpu.limits: invalid value '1500m': must be less than or "
        "equal to pod limits of 1200m",
    ]
    spec["resources"] = {"requests": {"cpu": "3"}, "limits": {"cpu": "3"}}
    assert paths(object_issues(case, (1, 34))) == []


def test_cron_schedules() -> None:
    for good in ("*/15 0-6 * jan-mar mon,fri", "@every 1h30m", "0 0 1 1 ?", "@yearly"):
        assert parse_cron(good) is None, good
    for bad in ("* * * *", "0 25 * * *", "*/0 * * * *", "@fortnightly", "5-1 * * * *"):
        assert parse_cron(bad) is not None, bad


# --- mutations of the server's accepted objects -------------------------------------------------

CORPUS = REPO.parent / "shared" / "apiserver-corpus" / "create.jsonl"


def accepted(kind: str) -> dict[str, Any]:
    if not CORPUS.is_file():
        pytest.skip(f"{CORPUS} is absent (../shared is not beside the repository)")
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        if case["kind"] == kind and case["verdict"] == "accepted":
            result: dict[str, Any] = case["object"]
            return result
    raise AssertionError(f"no accepted {kind} in the corpus")


def _container(o: dict[str, Any]) -> dict[str, Any]:
    spec = o["spec"]["template"]["spec"] if "template" in o["spec"] else o["spec"]
    result: dict[str, Any] = spec["containers"][0]
    return result


# Mutations the corpus does not hold, each refused by a named upstream rule.
MUTATIONS = {
    # validateContainerPorts: hostPort range
    "host-port-0x10000": lambda o: (
        _container(o).setdefault("ports", []).append({"containerPort": 80, "hostPort": 65536})
    ),
    # validateProbe: successThreshold of a liveness probe must be 1
    "liveness-success-2": lambda o: _container(o).update(
        livenessProbe={"exec": {"command": ["true"]}, "successThreshold": 2}
    ),
    # validateHandler: one action per probe
    "probe-two-actions": lambda o: _container(o).update(
        readinessProbe={"exec": {"command": ["true"]}, "tcpSocket": {"port": 80}}
    ),
    # validateResourceRequirements: hugepages need cpu or memory
    "hugepages-alone": lambda o: _container(o).update(
        resources={"limits": {"hugepages-2Mi": "4Mi"}, "requests": {"hugepages-2Mi": "4Mi"}}
    ),
    # validateResourceQuantityHugePageValue: a whole number of pages
    "hugepages-partial-page": lambda o: _container(o).update(
        resources={"limits": {"memory": "1Gi", "hugepages-2Mi": "3Mi"}}
    ),
    # ValidateSecurityContext: runAsGroup range
    "run-as-group-2^31": lambda o: _container(o).update(securityContext={"runAsGroup": 2**31}),
    # ValidateTolerations: tolerationSeconds needs NoExecute
    "toleration-seconds": lambda o: (
        o["spec"]["template"]["spec"] if "template" in o["spec"] else o["spec"]
    ).update(tolerations=[{"key": "k", "operator": "Exists", "tolerationSeconds": 5}]),
    # validateProjectionSources: a service account token lives at least 10 minutes
    "short-token": lambda o: (
        (o["spec"]["template"]["spec"] if "template" in o["spec"] else o["spec"])
        .setdefault("volumes", [])
        .append(
            {
                "name": "tok",
                "projected": {
                    "sources": [{"serviceAccountToken": {"path": "t", "expirationSeconds": 60}}]
                },
            }
        )
    ),
}


@pytest.mark.parametrize("kind", ["Pod", "Job", "ReplicaSet", "StatefulSet"])
@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_mutations_of_accepted_objects_are_refused(kind: str, mutation: str) -> None:
    base = accepted(kind)
    assert paths(object_issues(base, V)) == []
    mutated = copy.deepcopy(base)
    MUTATIONS[mutation](mutated)
    assert object_issues(mutated, V), f"{mutation} of an accepted {kind} passes"


# --- robustness -----------------------------------------------------------------------------------

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 2**40)
    | st.text(max_size=6)
    | st.floats(allow_nan=False),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
KEYS = st.sampled_from(
    [
        "spec",
        "template",
        "containers",
        "metadata",
        "ports",
        "env",
        "volumes",
        "resources",
        "limits",
        "selector",
        "rules",
        "subjects",
        "data",
        "name",
    ]
)


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(sorted(handled_kinds())),
    path=st.lists(KEYS | st.integers(0, 2), min_size=1, max_size=5),
    value=JSON,
)
def test_no_input_makes_a_check_fail(kind: str, path: list[Any], value: Any) -> None:
    api_version, _, name = kind.rpartition("/")
    target: Any = {
        "apiVersion": api_version,
        "kind": name,
        "metadata": {"name": "x"},
        "spec": {"template": copy.deepcopy(TEMPLATE)},
    }
    node = target
    for part in path[:-1]:
        if isinstance(node, dict) and isinstance(part, str):
            node = node.setdefault(part, {})
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
    if isinstance(node, dict) and isinstance(path[-1], str):
        node[path[-1]] = value
    object_issues(target, V)  # returns findings, never raises
    embedded_issues("io.k8s.api.core.v1.PodTemplateSpec", value, V)


def test_values_that_may_be_secret_are_not_repeated() -> None:
    secret = obj("v1", "Secret", data={"k": "not base64!"}, type="kubernetes.io/dockercfg")
    text = json.dumps(paths(object_issues(secret, V)))
    assert "not base64" not in text and "data.k: must be base64-encoded" in text
    env = pod(
        containers=[
            {
                **CONTAINER,
                "env": [
                    {
                        "name": "A",
                        "value": "hunter2",
                        "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}},
                    }
                ],
            }
        ]
    )
    assert "hunter2" not in json.dumps(paths(object_issues(env, V)))


# --- matchLabelKeys: a Pod's labels are merged into its selectors before validation -----------


def _affinity_term(**extra: Any) -> dict[str, Any]:
    return {
        "labelSelector": {"matchLabels": {"app": "x"}},
        "topologyKey": "kubernetes.io/hostname",
        **extra,
    }


def _spread(**extra: Any) -> dict[str, Any]:
    return {
        "maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "x"}},
        **extra,
    }


def labelled_pod(labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    found = pod(**spec)
    found["metadata"]["labels"] = labels
    return found


AFFINITY = {
    "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [_affinity_term(matchLabelKeys=["app"])]
    }
}
AFFINITY_PATH = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"


def test_pod_affinity_key_in_selector_and_match_label_keys_is_refused_on_a_labelled_pod() -> None:
    # mutatePodAffinity appends "app In (x)"; ValidateMatchLabelKeysAndMismatchLabelKeys then
    # meets "app" twice and reports it at the term's path indexed by the key (upstream's path).
    refused = labelled_pod({"app": "x"}, affinity=AFFINITY)
    assert paths(object_issues(refused, (1, 36))) == [
        f"{AFFINITY_PATH}[0]: invalid value 'app': exists in both matchLabelKeys and labelSelector"
    ]
    # A Pod without the label gets nothing merged; a template is never merged; before 1.31
    # the server drops matchLabelKeys.
    assert paths(object_issues(labelled_pod({"other": "y"}, affinity=AFFINITY), (1, 36))) == []
    template = workload("Deployment")
    template["spec"]["template"]["spec"]["affinity"] = AFFINITY
    assert paths(object_issues(template, (1, 36))) == []
    assert paths(object_issues(refused, (1, 30))) == []


def test_match_and_mismatch_label_keys_must_differ() -> None:
    term = _affinity_term(matchLabelKeys=["zone"], mismatchLabelKeys=["zone"])
    affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    found = paths(object_issues(pod(affinity=affinity), (1, 36)))
    assert found == [
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
        ".matchLabelKeys[0]: invalid value 'zone': exists in both matchLabelKeys and "
        "mismatchLabelKeys"
    ]


def test_topology_spread_key_in_selector_follows_the_selector_merge_gate() -> None:
    spread = [_spread(matchLabelKeys=["app"])]
    template = workload("Deployment")
    template["spec"]["template"]["spec"]["topologySpreadConstraints"] = spread
    # Before MatchLabelKeysInPodTopologySpreadSelectorMerge (1.34) any key in the selector is
    # refused; after it, a template may repeat it and only a labelled Pod is refused.
    legacy = paths(object_issues(template, (1, 33)))
    assert legacy == [
        "spec.template.spec.topologySpreadConstraints[0].matchLabelKeys[0]: invalid value "
        "'app': exists in both matchLabelKeys and labelSelector"
    ]
    assert paths(object_issues(template, (1, 34))) == []
    refused = labelled_pod({"app": "x"}, topologySpreadConstraints=spread)
    assert paths(object_issues(refused, (1, 36))) == [
        "spec.topologySpreadConstraints[0][0]: invalid value 'app': exists in both "
        "matchLabelKeys and labelSelector"
    ]


# --- Namespace Pod Security labels (the PodSecurity admission plugin) --------------------------


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({"pod-security.kubernetes.io/enforce": "restricted"}, []),
        (
            {"pod-security.kubernetes.io/enforce": "strict"},
            [
                'metadata.labels["pod-security.kubernetes.io/enforce"]: invalid value '
                "'strict': must be one of privileged, baseline, restricted"
            ],
        ),
        (
            {
                "pod-security.kubernetes.io/warn-version": "1.30",
                "pod-security.kubernetes.io/audit-version": "latest",
                "pod-security.kubernetes.io/enforce-version": "v1.36",
            },
            [
                'metadata.labels["pod-security.kubernetes.io/warn-version"]: invalid value '
                '\'1.30\': must be "latest" or "v1.x"'
            ],
        ),
        ({"pod-security.kubernetes.io/audit-version": "v1.07"}, ['must be "latest" or "v1.x"']),
    ],
    ids=["valid", "bad-level", "bad-version", "leading-zero"],
)
def test_namespace_pod_security_labels(labels: dict[str, str], expected: list[str]) -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml", "labels": labels}}
    found = paths(object_issues(ns, (1, 36)))
    assert len(found) == len(expected)
    for got, want in zip(found, expected, strict=True):
        assert want in got


def test_a_namespace_update_keeps_invalid_labels_it_had_and_refuses_new_ones() -> None:
    from kubetrain.kube.immutable import update_refusals

    def ns(level: str) -> dict[str, Any]:
        labels = {"pod-security.kubernetes.io/enforce": level}
        return {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "ml", "labels": labels},
        }

    assert [str(r) for r in update_refusals(ns("baseline"), ns("strict"))] == [
        'metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be '
        "one of privileged, baseline, restricted"
    ]
    # The same problem as before (Admission.ValidateNamespace compares the errors): allowed.
    assert update_refusals(ns("strict"), ns("strict")) == []
    assert update_refusals(ns("strict"), ns("restricted")) == []


# --- PersistentVolumeClaim data sources, as the strategy prepares a new claim -----------------


def claim(**spec: Any) -> dict[str, Any]:
    base = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    return obj("v1", "PersistentVolumeClaim", spec={**base, **spec})


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # Dropped by EnforceDataSourceBackwardsCompatibility, so nothing to refuse.
        ({"dataSource": {"kind": "ConfigMap", "name": "x"}}, []),
        # Kept, and copied to dataSourceRef by NormalizeDataSources.
        ({"dataSource": {"kind": "PersistentVolumeClaim", "name": "x"}}, []),
        ({"dataSourceRef": {"apiGroup": "a.io", "kind": "Seed", "name": "x"}}, []),
        # With dataSourceRef given, dataSource is kept and validated: it must match.
        (
            {
                "dataSource": {"kind": "PersistentVolumeClaim", "name": "x"},
                "dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "y"},
            },
            ["spec: invalid value 'dataSource': must match dataSourceRef"],
        ),
        (
            {
                "dataSource": {"kind": "ConfigMap", "name": "x"},
                "dataSourceRef": {"kind": "ConfigMap", "name": "x"},
            },
            [
                "spec.dataSource: invalid value 'ConfigMap': must be 'PersistentVolumeClaim' "
                "when referencing the default apiGroup",
                "spec.dataSourceRef: invalid value 'ConfigMap': must be 'PersistentVolumeClaim' "
                "when referencing the default apiGroup",
            ],
        ),
    ],
    ids=["other-kind-dropped", "claim", "populator-ref", "mismatch", "other-kind-with-ref"],
)
def test_claim_data_sources(spec: dict[str, Any], expected: list[str]) -> None:
    assert paths(object_issues(claim(**spec), (1, 36))) == expected
