"""MPIJob expansion: the objects the MPI Operator creates for a ``kubeflow.org/v2beta1`` MPIJob.

Fidelity target: kubeflow/mpi-operator v0.8.0, ``pkg/controller/mpi_job_controller.go``:

* ``newJobService``: a headless Service named after the job, selecting every pod of it
  (``publishNotReadyAddresses`` when the launcher is a worker);
* ``newConfigMap`` and ``updateDiscoverHostsInConfigMap``: ``<job>-config`` holding the
  ``hostfile`` (``<host> slots=<n>`` for OpenMPI, ``<host>:<n>`` for Intel MPI and MPICH; the
  launcher first when it runs as a worker) and ``discover_hosts.sh``;
* ``newSSHAuthSecret``: ``<job>-ssh``, a ``kubernetes.io/ssh-auth`` Secret with
  ``ssh-privatekey`` and ``ssh-publickey``;
* ``newWorker``: a Pod ``<job>-worker-<i>`` per worker, hostname itself, subdomain the job's
  Service, ``sshd -De`` unless the first container has a command or args, ``K_MPI_JOB_ROLE``;
* ``newLauncherJob`` / ``newLauncherPodTemplate``: the ``<job>-launcher`` Job, its pod with the
  implementation's env, the hostfile mounted at ``/etc/mpi`` and, unless it runs as a worker,
  ``NVIDIA_VISIBLE_DEVICES`` and ``NVIDIA_DRIVER_CAPABILITIES`` emptied;
* ``setupSSHOnPod``: the key pair mounted on the first container of every pod.

Where native mode cannot be the operator (docs/kinds/mpijob.md):

* **The SSH key pair.** The operator generates a new pair per job, in the cluster. kubetrain never
  writes key material: the ``<job>-ssh`` Secret is read from the stack's secret store (render
  mode: an ExternalSecret; Pulumi: a Secret from ``kubetrain:credentials``), under the credential
  ``<job>-ssh`` or the one the ``kubetrain.io/ssh-credential`` annotation names, whose keys are
  ``ssh-privatekey`` and ``ssh-publickey``. Operator mode needs none: the operator makes it.
* **discover_hosts.sh** lists the workers that are running, updated by the operator as they
  start; rendered, it lists every worker (Horovod's elastic mode re-reads it).
* **No controller** deletes workers when the launcher ends (``cleanPodPolicy``), waits for
  ready workers before the launcher (``WaitForWorkersReady``) or recreates a deleted worker.
"""

from __future__ import annotations

from typing import Any

from ..kube import catalog
from ..kube.features import enabled_by_default
from ..models.base import Mode
from ..models.mpijob import SSH_CREDENTIAL_ANNOTATION, MPIJob
from .context import BuildContext, Target
from .gang import (
    GangJob,
    GangPolicy,
    ReplicaPods,
    is_pod_group,
    mpi_min_resources,
    with_gang_scheduling,
)
from .kubeflow import JOB_NAME_LABEL, JOB_ROLE_LABEL, OPERATOR_NAME_LABEL, REPLICA_INDEX_LABEL
from .kueue import QUEUE_LABEL, kueue_labels, label_jobs, label_pod_group
from .lifecycle import SKIP_AWAIT
from .meta import (
    app_labels,
    manifest,
    merge,
    normalize_pod_gpus,
    object_meta,
    plain_copy,
    pod_gpu_alias_warnings,
)
from .registry import BuildProblem, Origins, builder, locator
from .secrets import CredentialRef, SecretSpec, secret_manifests
from .security import apply_pod_security

__all__ = ["OPERATOR_NAME", "MPIExpansion", "build_mpijob"]

OPERATOR_NAME = "mpi-operator"
CONFIG_VOLUME = "mpi-job-config"
CONFIG_MOUNT_PATH = "/etc/mpi"
HOSTFILE = "hostfile"
DISCOVER_HOSTS = "discover_hosts.sh"
SSH_VOLUME = "ssh-auth"
SSH_AUTH_TYPE = "kubernetes.io/ssh-auth"
SSH_PRIVATE_KEY = "ssh-privatekey"
SSH_PUBLIC_KEY = "ssh-publickey"
ROOT_SSH_PATH = "/root/.ssh"
#: The env the launcher's first container gets per implementation (ompiEnvVars, intelEnvVars,
#: mpichEnvVars), then the slots variable for OpenMPI and Intel MPI.
IMPLEMENTATION_ENV: dict[str, list[tuple[str, str]]] = {
    "OpenMPI": [
        ("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
        ("OMPI_MCA_orte_default_hostfile", f"{CONFIG_MOUNT_PATH}/{HOSTFILE}"),
        ("OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"),
    ],
    "Intel": [
        ("I_MPI_HYDRA_HOST_FILE", f"{CONFIG_MOUNT_PATH}/{HOSTFILE}"),
        ("I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", "-o ConnectionAttempts=10"),
    ],
    "MPICH": [
        ("HYDRA_HOST_FILE", f"{CONFIG_MOUNT_PATH}/{HOSTFILE}"),
        ("HYDRA_LAUNCH_EXTRA_ARGS", "-o ConnectionAttempts=10"),
    ],
}
SLOTS_ENV = {"OpenMPI": "OMPI_MCA_orte_set_default_slots", "Intel": "I_MPI_PERHOST"}

Manifest = dict[str, Any]


class MPIExpansion:
    """One MPIJob being expanded into the MPI Operator's objects."""

    def __init__(self, job: MPIJob, ctx: BuildContext) -> None:
        self.job = job
        self.ctx = ctx
        self.name = job.name
        self.namespace = job.namespace

    # --- names and labels ------------------------------------------------------------------

    def worker_name(self, index: int) -> str:
        return f"{self.name}-worker-{index}"

    @property
    def launcher_name(self) -> str:
        return f"{self.name}-launcher"

    def selector(self) -> dict[str, str]:
        """Every pod of the job (the Service's selector, newJobService)."""
        return {OPERATOR_NAME_LABEL: OPERATOR_NAME, JOB_NAME_LABEL: self.name}

    def default_labels(self, role: str) -> dict[str, str]:
        """defaultLabels: operator, job and role."""
        return {**self.selector(), JOB_ROLE_LABEL: role}

    def owned_labels(self) -> dict[str, str]:
        """The ``app: <job>`` label the operator gives the objects it owns besides pods."""
        return {"app": self.name}

    def host(self, pod: str) -> str:
        """A pod's name in the hostfile: ``<pod>.<job>.<namespace>.svc[.<clusterDomain>]``."""
        domain = self.ctx.settings.cluster_domain
        return f"{pod}.{self.name}.{self.namespace}.svc" + (f".{domain}" if domain else "")

    def hosts(self) -> list[str]:
        """Every MPI host: the launcher first when it runs as a worker, then the workers."""
        pods = [self.launcher_name] if self.job.launcher_as_worker else []
        pods += [self.worker_name(i) for i in range(self.job.worker_replicas())]
        return [self.host(p) for p in pods]

    # --- the objects ------------------------------------------------------------------------

    def service(self) -> Manifest:
        """newJobService."""
        spec: dict[str, Any] = {"clusterIP": "None", "selector": self.selector()}
        if self.job.launcher_as_worker:
            spec["publishNotReadyAddresses"] = True
        meta = object_meta(self.name, self.namespace, self.owned_labels())
        return manifest("v1", "Service", meta, spec=spec)

    def config_map(self) -> Manifest:
        """newConfigMap's hostfile, and the discover_hosts.sh of every worker (the operator
        lists the running ones, sorted by pod name)."""
        slots = self.job.slots
        if self.job.implementation == "OpenMPI":
            lines = [f"{h} slots={slots}\n" for h in self.hosts()]
        else:
            lines = [f"{h}:{slots}\n" for h in self.hosts()]
        launcher = [self.host(self.launcher_name)] if self.job.launcher_as_worker else []
        workers = sorted(self.worker_name(i) for i in range(self.job.worker_replicas()))
        discover = "#!/bin/sh\n" + "".join(
            f"echo {h}\n" for h in [*launcher, *(self.host(w) for w in workers)]
        )
        meta = object_meta(f"{self.name}-config", self.namespace, self.owned_labels())
        return manifest(
            "v1", "ConfigMap", meta, data={HOSTFILE: "".join(lines), DISCOVER_HOSTS: discover}
        )

    def ssh_secret(self) -> list[Manifest]:
        """The ``<job>-ssh`` key pair, from the stack's secret store (never generated)."""
        annotations = self.job.metadata.annotations
        credential = annotations.get(SSH_CREDENTIAL_ANNOTATION, f"{self.name}-ssh")
        path: tuple[str | int, ...] = ("metadata", "annotations", SSH_CREDENTIAL_ANNOTATION)
        spec = SecretSpec(
            name=f"{self.name}-ssh",
            namespace=self.namespace,
            type=SSH_AUTH_TYPE,
            labels=self.owned_labels(),
            data={key: CredentialRef(credential, key) for key in (SSH_PRIVATE_KEY, SSH_PUBLIC_KEY)},
            field=path if SSH_CREDENTIAL_ANNOTATION in annotations else ("metadata", "name"),
        )
        return secret_manifests(spec, self.ctx)

    def setup_ssh(self, pod_spec: dict[str, Any]) -> None:
        """setupSSHOnPod: the key pair on the first container, mode 0600 under /root/.ssh."""
        secret: dict[str, Any] = {
            "secretName": f"{self.name}-ssh",
            "items": [
                {"key": SSH_PRIVATE_KEY, "path": "id_rsa"},
                {"key": SSH_PUBLIC_KEY, "path": "id_rsa.pub"},
                {"key": SSH_PUBLIC_KEY, "path": "authorized_keys"},
            ],
        }
        if self.job.ssh_mount_path == ROOT_SSH_PATH:
            secret["defaultMode"] = 0o600
        pod_spec["volumes"] = [
            *(pod_spec.get("volumes") or []),
            {"name": SSH_VOLUME, "secret": secret},
        ]
        first = pod_spec["containers"][0]
        mount = {"name": SSH_VOLUME, "mountPath": self.job.ssh_mount_path}
        first["volumeMounts"] = [*(first.get("volumeMounts") or []), mount]

    def pod_priority_class(self) -> str | None:
        """calculatePriorityClassName without the job's schedulingPolicy (which comes first):
        the launcher's pod template's PriorityClass, else the workers'."""
        for spec in (self.job.launcher, self.job.worker):
            pod = (spec.template.get("spec") or {}) if spec is not None else {}
            name = pod.get("priorityClassName")
            if isinstance(name, str) and name:
                return name
        return None

    def min_resources(self, members: int) -> dict[str, str] | None:
        """calPGMinResource over the job's replica types, as the operator reads them (the
        MPIJob's templates, GPUs named as the stack names them; SetDefaults_MPIJob's one
        launcher, and no workers where the job gives no count)."""
        types = [ReplicaPods("Launcher", self.pod_spec("Launcher", ""), 1)]
        if self.job.worker is not None:
            workers = self.job.worker_replicas()
            types.append(ReplicaPods("Worker", self.pod_spec("Worker", ""), workers))
        return mpi_min_resources(types, members, self.ctx.priorities)

    def pod_spec(self, rtype: str, hostname: str) -> dict[str, Any]:
        """The replica's pod spec with what both newWorker and newLauncherPodTemplate set."""
        template = self.job.spec.mpi_replica_specs[rtype].template  # type: ignore[index]
        spec = normalize_pod_gpus(plain_copy(template.get("spec") or {}), self.gpu_resource)
        spec["hostname"] = hostname
        spec["subdomain"] = self.name  # the job's Service
        if spec.get("hostNetwork"):
            spec["dnsPolicy"] = "ClusterFirstWithHostNet"
        spec["restartPolicy"] = self.job.restart_policy(rtype)
        return spec

    @property
    def gpu_resource(self) -> str:
        return self.ctx.settings.gpu_resource

    def template_meta(self, rtype: str, role: str, index: str | None) -> dict[str, Any]:
        template = self.job.spec.mpi_replica_specs[rtype].template  # type: ignore[index]
        meta = template.get("metadata") or {}
        labels = merge(
            app_labels("mpijob", self.name, role), meta.get("labels"), self.default_labels(role)
        )
        if index is not None:
            labels[REPLICA_INDEX_LABEL] = index
        out: dict[str, Any] = {"labels": labels}
        if meta.get("annotations"):
            out["annotations"] = dict(meta["annotations"])
        return out

    def worker(self, index: int) -> Manifest:
        """newWorker: the Pod of one worker."""
        name = self.worker_name(index)
        spec = self.pod_spec("Worker", name)
        # The operator's search domain names cluster.local whatever the cluster's domain is.
        search = f"{self.name}.{self.namespace}.svc.cluster.local"
        dns = spec["dnsConfig"] = dict(spec.get("dnsConfig") or {})
        dns["searches"] = [*(dns.get("searches") or []), search]
        first = spec["containers"][0]
        if not first.get("command") and not first.get("args"):
            first["command"] = ["/usr/sbin/sshd", "-De"]
        first["env"] = [*(first.get("env") or []), {"name": "K_MPI_JOB_ROLE", "value": "worker"}]
        self.setup_ssh(spec)
        apply_pod_security(spec, self.ctx.settings.pod_security)
        # workerReplicaIndexLabel: shifted by one when the launcher is index 0.
        label = str(index + 1 if self.job.launcher_as_worker else index)
        meta = self.template_meta("Worker", "worker", label)
        return manifest(
            "v1",
            "Pod",
            object_meta(name, self.namespace, meta["labels"], meta.get("annotations")),
            spec=spec,
        )

    def launcher(self) -> Manifest:
        """newLauncherJob and newLauncherPodTemplate."""
        job = self.job
        spec = self.pod_spec("Launcher", self.launcher_name)
        first = spec["containers"][0]
        env = [*(first.get("env") or []), {"name": "K_MPI_JOB_ROLE", "value": "launcher"}]
        env += [{"name": n, "value": v} for n, v in IMPLEMENTATION_ENV[job.implementation]]
        if job.implementation in SLOTS_ENV:
            env.append({"name": SLOTS_ENV[job.implementation], "value": str(job.slots)})
        if not job.launcher_as_worker:
            # nvidiaDisableEnvVars: no value, so the launcher uses no GPU it may be given.
            env += [{"name": "NVIDIA_VISIBLE_DEVICES"}, {"name": "NVIDIA_DRIVER_CAPABILITIES"}]
        first["env"] = env
        self.setup_ssh(spec)
        config = {
            "name": CONFIG_VOLUME,
            "configMap": {
                "name": f"{self.name}-config",
                "items": [
                    {"key": HOSTFILE, "path": HOSTFILE, "mode": 0o444},
                    {"key": DISCOVER_HOSTS, "path": DISCOVER_HOSTS, "mode": 0o555},
                ],
            },
        }
        spec["volumes"] = [*(spec.get("volumes") or []), config]
        first["volumeMounts"] = [
            *(first.get("volumeMounts") or []),
            {"name": CONFIG_VOLUME, "mountPath": CONFIG_MOUNT_PATH},
        ]
        apply_pod_security(spec, self.ctx.settings.pod_security)
        meta = self.template_meta("Launcher", "launcher", "0" if job.launcher_as_worker else None)
        policy = job.spec.run_policy
        ttl = policy.ttl_seconds_after_finished
        if ttl is not None and self.ctx.target == Target.RENDER:
            raise BuildProblem(
                ("spec", "runPolicy", "ttlSecondsAfterFinished"),
                "cannot be rendered for GitOps in native mode: Flux or Argo CD re-creates the "
                "launcher Job the TTL deletes, which runs the training again; leave it out or "
                "deploy with Pulumi",
            )
        job_spec: dict[str, Any] = {
            "ttlSecondsAfterFinished": ttl,
            "activeDeadlineSeconds": policy.active_deadline_seconds,
            "backoffLimit": policy.backoff_limit,
            "suspend": True if policy.suspend else None,
            "template": {"metadata": meta, "spec": spec},
        }
        # newLauncherJob (v0.8.2): PodReplacementPolicy Failed, so a terminating launcher pod
        # is not replaced before it stopped (kubernetes/kubernetes#115844); written where the
        # cluster's default feature gates serve the field.
        if enabled_by_default("JobPodReplacementPolicy", self.ctx.settings.version):
            job_spec["podReplacementPolicy"] = "Failed"
        # Pulumi would wait for the launcher to complete: the whole training.
        launcher_meta = object_meta(
            self.launcher_name, self.namespace, self.owned_labels(), {SKIP_AWAIT: "true"}
        )
        return manifest("batch/v1", "Job", launcher_meta, spec=job_spec)

    def warn(self) -> None:
        """What native mode does otherwise than the operator, at the field that asks for it."""
        ctx, job = self.ctx, self.job
        policy = job.spec.run_policy
        if policy.clean_pod_policy in ("Running", "All"):
            ctx.warn(
                ("spec", "runPolicy", "cleanPodPolicy"),
                "has no effect in native mode: no controller deletes the workers when the "
                "launcher finishes (their sshd runs until the job is removed from the stack); "
                "use operator mode",
            )
        if job.spec.launcher_creation_policy == "WaitForWorkersReady":
            ctx.warn(
                ("spec", "launcherCreationPolicy"),
                "WaitForWorkersReady needs the MPI Operator: in native mode the launcher starts "
                "with the workers (ConnectionAttempts=10 lets ssh retry while they start)",
            )
        for rtype, replica in job.spec.mpi_replica_specs.items():
            written = (replica.template.get("spec") or {}).get("restartPolicy")
            policy_of = job.restart_policy(rtype)
            if written is not None and written != policy_of:
                ctx.warn(
                    ("spec", "mpiReplicaSpecs", rtype, "template", "spec", "restartPolicy"),
                    f"restartPolicy {written} of the pod template is replaced by the replica's, "
                    f"{policy_of} (as the MPI Operator does): set "
                    f"spec.mpiReplicaSpecs.{rtype}.restartPolicy instead",
                )
            for path, message in pod_gpu_alias_warnings(
                replica.template.get("spec"), self.gpu_resource
            ):
                ctx.warn(("spec", "mpiReplicaSpecs", rtype, "template", "spec", *path), message)

    def build(self) -> list[Manifest]:
        self.warn()
        # MPIJobController.syncHandler (v0.8.2): a suspended MPIJob gets its Service, ConfigMap,
        # key Secret and a suspended launcher Job, but no PodGroup and no workers (they would
        # start sshd and hold their nodes); resuming creates them.
        suspended = bool(self.job.spec.run_policy.suspend)
        workers = 0 if suspended else self.job.worker_replicas()
        objs = [
            self.service(),
            self.config_map(),
            *self.ssh_secret(),
            *(self.worker(i) for i in range(workers)),
            self.launcher(),
        ]
        queue = kueue_labels(self.job.metadata.labels)
        if queue:
            # Kueue's batch/job integration admits the launcher, its pod integration the
            # workers (one pod group): two Workloads, where the MPIJob itself would be one.
            label_jobs(objs, queue)
            label_pod_group([o for o in objs if o["kind"] == "Pod"], f"{self.name}-workers", queue)
            self.ctx.warn(
                ("metadata", "labels", QUEUE_LABEL),
                "Kueue admits the launcher Job and the worker pods separately in native mode "
                "(Kueue's MPIJob integration, in operator mode, admits the job as one)",
            )
        scheduling = self.job.spec.run_policy.scheduling_policy
        policy = None
        if scheduling is not None:
            policy = GangPolicy(
                min_available=scheduling.min_available,
                queue=scheduling.queue,
                priority_class=scheduling.priority_class,
                min_resources=scheduling.min_resources,
                schedule_timeout_seconds=scheduling.schedule_timeout_seconds,
            )
        # calculateMinAvailable: every worker and the launcher unless minAvailable says.
        gang = GangJob(
            self.name,
            self.namespace,
            app_labels("mpijob", self.name),
            self.job.metadata.annotations,
            code="mpi-operator",
            priority_class=self.pod_priority_class(),
            min_resources_of=self.min_resources,
        )
        out = with_gang_scheduling(objs, gang, self.ctx.settings, policy)
        if suspended:
            out = [o for o in out if not is_pod_group(o)]
        return out


def custom_resource(job: MPIJob, ctx: BuildContext) -> Manifest:
    """The defaulted MPIJob, for clusters that run the MPI Operator (GPUs normalised and Pod
    Security applied as in native mode). The operator makes the SSH key pair itself."""
    doc = job.defaulted_document()
    for replica in doc["spec"]["mpiReplicaSpecs"].values():
        pod_spec = replica["template"]["spec"] = replica["template"].get("spec") or {}
        normalize_pod_gpus(pod_spec, ctx.settings.gpu_resource)
        apply_pod_security(pod_spec, ctx.settings.pod_security)
    labels = merge(app_labels("mpijob", job.name), job.metadata.labels)
    meta = object_meta(job.name, job.namespace, labels, job.metadata.annotations)
    return manifest(job.API_VERSION, job.KIND, meta, spec=doc["spec"])


@builder(MPIJob)
def build_mpijob(job: MPIJob, mode: Mode, ctx: BuildContext) -> list[Manifest]:
    if mode == Mode.OPERATOR:
        if SSH_CREDENTIAL_ANNOTATION in job.metadata.annotations:
            ctx.warn(
                ("metadata", "annotations", SSH_CREDENTIAL_ANNOTATION),
                "has no effect in operator mode, where the MPI Operator generates the key pair",
            )
        return [custom_resource(job, ctx)]
    return MPIExpansion(job, ctx).build()


@locator(MPIJob)
def pod_spec_origins(job: MPIJob, obj: Manifest) -> Origins:
    """Where the workers' and the launcher's pod specs came from."""
    base = ("spec", "mpiReplicaSpecs")
    key = catalog.of(obj).key
    if key == catalog.POD:
        return [(("spec",), (*base, "Worker", "template", "spec"))]
    if key == catalog.BATCH_JOB:
        return [(("spec", "template", "spec"), (*base, "Launcher", "template", "spec"))]
    return []
