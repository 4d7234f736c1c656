"""TrainingJob expansion: the objects the PaddlePaddle EDL controller created, or the CRD and the
custom resource for a cluster that runs it.

Fidelity target: the EDL v0.2.0 controller, ``pkg/controller.go`` (``onAdd``) with the parser it
calls, ``pkg/jobparser.go`` (``DefaultJobParser``), and the pod runtime it starts, the image's
``paddle_k8s`` script. (``pkg/updater/jobparser.go`` is a later rewrite the v0.2.0 controller
never ran.) Native mode gives, per
job, a master ReplicaSet ``<job>-master`` (fault-tolerant jobs only), a pserver ReplicaSet
``<job>-pserver`` and a trainer Job ``<job>-trainer``, plus the ServiceAccount, Role and
RoleBinding the pods need to list their peers. Every place where kubetrain does not do what the
controller did is marked ``Fix:`` with what the controller did.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models.base import Mode
from ..models.resources import normalize_gpus
from ..models.trainingjob import (
    MASTER_LABEL,
    PLURAL,
    PSERVER_LABEL,
    TRAINER_LABEL,
    TrainingJob,
    TrainingJobStatus,
)
from .context import BuildContext
from .crd import PrinterColumn, custom_resource_definition, register_crd
from .gang import GangJob, with_gang_scheduling
from .kueue import QUEUE_LABEL, kueue_labels, label_jobs
from .lifecycle import SKIP_AWAIT
from .meta import app_labels, gpu_alias_warnings, manifest, merge, object_meta, plain_copy
from .registry import builder
from .security import apply_pod_security

__all__ = [
    "APP_NAME",
    "ETCD_IMAGE",
    "MASTER_PORT",
    "ParsedJob",
    "build_trainingjob",
    "custom_resource",
    "pod_env",
    "pod_ports",
]

#: ``app.kubernetes.io/name`` of everything a TrainingJob expands to.
APP_NAME = "trainingjob"
ETCD_IMAGE = "quay.io/coreos/etcd:v3.2.1"
MASTER_PORT = 8080
ETCD_PORT = 2379
#: The master container's resources when ``spec.master.resources`` is empty (the fixed
#: ``masterResource`` of EDL's later ``pkg/updater/jobparser.go``; see ``parse_to_master``).
MASTER_RESOURCES: dict[str, Any] = {
    "limits": {"cpu": "2", "memory": "1Gi"},
    "requests": {"cpu": "1", "memory": "500Mi"},
}
CUDA_LIBRARY_PATH = "/usr/local/cuda/lib64"

register_crd(
    TrainingJob,
    plural=PLURAL,
    short_names=("tj",),
    status=TrainingJobStatus,
    printer_columns=(
        PrinterColumn("State", "string", ".status.state", "Created, Running, Failed or Succeed"),
        PrinterColumn("Trainers", "integer", ".spec.trainer.min-instance", "Trainers started"),
        PrinterColumn("Max", "integer", ".spec.trainer.max-instance", "Trainers at most"),
        PrinterColumn("Pservers", "integer", ".spec.pserver.min-instance", "Parameter servers"),
        PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
    ),
)


def pod_ports(job: TrainingJob) -> list[dict[str, Any]]:
    """``jobport-<n>`` for each of the job's ports (the controller's ``podPorts``)."""
    return [{"name": f"jobport-{port}", "containerPort": port} for port in job.spec.ports()]


def pod_env(job: TrainingJob, gpu_resource: str) -> list[dict[str, Any]]:
    """The controller's ``podEnv``: the same 16 variables, in its order, on every container that
    gets them. Values are decimal strings."""
    spec = job.spec
    trainer = spec.trainer

    def field_ref(path: str) -> dict[str, Any]:
        return {"fieldRef": {"apiVersion": "v1", "fieldPath": path}}

    env: list[dict[str, Any]] = [
        {"name": "PADDLE_JOB_NAME", "value": job.name},
        # TRAINERS, PSERVERS and the gradient servers are min-instance even for an elastic job,
        # as with the controller: it is the count the job starts with.
        {"name": "TRAINERS", "value": str(trainer.min_instance)},
        {"name": "PSERVERS", "value": str(spec.pserver.min_instance)},
        {"name": "ENTRY", "value": trainer.entrypoint},
        # Deprecated duplicate of ENTRY, kept because images of that time read it.
        {"name": "TOPOLOGY", "value": trainer.entrypoint},
        {"name": "TRAINER_PACKAGE", "value": trainer.workspace},
        {"name": "PADDLE_INIT_PORT", "value": str(spec.port)},
        # Fix: the controller took the GPU count from requests (0 when GPUs are given in limits
        # only, the usual way) and knew only alpha.kubernetes.io/nvidia-gpu; see trainer_count.
        {"name": "PADDLE_INIT_TRAINER_COUNT", "value": str(job.trainer_count(gpu_resource))},
        {"name": "PADDLE_INIT_PORTS_NUM", "value": str(spec.ports_num)},
        {"name": "PADDLE_INIT_PORTS_NUM_FOR_SPARSE", "value": str(spec.ports_num_for_sparse)},
        {"name": "PADDLE_INIT_NUM_GRADIENT_SERVERS", "value": str(trainer.min_instance)},
        {"name": "PADDLE_INIT_NUM_PASSES", "value": str(spec.passes)},
        {"name": "PADDLE_INIT_USE_GPU", "value": "1" if job.need_gpu(gpu_resource) else "0"},
        {"name": "LD_LIBRARY_PATH", "value": CUDA_LIBRARY_PATH},
        {"name": "NAMESPACE", "valueFrom": field_ref("metadata.namespace")},
        {"name": "POD_IP", "valueFrom": field_ref("status.podIP")},
    ]
    # No ETCD_ENDPOINT: spec.master.etcd-endpoint was never read by the parser, and paddle_k8s
    # always talks to the etcd sidecar (127.0.0.1:2379 from the master, $MASTER_IP:2379 from the
    # pservers and trainers), so an endpoint passed on would be ignored by the pods too.
    return env


class ParsedJob:
    """One TrainingJob being expanded (the controller's ``DefaultJobParser``)."""

    def __init__(self, job: TrainingJob, ctx: BuildContext) -> None:
        self.job = job
        self.name = job.name
        self.namespace = job.namespace
        self.settings = ctx.settings
        self.gpu_resource = ctx.settings.gpu_resource
        self.env = pod_env(job, self.gpu_resource)
        self.ports = pod_ports(job)

    # --- shared pieces ----------------------------------------------------------------------

    def labels(self, role: str | None = None) -> dict[str, str]:
        return app_labels(APP_NAME, self.name, role)

    def resources(self, resources: Mapping[str, Any]) -> dict[str, Any] | None:
        """A container's resources with GPUs under the stack's gpuResource, requests = limits.

        Fix: the controller passed resources through unchanged, so GPUs stayed under whichever
        name the user wrote, and a GPU request without a limit was rejected by the API server.
        """
        return normalize_gpus(plain_copy(dict(resources)), self.gpu_resource) or None

    def pod_spec(self, containers: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        spec = self.job.spec
        pod: dict[str, Any] = {
            "serviceAccountName": self.job.service_account_name(),
            "containers": containers,
            "volumes": plain_copy(spec.volumes) or None,
            "nodeSelector": dict(spec.node_selector) or None,
            # As the parser: the job's imagePullSecrets (and hostNetwork, below) on every pod.
            "imagePullSecrets": plain_copy(spec.image_pull_secrets) or None,
            **extra,
        }
        if spec.host_network:
            pod["hostNetwork"] = True
            # Fix: the controller left the default dnsPolicy, with which a host-network pod
            # resolves names with the node's resolver and cannot reach cluster services.
            pod["dnsPolicy"] = "ClusterFirstWithHostNet"
        return apply_pod_security(pod, self.settings.pod_security)

    def template(self, role: str, selector: dict[str, str], pod: dict[str, Any]) -> dict[str, Any]:
        return {"metadata": {"labels": merge(self.labels(role), selector)}, "spec": pod}

    def replica_set(
        self, role: str, replicas: int, selector: dict[str, str], pod: dict[str, Any]
    ) -> dict[str, Any]:
        # Fix: the controller wrote Kind "extensions/v1beta1" and APIVersion "ReplicaSet" (the
        # wrong way round) and relied on extensions/v1beta1 defaulting the selector from the
        # template labels; apps/v1 requires an explicit selector. The controller also put no
        # labels on the ReplicaSet itself.
        meta = object_meta(
            self.job.role_name(role), self.namespace, merge(self.labels(role), selector)
        )
        return manifest(
            "apps/v1",
            "ReplicaSet",
            meta,
            spec={
                "replicas": replicas,
                "selector": {"matchLabels": dict(selector)},
                "template": self.template(role, selector, pod),
            },
        )

    # --- the controller's parsers -----------------------------------------------------------

    def parse_to_master(self) -> dict[str, Any]:
        """The master ReplicaSet of a fault-tolerant job (``ParseToMaster``): the master and its
        etcd sidecar. ``spec.master.etcd-endpoint`` changes nothing, as with EDL: the parser never
        read it and the runtime only knows the sidecar (see :func:`pod_env`)."""
        spec = self.job.spec
        master: dict[str, Any] = {
            "name": "master",
            "image": spec.image,
            "imagePullPolicy": "Always",
            "command": ["paddle_k8s", "start_master"],
            # Fix: the controller declared etcd's port 2379 on this container; it is on the
            # etcd sidecar, which serves it.
            "ports": [{"name": "master-port", "containerPort": MASTER_PORT}],
            "volumeMounts": plain_copy(spec.volume_mounts) or None,
            # Deviation: the parser passed spec.master.resources through, so an empty one left
            # the master BestEffort (first to be evicted, taking the job's etcd with it);
            # kubetrain then uses the fixed values of EDL's later updater (masterResource).
            "resources": self.resources(spec.master.resources or MASTER_RESOURCES),
        }
        containers = [master, self.etcd_container()]
        selector = {MASTER_LABEL: self.name}
        return self.replica_set("master", 1, selector, self.pod_spec(containers))

    def etcd_container(self) -> dict[str, Any]:
        """A single-member etcd on the master's pod IP (the controller's ``getEtcdPodSpec``)."""
        ip = "$(POD_IP)"
        command = [
            "etcd",
            "-name",
            "etcd0",
            "-advertise-client-urls",
            f"http://{ip}:{ETCD_PORT},http://{ip}:4001",
            "-listen-client-urls",
            f"http://0.0.0.0:{ETCD_PORT},http://0.0.0.0:4001",
            "-initial-advertise-peer-urls",
            f"http://{ip}:2380",
            "-listen-peer-urls",
            "http://0.0.0.0:2380",
            "-initial-cluster",
            f"etcd0=http://{ip}:2380",
            "-initial-cluster-state",
            "new",
        ]
        return {
            "name": "etcd",
            "image": ETCD_IMAGE,
            "imagePullPolicy": "Always",
            "command": command,
            "ports": [{"name": "etcd-port", "containerPort": ETCD_PORT}],
            "env": plain_copy(self.env),
        }

    def parse_to_pserver(self) -> dict[str, Any]:
        """The pserver ReplicaSet: ``pserver.min-instance`` replicas."""
        spec = self.job.spec
        container = {
            "name": "pserver",
            "image": spec.image,
            # No imagePullPolicy, as with the controller: the API default applies.
            "command": [
                "paddle_k8s",
                "start_new_pserver" if spec.fault_tolerant else "start_pserver",
            ],
            "ports": plain_copy(self.ports),
            "env": plain_copy(self.env),
            # Fix: the controller attached spec.volumes to the pserver pods but never mounted
            # them; the pservers mount them like the trainers.
            "volumeMounts": plain_copy(spec.volume_mounts) or None,
            "resources": self.resources(spec.pserver.resources),
        }
        selector = {PSERVER_LABEL: self.name}
        return self.replica_set(
            "pserver", spec.pserver.min_instance, selector, self.pod_spec([container])
        )

    def parse_to_trainer(self) -> dict[str, Any]:
        """The trainer Job: ``trainer.min-instance`` pods at once, never restarted in place."""
        spec = self.job.spec
        # Fault-tolerant jobs run the etcd-aware "new" pserver and trainer of paddle_k8s; others
        # the v2 ones. (EDL v0.2.0's parser; earlier parsers had the two the wrong way round.)
        command = (
            ["paddle_k8s", "start_new_trainer"]
            if spec.fault_tolerant
            else ["paddle_k8s", "start_trainer", "v2"]
        )
        container = {
            "name": "trainer",
            "image": spec.image,
            "imagePullPolicy": "Always",
            "command": command,
            "ports": plain_copy(self.ports),
            "env": plain_copy(self.env),
            "volumeMounts": plain_copy(spec.volume_mounts) or None,
            "resources": self.resources(spec.trainer.resources),
        }
        selector = {TRAINER_LABEL: self.name}
        pod = self.pod_spec([container], restartPolicy="Never")
        # Fix: the controller put no labels on the Job itself, only on its pods.
        meta = object_meta(
            self.job.role_name("trainer"),
            self.namespace,
            merge(self.labels("trainer"), selector),
            # The trainers run until the training ends; Pulumi would otherwise wait for the Job
            # to complete before `pulumi up` returns (render writes it too, so both agree).
            {SKIP_AWAIT: "true"},
        )
        # No completions, as with the controller: the Job ends when a trainer succeeds and the
        # others have stopped, and EDL may raise parallelism up to max-instance.
        return manifest(
            "batch/v1",
            "Job",
            meta,
            spec={
                "parallelism": spec.trainer.min_instance,
                "template": self.template("trainer", selector, pod),
            },
        )

    def peer_access(self) -> list[dict[str, Any]]:
        """ServiceAccount, Role and RoleBinding: the pods' runtime (paddle_k8s) lists the job's
        pods to find the master and the pservers. The controller relied on the namespace's
        default ServiceAccount having that right."""
        name = self.job.service_account_name()
        labels = self.labels()
        rbac = "rbac.authorization.k8s.io"
        return [
            manifest("v1", "ServiceAccount", object_meta(name, self.namespace, labels)),
            manifest(
                f"{rbac}/v1",
                "Role",
                object_meta(name, self.namespace, labels),
                rules=[
                    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}
                ],
            ),
            manifest(
                f"{rbac}/v1",
                "RoleBinding",
                object_meta(name, self.namespace, labels),
                roleRef={"apiGroup": rbac, "kind": "Role", "name": name},
                subjects=[{"kind": "ServiceAccount", "name": name, "namespace": self.namespace}],
            ),
        ]

    def warn_rewrites(self, ctx: BuildContext) -> None:
        """Say what native mode does not do as the document asks: elastic scaling (the EDL
        controller's autoscaler), and GPUs written under another resource name."""
        spec = self.job.spec
        for role, part in (("trainer", spec.trainer), ("pserver", spec.pserver)):
            if part.max_instance > part.min_instance:
                ctx.warn(
                    ("spec", role, "max-instance"),
                    f"native mode runs min-instance ({part.min_instance}) {role}s: scaling up to "
                    f"max-instance ({part.max_instance}) needs the EDL controller (operator mode)",
                )
        warn_gpu_aliases(self.job, ctx)

    def build(self) -> list[dict[str, Any]]:
        """Every object, in the controller's creation order (master, pserver, trainer)."""
        objects = self.peer_access()
        if self.job.spec.fault_tolerant:
            objects.append(self.parse_to_master())
        objects.append(self.parse_to_pserver())
        objects.append(self.parse_to_trainer())
        gang = GangJob(self.name, self.namespace, self.labels())
        return with_gang_scheduling(objects, gang, self.settings)


def warn_gpu_aliases(job: TrainingJob, ctx: BuildContext) -> None:
    """GPUs written under another name than the stack's gpuResource are renamed (both modes)."""
    spec = job.spec
    for role, resources in (
        ("trainer", spec.trainer.resources),
        ("pserver", spec.pserver.resources),
        ("master", spec.master.resources),
    ):
        for path, message in gpu_alias_warnings(dict(resources or {}), ctx.settings.gpu_resource):
            ctx.warn(("spec", role, "resources", *path), message)


def _quantities_as_strings(resources: Mapping[str, Any]) -> dict[str, Any]:
    """Fractional numbers (``cpu: 0.5``) become strings: a CRD's quantities are int-or-string."""
    out = dict(resources)
    for part in ("limits", "requests"):
        if isinstance(values := resources.get(part), Mapping):
            out[part] = {k: str(v) if isinstance(v, float) else v for k, v in values.items()}
    return out


def custom_resource(job: TrainingJob, ctx: BuildContext) -> dict[str, Any]:
    """The TrainingJob custom resource with the controller's defaults filled in.

    GPUs are normalised as in native mode, under the stack's gpuResource with requests equal to
    limits: with ``gpuResource: alpha.kubernetes.io/nvidia-gpu`` this is what lets the EDL
    controller, which reads that name from requests, see the trainers' GPUs.
    """
    warn_gpu_aliases(job, ctx)
    spec: dict[str, Any] = job.spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    for role in ("trainer", "pserver", "master"):
        part = spec[role]
        resources = normalize_gpus(part.get("resources") or {}, ctx.settings.gpu_resource)
        if resources:
            part["resources"] = _quantities_as_strings(resources)
        else:
            part.pop("resources", None)
    for key in ("volumes", "VolumeMounts", "imagePullSecrets", "NodeSelector", "master"):
        if not spec[key]:
            del spec[key]
    labels = merge(app_labels(APP_NAME, job.name), job.metadata.labels)
    meta = object_meta(job.name, job.namespace, labels, job.metadata.annotations)
    return manifest(TrainingJob.API_VERSION, TrainingJob.KIND, meta, spec=spec)


@builder(TrainingJob)
def build_trainingjob(job: TrainingJob, mode: Mode, ctx: BuildContext) -> list[dict[str, Any]]:
    """Native mode: the EDL controller's objects. Operator mode: the TrainingJob CRD, generated
    from kubetrain's model (so a GitOps tool installs it before the custom resources), and the
    custom resource."""
    if mode == Mode.OPERATOR:
        return [
            custom_resource_definition(TrainingJob, ctx.settings.version),
            custom_resource(job, ctx),
        ]
    parsed = ParsedJob(job, ctx)
    parsed.warn_rewrites(ctx)
    objs = parsed.build()
    queue = kueue_labels(job.metadata.labels)
    if queue:
        # Kueue's batch/job integration admits the trainer Job; it integrates no ReplicaSet.
        label_jobs(objs, queue)
        ctx.warn(
            ("metadata", "labels", QUEUE_LABEL),
            "Kueue admits the trainer Job only: it integrates no ReplicaSet, so the pserver "
            "(and master) pods start without waiting for the queue's quota",
        )
    return objs
