"""Volcano Job: native mode builds what Volcano's job controller creates; operator mode writes
the Job as its admission webhook stores it.

Fidelity target: volcano-sh/volcano v1.15.1 ``pkg/controllers/job``:

* createOrUpdatePodGroup: one ``scheduling.volcano.sh/v1beta1`` PodGroup with the job's labels
  and annotations, ``minMember`` (the job's minAvailable), ``minTaskMember`` per task, the
  queue, the priority class and ``minResources`` (calcPGMinResources: the requests of the
  first minAvailable pods, tasks in priority order);
* syncJob and createJobPod: ``replicas`` pods per task, ``<job>-<task>-<index>``, the task's
  template with the job's scheduler and priority class, the Volcano labels and annotations
  (task index, task, job, queue, PodGroup, job version and retry count 0);
* the plugins each pod and the job get (``pkg/controllers/job/plugins``): ``env``
  (VK_TASK_INDEX and VC_TASK_INDEX), ``svc`` (the pod's hostname and subdomain, the
  ``<job>-svc`` ConfigMap of every task's hosts mounted at /etc/volcano, VC_<TASK>_HOSTS and
  VC_<TASK>_NUM from it, the headless Service and the NetworkPolicy), ``ssh`` (the
  ``<job>-ssh`` Secret of ``id_rsa``, ``id_rsa.pub``, ``authorized_keys`` and the ssh
  ``config`` mounted by subPath on every container).

Where native mode cannot be the controller (docs/kinds/volcanojob.md):

* **The PodGroup's name.** The controller names it ``<job>-<job's UID>``
  (generateRelatedPodGroupName), which exists only once the Job does: native mode names it
  ``<job>``, and every pod's ``scheduling.k8s.io/group-name`` says so.
* **Plugin order.** The controller runs the plugins in Go map order, so the order of the env
  vars and volumes they append changes from pod to pod; kubetrain runs them by name.
* **The SSH key pair.** The controller generates one per job; kubetrain writes no key
  material: the pair comes from the stack's secret store (the credential ``<job>-ssh``, or the
  one ``kubetrain.io/ssh-credential`` names, keys ``ssh-privatekey`` and ``ssh-publickey``),
  and the ssh ``config`` (host names only) is added by the ExternalSecret's template. The
  plugin's ``--ssh-private-key`` and ``--ssh-public-key`` are refused in both modes.
* **What needs the controller** is refused natively at its field: the
  framework plugins (tensorflow, mpi, pytorch, ray, hcclrank), ``volumes`` (named at random,
  claims created by the controller), ``dependsOn`` and ``partitionPolicy``; lifecycle
  ``policies``, ``maxRetry``, ``minSuccess`` and ``ttlSecondsAfterFinished`` have no controller
  to act on them (a warning).
"""

from __future__ import annotations

from typing import Any

from ..kube import catalog
from ..kube.podresources import pod_resources
from ..kube.quantity import Quantity, format_quantity, parse_quantity
from ..models.base import Mode
from ..models.volcanojob import NATIVE_PLUGINS, VolcanoJob, VolcanoTask
from .context import BuildContext
from .gang import priority_of
from .meta import app_labels, manifest, merge, normalize_pod_gpus, object_meta, plain_copy
from .registry import BuildProblem, Origins, builder, locator
from .secrets import CredentialRef, SecretSpec, secret_manifests
from .security import apply_pod_security

__all__ = ["VolcanoExpansion", "build_volcanojob", "custom_resource", "generate_hosts"]

Manifest = dict[str, Any]

POD_GROUP_API_VERSION = "scheduling.volcano.sh/v1beta1"
#: app.kubernetes.io/name of a Volcano Job's objects.
APP_NAME = "volcanojob"
# volcano.sh/apis v1.14.0 pkg/apis/batch/v1alpha1/labels.go and scheduling/v1beta1/labels.go.
TASK_INDEX = "volcano.sh/task-index"
TASK_SPEC = "volcano.sh/task-spec"
JOB_NAME = "volcano.sh/job-name"
JOB_NAMESPACE = "volcano.sh/job-namespace"
QUEUE_NAME = "volcano.sh/queue-name"
JOB_VERSION = "volcano.sh/job-version"
TEMPLATE_UID = "volcano.sh/template-uid"
RETRY_COUNT = "volcano.sh/job-retry-count"
GROUP_NAME = "scheduling.k8s.io/group-name"
NUMA_POLICY = "volcano.sh/numa-topology-policy"
#: Job annotations createJobPod copies onto each pod (JDB min-available before max-unavailable).
COPIED_ANNOTATIONS = (
    "volcano.sh/preemptable",
    "volcano.sh/cooldown-time",
    "volcano.sh/revocable-zone",
)
JDB_ANNOTATIONS = ("volcano.sh/jdb-min-available", "volcano.sh/jdb-max-unavailable")
#: Job labels createJobPod copies onto each pod.
COPIED_LABELS = ("volcano.sh/preemptable", "volcano.sh/cooldown-time")
#: plugins/svc/const.go and plugins/env/const.go.
HOSTS_MOUNT_PATH = "/etc/volcano"
ENV_INDEX = ("VK_TASK_INDEX", "VC_TASK_INDEX")
#: The svc plugin's flags (addFlags), Go's flag package reading bools.
SVC_FLAGS = ("publish-not-ready-addresses", "disable-network-policy")
#: The ssh plugin's (plugins/ssh/const.go): the Secret's keys, where they go.
SSH_KEYS = ("id_rsa", "id_rsa.pub", "authorized_keys", "config")
SSH_ROOT_PATH = "/root/.ssh"
SSH_KEY_FLAGS = ("ssh-private-key", "ssh-public-key")
#: Annotation naming the credential of the key pair in native mode, and its keys.
SSH_CREDENTIAL_ANNOTATION = "kubetrain.io/ssh-credential"
SSH_PRIVATE_KEY = "ssh-privatekey"
SSH_PUBLIC_KEY = "ssh-publickey"
_TRUE = ("1", "t", "T", "true", "TRUE", "True")
_FALSE = ("0", "f", "F", "false", "FALSE", "False")


def task_env_key(task: str) -> str:
    """formateENVKey upper-cased: ``ps-0`` -> ``PS_0`` (VC_PS_0_HOSTS)."""
    return task.replace("-", "_").upper()


def pod_name(job: str, task: str, index: int) -> str:
    """helpers.MakePodName (PodNameFmt ``%s-%s-%d``)."""
    return f"{job}-{task}-{index}"


def task_hosts(job: VolcanoJob) -> list[tuple[str, list[tuple[str, str]]]]:
    """Each task's (host, subdomain) pairs as the svc and ssh plugins list them (GenerateHosts,
    generateSSHConfig): ``<job>-<task>-<index>`` in the job's subdomain, or the template's own
    hostname and subdomain, which is one host however many replicas."""
    out = []
    for task, name in zip(job.spec.tasks, job.task_names(), strict=True):
        pod = task.template.get("spec") or {}
        own, sub = pod.get("hostname"), pod.get("subdomain") or job.name
        hosts = [(own, sub)] if own and task.replicas else [
            (pod_name(job.name, name, i), sub) for i in range(task.replicas)
        ]  # fmt: skip
        out.append((name, hosts))
    return out


def generate_hosts(job: VolcanoJob) -> dict[str, str]:
    """svc.GenerateHosts: per task, ``<task>.host`` (one host a line), ``VC_<TASK>_HOSTS``
    (comma-separated) and ``VC_<TASK>_NUM``."""
    data: dict[str, str] = {}
    for name, pairs in task_hosts(job):
        hosts = [f"{host}.{sub}" for host, sub in pairs]
        data[f"{name.replace('-', '_')}.host"] = "\n".join(hosts)
        data[f"VC_{task_env_key(name)}_HOSTS"] = ",".join(hosts)
        data[f"VC_{task_env_key(name)}_NUM"] = str(len(hosts))
    return data


def svc_flags(args: list[str], path: tuple[str | int, ...]) -> dict[str, bool]:
    """The svc plugin's arguments as Go's flag package parses them (``--name``, ``-name``,
    ``--name=true``); an argument it does not know is refused (the plugin would stop reading
    its arguments there, with only a log line)."""
    flags = dict.fromkeys(SVC_FLAGS, False)
    for i, arg in enumerate(args):
        name, eq, value = arg.lstrip("-").partition("=")
        # Only the flag's name is quoted: an argument's value is never echoed.
        if not arg.startswith("-") or name not in flags:
            raise BuildProblem(
                (*path, i),
                f"{_flag_name(arg)} is not a flag of the svc plugin ({', '.join(SVC_FLAGS)})",
            )
        if eq and value not in _TRUE + _FALSE:
            raise BuildProblem((*path, i), f"--{name} takes true or false")
        flags[name] = not eq or value in _TRUE
    return flags


def _flag_name(arg: str) -> str:
    """What a message may quote of an argument: a flag up to its ``=`` (at most 64
    characters); nothing of a value."""
    if not arg.startswith("-"):
        return "a value where a flag belongs"
    return repr(arg.partition("=")[0][:64])


def ssh_flags(args: list[str], path: tuple[str | int, ...]) -> dict[str, Any]:
    """The ssh plugin's arguments (addFlags, v1.15.1): ``--ssh-key-file-path`` and
    ``--ssh-port`` (an invalid port falls back to 22, validateSSHPort). ``--ssh-private-key``
    and ``--ssh-public-key`` would write a key into the repository: refused (the key pair comes
    from the stack's secret store)."""
    flags: dict[str, Any] = {"ssh-key-file-path": SSH_ROOT_PATH, "ssh-port": 22}
    i = 0
    while i < len(args):
        arg, at = args[i], (*path, i)
        name, eq, value = arg.lstrip("-").partition("=")
        if not arg.startswith("-") or name not in (*flags, *SSH_KEY_FLAGS):
            raise BuildProblem(
                at,
                f"{_flag_name(arg)} is not a flag of the ssh plugin "
                f"({', '.join([*flags, *SSH_KEY_FLAGS])})",
            )
        if name in SSH_KEY_FLAGS:
            raise BuildProblem(at, f"--{name} writes key material into the repository: the key "
                               "pair comes from the stack's secret store (the "
                               f"{SSH_CREDENTIAL_ANNOTATION} annotation names it)")  # fmt: skip
        if not eq:
            i += 1
            if i == len(args):
                raise BuildProblem(at, f"--{name} needs a value")
            value = args[i]
        if name == "ssh-port":
            port = int(value) if value.isascii() and value.isdigit() and len(value) < 7 else 0
            flags[name] = port if 0 < port <= 65535 else 22
        elif not value.startswith("/"):
            raise BuildProblem(at, "--ssh-key-file-path needs an absolute path")
        else:
            flags[name] = value
        i += 1
    return flags


def _pod_usage(pod_spec: dict[str, Any]) -> dict[str, Quantity]:
    """util.GetPodQuotaUsage of a pod made of the template alone (quota's PodUsageFunc: the
    pod's requests and limits, as resourcehelper sums them, under the quota's names; an
    extended resource's ``requests.<name>`` also under ``<name>``)."""
    requests = pod_resources(pod_spec, "requests")
    limits = pod_resources(pod_spec, "limits")
    one = parse_quantity(1)
    usage: dict[str, Quantity] = {"count/pods": one, "pods": one}
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            usage[name] = usage[f"requests.{name}"] = requests[name]
        if name in limits:
            usage[f"limits.{name}"] = limits[name]
    for name, q in requests.items():
        if name.startswith("hugepages-"):
            usage[name] = usage[f"requests.{name}"] = q
        elif "/" in name and "kubernetes.io/" not in name:  # IsExtendedResourceName
            usage[f"requests.{name}"] = usage[name] = q
    return usage


class VolcanoExpansion:
    """The objects Volcano's job controller creates for one Job."""

    def __init__(self, job: VolcanoJob, ctx: BuildContext) -> None:
        self.job = job
        self.ctx = ctx
        self.name = job.name
        self.namespace = job.namespace
        self.plugins = job.plugins()
        self.tasks = list(zip(job.spec.tasks, job.task_names(), strict=True))

    def refuse_what_needs_the_controller(self) -> None:
        spec = self.job.spec
        for name in sorted(self.plugins):
            if name not in NATIVE_PLUGINS:
                raise BuildProblem(
                    ("spec", "plugins", name),
                    f"needs Volcano's job controller for its {name} plugin: use operator mode "
                    "(kubetrain.io/mode: operator)",
                )
        if spec.volumes:
            raise BuildProblem(
                ("spec", "volumes"),
                "needs Volcano's job controller (it names each volume at random and creates "
                "the claims): mount a claim in the task templates, or use operator mode",
            )
        for i, (task, _) in enumerate(self.tasks):
            controller_only = {
                "dependsOn": task.depends_on,
                "partitionPolicy": task.partition_policy,
            }
            for key, value in controller_only.items():
                if value is not None:
                    raise BuildProblem(
                        ("spec", "tasks", i, key),
                        "needs Volcano's job controller: use operator mode",
                    )

    def warn(self) -> None:
        spec, ctx = self.job.spec, self.ctx
        if spec.policies:
            ctx.warn(("spec", "policies"), "has no effect in native mode: no controller acts on "
                     "the job's events; use operator mode")  # fmt: skip
        for i, (task, _) in enumerate(self.tasks):
            if task.policies:
                ctx.warn(("spec", "tasks", i, "policies"), "has no effect in native mode: no "
                         "controller acts on the task's events; use operator mode")  # fmt: skip
        for key, value in (("minSuccess", spec.min_success),
                           ("ttlSecondsAfterFinished", spec.ttl_seconds_after_finished),
                           ("networkTopology", spec.network_topology)):  # fmt: skip
            if value is not None:
                ctx.warn(("spec", key), "has no effect in native mode: it needs Volcano's job "
                         "controller; use operator mode")  # fmt: skip

    def build(self) -> list[Manifest]:
        self.refuse_what_needs_the_controller()
        self.warn()
        objs: list[Manifest] = [self.pod_group()]
        for task, name in self.tasks:
            objs.extend(self.pod(task, name, i) for i in range(task.replicas))
        if "svc" in self.plugins:
            objs.extend(self.svc_objects())
        if "ssh" in self.plugins:
            objs.extend(self.ssh_secret())
        return objs

    def own_labels(self, task: str | None = None) -> dict[str, str]:
        """kubetrain's labels (app.kubernetes.io/*: the kind, the job, a pod's task), as on every
        kind's objects; the controller's own are Volcano's."""
        return app_labels(APP_NAME, self.name, task)

    # -- the PodGroup (createOrUpdatePodGroup) ------------------------------------------------

    def pod_group(self) -> Manifest:
        job = self.job
        spec: dict[str, Any] = {
            "minMember": job.min_available(),
            "minTaskMember": {name: job.min_task_member(t) for t, name in self.tasks},
            "queue": job.queue(),
            "minResources": self.min_resources(),
        }
        if job.spec.priority_class_name:
            spec["priorityClassName"] = job.spec.priority_class_name
        labels = merge(self.own_labels(), job.metadata.labels)
        meta = object_meta(self.name, self.namespace, labels, job.metadata.annotations)
        return manifest(POD_GROUP_API_VERSION, "PodGroup", meta, spec=spec)

    def min_resources(self) -> dict[str, str]:
        """calcPGMinResources: tasks in the order of their template's PriorityClass value,
        highest first (:func:`.gang.priority_of`; Go's ``sort.Sort`` keeps the job's order
        among equal ones for up to 12 tasks, an insertion sort, and kubetrain for any), then
        CalcFirstCountResources when the job's minAvailable is below the tasks' minimums
        summed, else CalcPGMinResources (the tasks' minimums, filled up to minAvailable)."""
        job = self.job
        count = job.min_available()
        total: dict[str, Quantity] = {}

        def add(task: VolcanoTask, pods: int) -> None:
            if pods <= 0:
                return
            for name, q in _pod_usage(self.pod_spec(task)).items():
                scaled = Quantity(q.value * pods, q.format)
                total[name] = total[name] + scaled if name in total else scaled

        priorities = self.ctx.priorities
        tasks = sorted(
            (t for t, _ in self.tasks),
            key=lambda t: -priority_of(t.template.get("spec") or {}, priorities),
        )
        minimums = [job.min_task_member(t) for t in tasks]
        if count < sum(minimums):
            for task in tasks:  # CalcFirstCountResources
                if count <= task.replicas:
                    add(task, count)
                    break
                add(task, task.replicas)
                count -= task.replicas
        else:
            placed = 0  # CalcPGMinResources: the minimums first (every one is set by then)
            for task, minimum in zip(tasks, minimums, strict=True):
                take = min(minimum, count - placed)
                add(task, take)
                placed += take
                if placed >= count:
                    break
            left = count - placed
            for task, minimum in zip(tasks, minimums, strict=True):
                if left <= 0 or minimum == task.replicas:
                    continue
                take = min(task.replicas - minimum, left)
                add(task, take)
                left -= take
        return {name: format_quantity(q) for name, q in sorted(total.items())}

    # -- the pods (createJobPod, then each plugin's OnPodCreate) ------------------------------

    def pod_spec(self, task: VolcanoTask) -> dict[str, Any]:
        """The task's pod spec as the Job of operator mode holds it (GPUs normalised, Pod
        Security applied): what the controller copies and sums."""
        settings = self.ctx.settings
        spec = normalize_pod_gpus(plain_copy(task.template.get("spec") or {}),
                                  settings.gpu_resource)  # fmt: skip
        apply_pod_security(spec, settings.pod_security)
        return spec

    def pod(self, task: VolcanoTask, name: str, index: int) -> Manifest:
        job = self.job
        template = task.template
        spec = self.pod_spec(task)
        if not spec.get("schedulerName"):
            spec["schedulerName"] = job.scheduler_name()
        if not spec.get("priorityClassName") and job.spec.priority_class_name:
            spec["priorityClassName"] = job.spec.priority_class_name
        meta = template.get("metadata") or {}
        annotations = dict(meta.get("annotations") or {})
        annotations.update(
            {
                TASK_INDEX: str(index),
                TASK_SPEC: name,
                GROUP_NAME: self.name,
                JOB_NAME: self.name,
                QUEUE_NAME: job.queue(),
                JOB_VERSION: "0",
                TEMPLATE_UID: f"{self.name}-{name}",
                RETRY_COUNT: "0",
            }
        )
        if task.topology_policy:
            annotations[NUMA_POLICY] = task.topology_policy
        job_annotations = job.metadata.annotations
        for key in COPIED_ANNOTATIONS:
            if key in job_annotations:
                annotations[key] = job_annotations[key]
        for key in JDB_ANNOTATIONS:
            if key in job_annotations:
                annotations[key] = job_annotations[key]
                break
        labels = merge(self.own_labels(name), meta.get("labels"))
        labels.update(
            {
                TASK_INDEX: str(index),
                JOB_NAME: self.name,
                TASK_SPEC: name,
                JOB_NAMESPACE: self.namespace,
                QUEUE_NAME: job.queue(),
            }
        )
        for key in COPIED_LABELS:
            if key in job.metadata.labels:
                labels[key] = job.metadata.labels[key]
        pod_meta = object_meta(pod_name(self.name, name, index), self.namespace, labels,
                               annotations)  # fmt: skip
        pod = manifest("v1", "Pod", pod_meta, spec=spec)
        for plugin in sorted(self.plugins):
            if plugin == "env":
                self.env_on_pod(spec, index)
            elif plugin == "ssh":
                self.ssh_on_pod(spec)
            elif plugin == "svc":
                self.svc_on_pod(pod)
        return pod

    def env_on_pod(self, spec: dict[str, Any], index: int) -> None:
        """env.OnPodCreate: the pod's index in its task, under two names, on every container."""
        env = [{"name": n, "value": str(index)} for n in ENV_INDEX]
        for key in ("containers", "initContainers"):
            for container in spec.get(key) or []:
                container["env"] = [*(container.get("env") or []), *plain_copy(env)]

    def svc_on_pod(self, pod: Manifest) -> None:
        """svc.OnPodCreate: hostname and subdomain, every task's host list from the ConfigMap,
        the ConfigMap mounted at /etc/volcano in every container."""
        spec = pod["spec"]
        spec.setdefault("hostname", pod["metadata"]["name"])
        spec.setdefault("subdomain", self.name)
        config_map = f"{self.name}-svc"
        env = [
            {"name": f"VC_{task_env_key(name)}_{what}",
             "valueFrom": {"configMapKeyRef": {"name": config_map,
                                               "key": f"VC_{task_env_key(name)}_{what}"}}}
            for _, name in self.tasks for what in ("HOSTS", "NUM")
        ]  # fmt: skip
        mount = {"mountPath": HOSTS_MOUNT_PATH, "name": config_map}
        spec["volumes"] = [*(spec.get("volumes") or []),
                           {"name": config_map, "configMap": {"name": config_map}}]  # fmt: skip
        for key in ("containers", "initContainers"):
            for container in spec.get(key) or []:
                container["env"] = [*(container.get("env") or []), *plain_copy(env)]
                container["volumeMounts"] = [*(container.get("volumeMounts") or []), dict(mount)]

    # -- the ssh plugin (OnJobAdd, mountRsaKey) -----------------------------------------------

    def ssh_on_pod(self, spec: dict[str, Any]) -> None:
        """mountRsaKey: the Secret's four keys under ``.ssh`` in a volume of the Secret's name,
        mounted by subPath at the key path on every container (mode 0600 at /root/.ssh, 0644
        elsewhere)."""
        path = ssh_flags(self.plugins["ssh"], ("spec", "plugins", "ssh"))["ssh-key-file-path"]
        name = f"{self.name}-ssh"
        items = [{"key": k, "path": f".ssh/{k}"} for k in SSH_KEYS]
        mode = 0o600 if path == SSH_ROOT_PATH else 0o644
        volume = {"name": name, "secret": {"secretName": name, "items": items,
                                           "defaultMode": mode}}  # fmt: skip
        spec["volumes"] = [*(spec.get("volumes") or []), volume]
        for key in ("containers", "initContainers"):
            for container in spec.get(key) or []:
                mount = {"mountPath": path, "subPath": ".ssh", "name": name}
                container["volumeMounts"] = [*(container.get("volumeMounts") or []), mount]

    def ssh_config(self, port: int) -> str:
        """generateSSHConfig (v1.15.1): no host key checking, and each pod's short host name
        for its name in the job's subdomain, on ``port``."""
        lines = ["StrictHostKeyChecking no", "UserKnownHostsFile /dev/null"]
        for _, pairs in task_hosts(self.job):
            for host, sub in pairs:
                lines += [f"Host {host}", f"  HostName {host}.{sub}", f"  Port {port}"]
        return "\n".join(lines) + "\n"

    def ssh_secret(self) -> list[Manifest]:
        """The ``<job>-ssh`` Secret: the key pair from the stack's secret store (the controller
        generates one per job; kubetrain writes no key material), ``authorized_keys`` the
        public key, and the ssh ``config``, which names hosts only."""
        flags = ssh_flags(self.plugins["ssh"], ("spec", "plugins", "ssh"))
        annotations = self.job.metadata.annotations
        credential = annotations.get(SSH_CREDENTIAL_ANNOTATION, f"{self.name}-ssh")
        field = ("metadata", "annotations", SSH_CREDENTIAL_ANNOTATION)
        spec = SecretSpec(
            name=f"{self.name}-ssh",
            namespace=self.namespace,
            type="Opaque",
            labels=self.own_labels(),
            data={
                "id_rsa": CredentialRef(credential, SSH_PRIVATE_KEY),
                "id_rsa.pub": CredentialRef(credential, SSH_PUBLIC_KEY),
                "authorized_keys": CredentialRef(credential, SSH_PUBLIC_KEY),
            },
            field=field if SSH_CREDENTIAL_ANNOTATION in annotations else ("spec", "plugins", "ssh"),
            settings={"config": self.ssh_config(flags["ssh-port"])},
        )
        return secret_manifests(spec, self.ctx)

    # -- the svc plugin's objects (OnJobAdd) --------------------------------------------------

    def svc_objects(self) -> list[Manifest]:
        flags = svc_flags(self.plugins["svc"], ("spec", "plugins", "svc"))
        selector = {JOB_NAME: self.name, JOB_NAMESPACE: self.namespace}
        config_map = manifest(
            "v1",
            "ConfigMap",
            object_meta(f"{self.name}-svc", self.namespace, self.own_labels()),
            data=generate_hosts(self.job),
        )
        service_spec: dict[str, Any] = {"clusterIP": "None", "selector": dict(selector)}
        if flags["publish-not-ready-addresses"]:
            service_spec["publishNotReadyAddresses"] = True
        service = manifest(
            "v1",
            "Service",
            object_meta(self.name, self.namespace, self.own_labels()),
            spec=service_spec,
        )
        out = [config_map, service]
        if not flags["disable-network-policy"]:
            policy_spec = {
                "podSelector": {"matchLabels": dict(selector)},
                "ingress": [{"from": [{"podSelector": {"matchLabels": dict(selector)}}]}],
                "policyTypes": ["Ingress"],
            }
            out.append(
                manifest(
                    "networking.k8s.io/v1",
                    "NetworkPolicy",
                    object_meta(self.name, self.namespace, self.own_labels()),
                    spec=policy_spec,
                )
            )
        return out


def custom_resource(job: VolcanoJob, ctx: BuildContext) -> Manifest:
    """The Job as Volcano's mutating webhook stores it, GPUs normalised and Pod Security
    applied to each task's template as in native mode."""
    doc = job.defaulted_document()
    for task in doc["spec"]["tasks"]:
        pod_spec = task["template"]["spec"] = task["template"].get("spec") or {}
        normalize_pod_gpus(pod_spec, ctx.settings.gpu_resource)
        apply_pod_security(pod_spec, ctx.settings.pod_security)
    labels = merge(app_labels(APP_NAME, job.name), job.metadata.labels)
    meta = object_meta(job.name, job.namespace, labels, job.metadata.annotations)
    return manifest(job.API_VERSION, job.KIND, meta, spec=doc["spec"])


@builder(VolcanoJob)
def build_volcanojob(job: VolcanoJob, mode: Mode, ctx: BuildContext) -> list[Manifest]:
    if mode == Mode.OPERATOR:
        if "ssh" in job.plugins():  # no key in the repository, in either mode
            ssh_flags(job.plugins()["ssh"], ("spec", "plugins", "ssh"))
        return [custom_resource(job, ctx)]
    return VolcanoExpansion(job, ctx).build()


@locator(VolcanoJob)
def pod_spec_origins(job: VolcanoJob, obj: Manifest) -> Origins:
    """A pod's spec comes from its task's template."""
    if catalog.of(obj).key != catalog.POD:
        return []
    task = ((obj.get("metadata") or {}).get("annotations") or {}).get(TASK_SPEC)
    names = job.task_names()
    if task not in names:
        return []
    return [(("spec",), ("spec", "tasks", names.index(task), "template", "spec"))]
