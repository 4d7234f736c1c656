"""Learner expansion: the objects IBM FfDL's lifecycle manager created for a training run.

Fidelity target: FfDL ``lcm/service/lcm/learner`` (see the seed). Per Learner:

* a headless governing Service ``<name>`` (``CreateServiceSpec``);
* a StatefulSet ``<name>`` of ``learners`` pods (``CreateStatefulSetSpecForLearner``,
  ``CreatePodSpec``, ``CreateContainerSpec``), image per ``GetLearnerImageForFramework``, env per
  ``PopulateLearnerEnvVariablesAndLabels``;
* volumes and mounts for the training-data and results stores (``Volumes``,
  ``CreateVolumeForLearner``, ``CreateVolumeMountsForLearner``);
* the Secrets of the ``mount_cos`` stores and of a private image (``CreateVolumeSecretsSpec``,
  ``GenerateImagePullSecret``), written by :mod:`kubetrain.builders.secrets`: ExternalSecrets in
  render mode, Secrets with values from Pulumi config secrets in Pulumi mode.

FfDL's helper Deployment (load-data, store-results, log-collector sidecars and the shared job
PVC) is not part of this kind; ``/job`` is an ``emptyDir`` shared by nothing but the learner.
Where kubetrain differs from FfDL on purpose it says so below, marked "FfDL:".
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..models.base import Mode
from ..models.learner import (
    CREDENTIAL_KEYS,
    DATA_STORE_HOST_MOUNT,
    DATA_STORE_MOUNT_COS,
    ENV_WHITELIST,
    CosStore,
    Learner,
)
from .context import BuildContext
from .crd import PrinterColumn, custom_resource_definition, register_crd
from .gang import GangJob, with_gang_scheduling
from .kueue import kueue_labels
from .meta import app_labels, manifest, merge, object_meta
from .registry import BuildProblem, builder
from .secrets import CredentialRef, SecretSpec, pull_secret_spec, secret_manifests
from .security import apply_pod_security

__all__ = [
    "CAPABILITY_DROPS",
    "COSVolume",
    "Container",
    "LearnerImage",
    "VolumeMountSpec",
    "Volumes",
    "build_learner",
    "create_container_spec",
    "create_pod_spec",
    "create_service_spec",
    "create_stateful_set_spec_for_learner",
    "create_volume_secrets_spec",
    "get_learner_image_for_framework",
    "populate_learner_env_variables",
]

LEARNER_CONTAINER = "learner"
SSH_PORT, WORKER_PORT = 22, 2222
TRAINING_ID_LABEL, USER_ID_LABEL = "training_id", "user_id"
DATA_ROOT, RESULTS_ROOT, JOB_DIR = "/mnt/data", "/mnt/results", "/job"
JOB_VOLUME = "jobdata"
CHECKPOINTS = "_wml_checkpoints"
COS_DRIVER = "ibm/ibmc-s3fs"
#: The Secret type the s3fs flex driver reads its HMAC keys from.
COS_SECRET_TYPE = "ibm/ibmc-s3fs"
DEFAULT_REGION = "us-standard"
#: s3fs cache per GPU of a training-data mount, in GB (FfDL's MOUNTCOS_GB_CACHE_PER_GPU default).
CACHE_GB_PER_GPU = 6
#: Capabilities FfDL dropped from the learner, in its order. It kept SETGID, SETUID,
#: NET_BIND_SERVICE, SYS_CHROOT and AUDIT_WRITE on purpose (the learner runs sshd).
CAPABILITY_DROPS = (
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "SETPCAP",
    "NET_RAW",
    "MKNOD",
    "SETFCAP",
)
#: The taint FfDL's GPU nodes carry.
GPU_TOLERATION = {
    "key": "dedicated",
    "operator": "Equal",
    "value": "gpu-task",
    "effect": "NoSchedule",
}

EnvVar = dict[str, Any]


def go_path_join(*parts: str) -> str:
    """Go's ``path.Join``: join the non-empty parts with ``/`` and clean the result (unlike
    ``posixpath.join``, an absolute later part does not discard the earlier ones)."""
    joined = "/".join(p for p in parts if p)
    if not joined:
        return ""
    cleaned = posixpath.normpath(re.sub("/+", "/", joined))
    return "/" if cleaned == "//" else cleaned


# --- image ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LearnerImage:
    """The seed's ``Image``: framework, version, tag and an optional private location."""

    framework: str
    version: str
    tag: str
    registry: str = ""
    namespace: str = ""


def get_learner_image_for_framework(image: LearnerImage, learner_registry: str | None) -> str:
    """``<registry>/<namespace>/<framework>:<version>`` for a private image (the version is the
    tag, as FfDL), else ``<learnerRegistry>/<framework>_gpu_<version>:<tag>``."""
    if image.registry and image.namespace:
        return f"{image.registry}/{image.namespace}/{image.framework}:{image.version}"
    if not learner_registry:
        # Learner.semantic_problems reports this at load time with the file and line.
        raise BuildProblem(("spec", "framework"), "needs kubetrain:learnerRegistry")
    return f"{learner_registry.rstrip('/')}/{image.framework}_gpu_{image.version}:{image.tag}"


# --- volumes -------------------------------------------------------------------------------


@dataclass(frozen=True)
class VolumeMountSpec:
    """Where a store is mounted in the learner container."""

    mount_path: str
    sub_path: str
    name: str
    read_only: bool = False


@dataclass(frozen=True)
class COSVolume:
    """One store as a volume: the seed's ``COSVolume`` (flex-volume options as FfDL's strings)."""

    volume_type: str
    name: str
    bucket: str
    mount: VolumeMountSpec
    endpoint: str = ""
    region: str = ""
    secret_ref: str = ""
    host_path: str = ""
    read_only: bool = False
    options: tuple[tuple[str, str], ...] = ()

    def volume(self) -> dict[str, Any]:
        if self.volume_type == DATA_STORE_HOST_MOUNT:
            return {"name": self.name, "hostPath": {"path": self.host_path}}
        flex = {
            "driver": COS_DRIVER,
            "secretRef": {"name": self.secret_ref},
            "readOnly": self.read_only,
            "options": dict(self.options),
        }
        return {"name": self.name, "flexVolume": flex}

    def volume_mount(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.mount.name, "mountPath": self.mount.mount_path}
        if self.mount.sub_path:
            out["subPath"] = self.mount.sub_path
        if self.mount.read_only:
            out["readOnly"] = True
        return out


def cos_options(
    bucket: str, endpoint: str, region: str, *, results: bool, gpus: int
) -> tuple[tuple[str, str], ...]:
    """FfDL's s3fs flex-volume options, every value a string. Training data gets a cache sized
    by the GPU count (none for CPU jobs) and a kernel cache; results get neither."""
    if results:
        cache_gb, disk_free_mb, parallel, kernel_cache = 0, 2048, 2, "false"
    else:
        cache_gb = CACHE_GB_PER_GPU * gpus
        disk_free_mb = min(cache_gb * 1024 // 3, 10000)
        parallel, kernel_cache = 5, "true"
    options = {
        "bucket": bucket,
        "endpoint": endpoint,
        "region": region or DEFAULT_REGION,
        "cache-size-gb": str(cache_gb),
        "chunk-size-mb": "52",
        "parallel-count": str(parallel),
        "ensure-disk-free": str(disk_free_mb),
        "tls-cipher-suite": "DEFAULT",
        "multireq-max": "20",
        "stat-cache-size": "100000",
        "kernel-cache": kernel_cache,
        "debug-level": "warn",
        "curl-debug": "false",
        # FfDL: 30 retries 4 s apart, so a mount outlives two minutes of object-store trouble.
        "s3fs-fuse-retry-count": "30",
    }
    return tuple(options.items())


@dataclass(frozen=True)
class Volumes:
    """The seed's ``Volumes``: the training-data and results volumes, either may be absent."""

    training_data: COSVolume | None = None
    results_dir: COSVolume | None = None

    def _all(self) -> list[COSVolume]:
        return [v for v in (self.training_data, self.results_dir) if v is not None]

    def create_volume_for_learner(self) -> list[dict[str, Any]]:
        """Volumes, training data first."""
        return [v.volume() for v in self._all()]

    def create_volume_mounts_for_learner(self) -> list[dict[str, Any]]:
        """Mounts, in the order of the volumes."""
        return [v.volume_mount() for v in self._all()]


def learner_volumes(job: Learner) -> Volumes:
    """The store volumes of ``job`` as FfDL laid them out.

    Training data: mounted at ``/mnt/data/<bucket>`` (FfDL mounted at the rewritten raw
    ``DATA_DIR``, which was the bucket); ``host_mount`` mounts the folder ``<bucket>`` of
    ``hostPath`` there as subPath. Results: the bucket mounted at ``/mnt/results/<bucket>``
    (FfDL's ``RESULT_BUCKET_DIR``), each run writing into its folder ``<trainingId>``
    (``RESULT_DIR``), so runs sharing a bucket do not overwrite each other; ``host_mount``
    mounts the folder ``<bucket>`` of ``hostPath`` there.
    """
    spec = job.spec
    data_vol = results_vol = None
    if (store := spec.data_stores.training_data) is not None:
        mount_path = go_path_join(DATA_ROOT, store.bucket)
        # Deviation: FfDL mounted the training data read-write (flex volume and mount); kubetrain
        # mounts it read-only, so a learner cannot damage the data other runs read.
        if isinstance(store, CosStore):
            options = cos_options(
                store.bucket, store.endpoint, store.region, results=False, gpus=spec.resources.gpus
            )
            name = job.training_data_volume()
            data_vol = COSVolume(
                DATA_STORE_MOUNT_COS,
                name,
                store.bucket,
                VolumeMountSpec(mount_path, "", name, read_only=True),
                endpoint=store.endpoint,
                region=store.region,
                secret_ref=job.training_data_secret(),
                read_only=True,
                options=options,
            )
        else:
            name = job.training_data_volume()
            data_vol = COSVolume(
                DATA_STORE_HOST_MOUNT,
                name,
                store.bucket,
                VolumeMountSpec(mount_path, store.bucket, name, read_only=True),
                host_path=store.host_path,
            )
    if (store := spec.data_stores.results) is not None:
        raw = store.bucket
        mount_path = go_path_join(RESULTS_ROOT, raw)
        name = job.results_volume()
        if isinstance(store, CosStore):
            options = cos_options(
                store.bucket, store.endpoint, store.region, results=True, gpus=spec.resources.gpus
            )
            results_vol = COSVolume(
                DATA_STORE_MOUNT_COS,
                name,
                store.bucket,
                VolumeMountSpec(mount_path, "", name),
                endpoint=store.endpoint,
                region=store.region,
                secret_ref=job.results_secret(),
                options=options,
            )
        else:
            results_vol = COSVolume(
                DATA_STORE_HOST_MOUNT,
                name,
                store.bucket,
                VolumeMountSpec(mount_path, raw, name),
                host_path=store.host_path,
            )
    return Volumes(data_vol, results_vol)


def create_volume_secrets_spec(job: Learner) -> list[SecretSpec]:
    """The ``ibm/ibmc-s3fs`` Secret of each ``mount_cos`` store, keys ``access-key`` and
    ``secret-key`` read from the store's named credential.

    FfDL: created one per mounted store even for ``host_mount``, whose volume never reads it,
    and wrote the keys as plain ``stringData``; kubetrain creates them for ``mount_cos`` only,
    and never holds a value (see :mod:`kubetrain.builders.secrets`).
    """
    labels = merge(app_labels("learner", job.name, "credentials"), _training_labels(job, False))
    out = []
    stores = (
        ("trainingData", job.spec.data_stores.training_data, job.training_data_secret()),
        ("results", job.spec.data_stores.results, job.results_secret()),
    )
    for field, store, name in stores:
        if isinstance(store, CosStore):
            data = {key: CredentialRef(store.credentials, key) for key in CREDENTIAL_KEYS}
            path = ("spec", "dataStores", field, "credentials")
            out.append(SecretSpec(name, job.namespace, COS_SECRET_TYPE, labels, data, path))
    return out


def generate_image_pull_secret(job: Learner) -> tuple[str, SecretSpec | None]:
    """The pull Secret of the learner pods, and its spec when kubetrain must create it.

    Without a private image the pods use ``imagePullSecret`` as it exists in the namespace (FfDL's
    configured default). With one, kubetrain creates that Secret from the credential of the same
    name. FfDL: created ``customimage-<name>`` of the legacy type ``kubernetes.io/dockercfg`` from a
    token in the training request and gave the pods that Secret; kubetrain takes no token in the
    job (credentials live in the stack) and names the Secret after the credential.
    """
    name = job.spec.image_pull_secret
    if job.spec.image is None:
        return name, None
    return name, pull_secret_spec(name, job.namespace, name, ("spec", "imagePullSecret"))


# --- env -----------------------------------------------------------------------------------


def populate_learner_env_variables(
    existing: Sequence[EnvVar],
    training_id: str,
    num_learners: int,
    statefulset_name: str,
    mount_training_data: bool,
    mount_results: bool,
) -> list[EnvVar]:
    """The seed's ``PopulateLearnerEnvVariablesAndLabels``: the request's vars plus the learner's
    own, filtered by FfDL's whitelist, ``*_DIR`` values rewritten to where they are mounted, and
    ``JOB_STATE_DIR``, ``CHECKPOINT_DIR`` and ``RESULT_BUCKET_DIR`` appended.

    ``DATA_DIR`` goes under ``/mnt/data`` when its store is mounted. The request's ``RESULT_DIR``
    is the results bucket: with the store mounted, ``RESULT_BUCKET_DIR`` is
    ``/mnt/results/<bucket>``, ``RESULT_DIR`` its folder ``<trainingId>`` and ``CHECKPOINT_DIR``
    ``<RESULT_BUCKET_DIR>/_wml_checkpoints``. Every other ``*_DIR`` goes under ``/job``. FfDL:
    appended an empty ``CHECKPOINT_DIR`` and ``RESULT_BUCKET_DIR`` without a results store, and
    ``DLAAS_JOB_ID`` only for its own whitelist to drop it.
    """
    env: list[EnvVar] = [
        *existing,
        {
            "name": "DOWNWARD_API_POD_NAME",
            "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
        },
        {
            "name": "DOWNWARD_API_POD_NAMESPACE",
            "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
        },
        {"name": "LEARNER_NAME_PREFIX", "value": statefulset_name},
        {"name": "TRAINING_ID", "value": training_id},
        {"name": "NUM_LEARNERS", "value": str(num_learners)},
    ]
    checkpoint_dir = bucket_dir = ""
    out: list[EnvVar] = []
    for var in env:
        name = var["name"]
        if name not in ENV_WHITELIST:
            continue
        if name.endswith("_DIR") and "value" in var:
            value = var["value"]
            if name == "DATA_DIR" and mount_training_data:
                value = go_path_join(DATA_ROOT, value)
            elif name == "RESULT_DIR" and mount_results:
                bucket_dir = go_path_join(RESULTS_ROOT, value)
                value = go_path_join(bucket_dir, training_id)
                checkpoint_dir = go_path_join(bucket_dir, CHECKPOINTS)
            else:
                value = go_path_join(JOB_DIR, value)
            var = {"name": name, "value": value}
        out.append(var)
    out.append({"name": "JOB_STATE_DIR", "value": JOB_DIR})
    if checkpoint_dir:
        out.append({"name": "CHECKPOINT_DIR", "value": checkpoint_dir})
        out.append({"name": "RESULT_BUCKET_DIR", "value": bucket_dir})
    return out


def learner_command(command: str, mount_results: bool) -> str:
    """The learner's ``bash -c`` script: export ``LEARNER_ID``, make its result folders, run.

    ``LEARNER_ID`` is the StatefulSet pod ordinal + 1 (learners are numbered 1..N), read from the
    pod name as FfDL did (``<name>-<ordinal>``, via ``DOWNWARD_API_POD_NAME``). Kubernetes 1.28+
    also labels StatefulSet pods ``apps.kubernetes.io/pod-index``, but an env var from it would
    still need the + 1 in the shell, and the pod name works on every version kubetrain targets.
    """
    lines = ["export LEARNER_ID=$((${DOWNWARD_API_POD_NAME##*-} + 1))"]
    if mount_results:
        lines.append('mkdir -p "$RESULT_DIR/learner-$LEARNER_ID" "$CHECKPOINT_DIR"')
    lines.append(command)
    return "\n".join(lines)


# --- container, pod, statefulset, service --------------------------------------------------


@dataclass(frozen=True)
class Container:
    """The seed's ``Container``: image, resources, mounts, name, command and env."""

    image: str
    resources: dict[str, Any]
    volume_mounts: tuple[dict[str, Any], ...]
    name: str
    command: str
    env_vars: tuple[EnvVar, ...]


def create_container_spec(container: Container) -> dict[str, Any]:
    """The learner container: ``bash -c`` command, ssh and TensorFlow ports, requests equal to
    limits, FfDL's capability drops. FfDL: unnamed ports; kubetrain names them like the
    Service's ports."""
    return {
        "name": container.name,
        "image": container.image,
        "command": ["bash", "-c", container.command],
        "env": list(container.env_vars),
        "ports": [
            {"name": "ssh", "containerPort": SSH_PORT, "protocol": "TCP"},
            {"name": "tf-distributed", "containerPort": WORKER_PORT, "protocol": "TCP"},
        ],
        "resources": container.resources,
        "securityContext": {"capabilities": {"drop": list(CAPABILITY_DROPS)}},
        "volumeMounts": list(container.volume_mounts),
    }


def create_pod_spec(
    containers: Sequence[dict[str, Any]],
    volumes: Sequence[dict[str, Any]],
    labels: dict[str, str],
    node_selector: dict[str, str],
    image_pull_secret: str,
    gpus: int,
) -> dict[str, Any]:
    """The learner pod template.

    FfDL: also set the alpha annotations ``scheduler.alpha.kubernetes.io/tolerations`` and
    ``.../nvidiaGPU`` (ignored by every scheduler since Kubernetes 1.6), added a
    ``service: dlaas-learner`` label for its own network policy, always set the GPU toleration,
    and unset the service-link env vars in the command. kubetrain tolerates the GPU taint only
    when the learner has GPUs and turns service links off instead.
    """
    spec: dict[str, Any] = {
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "containers": list(containers),
        "volumes": list(volumes),
        "imagePullSecrets": [{"name": image_pull_secret}],
    }
    if gpus > 0:
        spec["tolerations"] = [dict(GPU_TOLERATION)]
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    return {"metadata": {"labels": dict(labels)}, "spec": spec}


def create_stateful_set_spec_for_learner(
    name: str,
    namespace: str,
    service_name: str,
    replicas: int,
    pod_template: dict[str, Any],
    selector: dict[str, str],
) -> dict[str, Any]:
    """The learner StatefulSet, labelled like its pods.

    FfDL: ``apps/v1beta1`` (removed in Kubernetes 1.16) with no selector, which that API
    defaulted from the template labels; ``apps/v1`` requires one, and kubetrain selects on the
    labels that identify the run and the job. ``podManagementPolicy`` stays OrderedReady, as
    FfDL left it, unless the learners are gang-scheduled (see :mod:`.gang`).
    """
    labels = pod_template["metadata"]["labels"]
    return manifest(
        "apps/v1",
        "StatefulSet",
        object_meta(name, namespace, labels),
        spec={
            "serviceName": service_name,
            "replicas": replicas,
            "revisionHistoryLimit": 0,
            "selector": {"matchLabels": dict(selector)},
            "template": pod_template,
        },
    )


def create_service_spec(
    name: str, namespace: str, selector: dict[str, str], labels: dict[str, str]
) -> dict[str, Any]:
    """The headless Service governing the StatefulSet (pod DNS ``<pod>.<name>``): ports ``ssh``
    22 and ``tf-distributed`` 2222, selecting the StatefulSet's pods.

    FfDL: created only for more than one learner, leaving a single learner's ``serviceName``
    dangling (kubetrain always creates it), and selected ``training_id`` alone, so two learners
    given the same training id shared each other's pods; kubetrain selects what the
    StatefulSet selects (``app.kubernetes.io/instance`` and ``training_id``)."""
    return manifest(
        "v1",
        "Service",
        object_meta(name, namespace, labels),
        spec={
            "clusterIP": "None",
            "selector": dict(selector),
            "ports": [
                {"name": "ssh", "protocol": "TCP", "port": SSH_PORT},
                {"name": "tf-distributed", "protocol": "TCP", "port": WORKER_PORT},
            ],
        },
    )


def _training_labels(job: Learner, with_user: bool = True) -> dict[str, str]:
    labels = {TRAINING_ID_LABEL: job.spec.training_id}
    if with_user and job.spec.user_id is not None:
        labels[USER_ID_LABEL] = job.spec.user_id
    return labels


def _request_env(job: Learner) -> list[EnvVar]:
    """The training request's env vars, FfDL-style: the user's (sorted, so input order does not
    matter) and the raw ``DATA_DIR`` / ``RESULT_DIR`` of the stores, before the rewrites."""
    values = dict(job.spec.env)
    stores = job.spec.data_stores
    if (data := stores.training_data) is not None:
        # Deviation: FfDL's DATA_DIR was the bucket (/mnt/data/<bucket>); kubetrain appends the
        # store's path, so DATA_DIR points at the folder the job reads inside the bucket.
        values["DATA_DIR"] = f"{data.bucket}/{data.path}" if data.path else data.bucket
    if (results := stores.results) is not None:
        # The bucket, as FfDL's request carried it; the rewrite adds <trainingId>.
        values["RESULT_DIR"] = results.bucket
    return [{"name": k, "value": values[k]} for k in sorted(values)]


register_crd(
    Learner,
    plural="learners",
    printer_columns=(
        PrinterColumn("Training", "string", ".spec.trainingId", "Training id of the run"),
        PrinterColumn("Learners", "integer", ".spec.learners", "Learner pods"),
        PrinterColumn("Framework", "string", ".spec.framework.name", "Framework"),
        PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
    ),
)


def custom_resource(job: Learner) -> dict[str, Any]:
    """The Learner custom resource with its defaults filled in. It names credentials, never
    holds them, like the job document."""
    spec: dict[str, Any] = job.spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    labels = merge(app_labels("learner", job.name), job.metadata.labels)
    meta = object_meta(job.name, job.namespace, labels, job.metadata.annotations)
    return manifest(Learner.API_VERSION, Learner.KIND, meta, spec=spec)


@builder(Learner)
def build_learner(job: Learner, mode: Mode, ctx: BuildContext) -> list[dict[str, Any]]:
    """Native mode: Service, StatefulSet and the Secrets (as ExternalSecrets in render mode).
    Operator mode: kubetrain's Learner CRD and the custom resource, for a cluster where a
    controller (FfDL's lifecycle manager in Kubernetes form) expands learners itself."""
    if mode == Mode.OPERATOR:
        return [custom_resource_definition(Learner, ctx.settings.version), custom_resource(job)]
    spec = job.spec
    settings = ctx.settings
    name, namespace = job.name, job.namespace
    labels = merge(app_labels("learner", name, "learner"), _training_labels(job))
    selector = {"app.kubernetes.io/instance": name, TRAINING_ID_LABEL: spec.training_id}

    volumes = learner_volumes(job)
    mount_data = volumes.training_data is not None
    mount_results = volumes.results_dir is not None
    env = populate_learner_env_variables(
        _request_env(job), spec.training_id, spec.learners, name, mount_data, mount_results
    )
    image = LearnerImage(
        spec.framework.name,
        spec.framework.version,
        spec.framework.image_tag,
        spec.image.registry if spec.image else "",
        spec.image.namespace if spec.image else "",
    )
    job_mount = {"name": JOB_VOLUME, "mountPath": JOB_DIR}
    container = Container(
        image=get_learner_image_for_framework(image, settings.learner_registry),
        resources=spec.resources.container_resources(settings.gpu_resource),
        volume_mounts=(*volumes.create_volume_mounts_for_learner(), job_mount),
        name=LEARNER_CONTAINER,
        command=learner_command(spec.framework.command, mount_results),
        env_vars=tuple(env),
    )
    node_selector: dict[str, str] = {}
    gpu_type = spec.resources.gpu_type
    # Deviation: FfDL accepted a GPU type but never put a node selector on the learner pods, so
    # they could land on any GPU node; kubetrain selects gpuType on the stack's node label (none
    # without kubetrain:gpuTypeNodeLabel, as FfDL).
    if gpu_type and spec.resources.gpus > 0 and settings.gpu_type_node_label:
        node_selector[settings.gpu_type_node_label] = gpu_type
    elif gpu_type:
        ctx.warn(
            ("spec", "resources", "gpuType"),
            f"gpuType {gpu_type!r} is not used: the stack sets no kubetrain:gpuTypeNodeLabel, "
            "so no node selector picks the GPU model",
        )
    pull_secret, pull_secret_spec = generate_image_pull_secret(job)
    pod_volumes = [*volumes.create_volume_for_learner(), {"name": JOB_VOLUME, "emptyDir": {}}]
    template = create_pod_spec(
        [create_container_spec(container)],
        pod_volumes,
        labels,
        node_selector,
        pull_secret,
        spec.resources.gpus,
    )
    apply_pod_security(template["spec"], settings.pod_security)
    out: list[dict[str, Any]] = []
    secrets = create_volume_secrets_spec(job)
    if pull_secret_spec is not None:
        secrets.append(pull_secret_spec)
    for secret in secrets:
        out += secret_manifests(secret, ctx)
    out.append(create_service_spec(name, namespace, selector, labels))
    stateful_set = create_stateful_set_spec_for_learner(
        name, namespace, name, spec.learners, template, selector
    )
    # Kueue's StatefulSet integration admits the StatefulSet by its own queue label.
    if queue := kueue_labels(job.metadata.labels):
        stateful_set["metadata"]["labels"] = {**stateful_set["metadata"].get("labels", {}), **queue}
    out.append(stateful_set)
    return with_gang_scheduling(out, GangJob(name, namespace, labels), settings)
