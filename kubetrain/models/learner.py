"""``kubetrain.io/v1alpha1 Learner``: kubetrain's own kind for an IBM FfDL learner.

FfDL's lifecycle manager (``lcm/service/lcm/learner``) turned a training request into a learner
StatefulSet with object-store volumes. This kind is that request written as a Kubernetes-shaped
document: the training id, the learner count, the framework and its image, cpus/memory/gpus, the
training-data and results stores, extra env vars and the pull secret. The builder
(:mod:`kubetrain.builders.learner`) expands it into the objects the LCM created.

Credentials are never written here: a store's ``credentials`` names a credential of the stack's
secret store (see :mod:`kubetrain.models.secrets`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import Field, field_validator

from ..kube.limits import INT32_MAX
from ..kube.names import DNS1035_LABEL, DNS1123_LABEL, DNS1123_SUBDOMAIN, LABEL_VALUE
from .base import (
    DerivedName,
    DNSSubdomain,
    Int32,
    JobDocument,
    LabelValue,
    Replicas,
    Strict,
    reject_unquoted_number,
)
from .kinds import declare
from .resources import normalize_gpus
from .secrets import CredentialName, is_credential_entry, not_credentials

if TYPE_CHECKING:
    from .stack import StackSettings

__all__ = [
    "CREDENTIAL_KEYS",
    "DATA_STORE_HOST_MOUNT",
    "DATA_STORE_MOUNT_COS",
    "ENV_WHITELIST",
    "KUBETRAIN_ENV",
    "CosStore",
    "DataStores",
    "Framework",
    "HostMountStore",
    "Image",
    "Learner",
    "LearnerSpec",
    "Resources",
]

#: Store types (FfDL's DataStoreTypeMountCOSS3 and DataStoreHostMountVolume).
DATA_STORE_MOUNT_COS = "mount_cos"
DATA_STORE_HOST_MOUNT = "host_mount"
#: Keys every credential named by a ``mount_cos`` store must hold (HMAC keys), which are also
#: the keys of the ``ibm/ibmc-s3fs`` Secret the s3fs flex driver reads.
CREDENTIAL_KEYS = ("access-key", "secret-key")

#: The env vars FfDL's PopulateLearnerEnvVariablesAndLabels lets through to the learner.
ENV_WHITELIST = (
    "MODEL_DIR",
    "DATA_DIR",
    "RESULT_DIR",
    "RESULT_BUCKET_DIR",
    "LOG_DIR",
    "CHECKPOINT_DIR",
    "JOB_STATE_DIR",
    "TRAINING_JOB",
    "TRAINING_COMMAND",
    "TRAINING_ID",
    "LEARNER_ID",
    "GPU_COUNT",
    "NUM_LEARNERS",
    "LEARNER_NAME_PREFIX",
    "DOWNWARD_API_POD_NAME",
    "DOWNWARD_API_POD_NAMESPACE",
)
#: Whitelisted vars kubetrain always sets itself, and where their value comes from.
KUBETRAIN_ENV = {
    "DOWNWARD_API_POD_NAME": "the pod's name",
    "DOWNWARD_API_POD_NAMESPACE": "the pod's namespace",
    "LEARNER_NAME_PREFIX": "the StatefulSet name",
    "TRAINING_ID": "spec.trainingId",
    "NUM_LEARNERS": "spec.learners",
    "LEARNER_ID": "the pod ordinal + 1",
    "JOB_STATE_DIR": "/job",
    "CHECKPOINT_DIR": "RESULT_BUCKET_DIR/_wml_checkpoints",
}

_IMAGE_COMPONENT = r"[a-z0-9]+([._-][a-z0-9]+)*"
_BUCKET = r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"
_SEGMENT = r"[A-Za-z0-9_][A-Za-z0-9._-]*"
_QUANTITY = re.compile(r"^(?P<n>[0-9]+(\.[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$")

Path = tuple[str | int, ...]
Problems = list[tuple[Path, str]]


def _relative_path(value: str | None) -> str | None:
    if value is not None:
        parts = value.split("/")
        if any(p in ("", ".", "..") or not re.fullmatch(_SEGMENT, p) for p in parts):
            raise ValueError(
                f"must be a relative path of folders (letters, digits, '.', '_', '-'), "
                f"without '.', '..' or empty parts, got {value!r}"
            )
    return value


class Framework(Strict):
    """The deep-learning framework, which picks the learner image, and the command it runs."""

    name: str = Field(
        pattern=f"^{_IMAGE_COMPONENT}$",
        description="Framework name (tensorflow, pytorch, caffe, ...): part of the learner "
        "image name, lower-case letters, digits and '.', '_', '-'. Required.",
    )
    version: str = Field(
        pattern=f"^{_IMAGE_COMPONENT}$",
        description='Framework version, quoted ("1.15"): part of the learner image name '
        "(the tag of a private image). Required.",
    )
    image_tag: str = Field(
        default="latest",
        alias="imageTag",
        pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$",
        description="Tag of the learner image from kubetrain:learnerRegistry. Not used with "
        "spec.image, whose tag is the version (as FfDL). Default: latest.",
    )
    command: str = Field(
        min_length=1,
        description="Shell command of the learner, run by `bash -c` after LEARNER_ID is "
        "exported; it may use $DATA_DIR, $RESULT_DIR, $MODEL_DIR... Required.",
    )

    @field_validator("version", mode="before")
    @classmethod
    def _quoted(cls, value: Any) -> Any:
        return reject_unquoted_number(value)


class Image(Strict):
    """A private learner image ``<registry>/<namespace>/<framework>:<version>``."""

    registry: str = Field(
        pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]+)?$",
        description="Registry host (and port), e.g. us.icr.io. Required.",
    )
    namespace: str = Field(
        pattern=f"^{_IMAGE_COMPONENT}(/{_IMAGE_COMPONENT})*$",
        description="Namespace (organisation) of the image in the registry. Required.",
    )


class Resources(Strict):
    """What each learner pod gets; requests equal limits, as FfDL set them."""

    cpus: float = Field(
        default=1,
        gt=0,
        le=INT32_MAX,
        description="CPU cores per learner (requests = limits), in cores, e.g. 2 or 0.5 "
        "(whole milli-cores). Default: 1.",
    )
    memory: str = Field(
        default="1Gi",
        description="Memory per learner (requests = limits), a Kubernetes quantity such as "
        "4Gi or 512Mi (a bare number is bytes). Default: 1Gi.",
    )
    gpus: Int32 = Field(
        default=0,
        ge=0,
        description="GPUs per learner, whole devices, written under kubetrain:gpuResource "
        "(requests = limits). Default: 0.",
    )
    gpu_type: str | None = Field(
        default=None,
        alias="gpuType",
        description="GPU model, e.g. nvidia-tesla-v100: a node selector on the node label named "
        "by kubetrain:gpuTypeNodeLabel (unused when the stack names none). Needs gpus >= 1. "
        "Default: any GPU.",
    )

    @field_validator("cpus")
    @classmethod
    def _milli(cls, value: float) -> float:
        if abs(value * 1000 - round(value * 1000)) > 1e-6:
            raise ValueError(f"CPUs are counted in whole milli-cores (0.001), got {value!r}")
        return value

    @field_validator("memory", mode="before")
    @classmethod
    def _memory(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if isinstance(value, str):
            m = _QUANTITY.fullmatch(value)
            if not m or float(m["n"]) == 0:
                raise ValueError(
                    f"must be a positive Kubernetes quantity such as 4Gi or 512Mi, got {value!r}"
                )
        return value

    @field_validator("gpu_type")
    @classmethod
    def _gpu_type(cls, value: str | None) -> str | None:
        if value is not None and (problem := LABEL_VALUE.check(value)):
            raise ValueError(f"{problem} (it becomes a node label value)")
        return value

    def cpu_quantity(self) -> str:
        """The CPUs as a canonical quantity: ``2`` for 2 cores, ``500m`` for 0.5."""
        milli = round(self.cpus * 1000)
        return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"

    def container_resources(self, gpu_resource: str) -> dict[str, Any]:
        """Kubernetes ``resources`` with requests equal to limits, GPUs normalised by
        :func:`kubetrain.models.resources.normalize_gpus` (none when gpus is 0; FfDL always wrote
        a GPU count, 0 for CPU jobs)."""
        limits: dict[str, Any] = {"cpu": self.cpu_quantity(), "memory": self.memory}
        if self.gpus:
            limits[gpu_resource] = self.gpus
        return normalize_gpus({"limits": limits, "requests": dict(limits)}, gpu_resource) or {}


class CosStore(Strict):
    """A bucket of an S3 object store (IBM Cloud Object Storage) mounted with s3fs."""

    type: Literal["mount_cos"] = Field(description="mount_cos: an s3fs flex volume. Required.")
    bucket: str = Field(
        pattern=f"^{_BUCKET}$",
        description="Bucket name (3-63 characters: lower-case letters, digits, '.', '-'). "
        "Required.",
    )
    endpoint: str = Field(
        pattern=r"^https?://[^\s/]+(/[^\s]*)?$",
        description="S3 endpoint URL (http:// or https://). Required.",
    )
    region: str = Field(
        default="us-standard",
        pattern=r"^[A-Za-z0-9][-A-Za-z0-9_]*$",
        description="Region (location constraint) of the bucket. Default: us-standard.",
    )
    path: str | None = Field(
        default=None,
        description="trainingData only: folder inside the bucket that DATA_DIR points at. "
        "Default: the bucket root.",
    )
    credentials: CredentialName = Field(
        description="Name of a credential in the stack's secret store holding the HMAC keys "
        "access-key and secret-key (never the keys themselves). Required."
    )

    _path = field_validator("path")(_relative_path)


class HostMountStore(Strict):
    """A folder of every node standing in for the buckets (FfDL's local object store)."""

    type: Literal["host_mount"] = Field(description="host_mount: a hostPath volume. Required.")
    host_path: str = Field(
        alias="hostPath",
        pattern=r"^/",
        description="Absolute folder on every node that holds one folder per bucket. Required.",
    )
    bucket: str = Field(
        pattern=f"^{_BUCKET}$",
        description="Folder under hostPath standing for the bucket (bucket-name rules). Required.",
    )
    path: str | None = Field(
        default=None,
        description="trainingData only: folder inside the bucket that DATA_DIR points at. "
        "Default: the bucket root.",
    )

    _path = field_validator("path")(_relative_path)

    @field_validator("host_path")
    @classmethod
    def _host_path(cls, value: str) -> str:
        if any(part in (".", "..") for part in value.split("/")):
            raise ValueError(f"must not contain '.' or '..' parts, got {value!r}")
        return value


DataStore = Annotated[CosStore | HostMountStore, Field(discriminator="type")]


class DataStores(Strict):
    """Where the learner reads its training data and writes its results."""

    training_data: DataStore | None = Field(
        default=None,
        alias="trainingData",
        description="Training data, mounted read-only at /mnt/data/<bucket>; DATA_DIR points at "
        "it (at /mnt/data/<bucket>/<path> with a path). Default: none (no DATA_DIR unless env "
        "sets one).",
    )
    results: DataStore | None = Field(
        default=None,
        description="Results: the bucket is mounted at /mnt/results/<bucket> (RESULT_BUCKET_DIR, "
        "checkpoints in its _wml_checkpoints), RESULT_DIR is its folder <trainingId>. "
        "Default: none.",
    )

    @field_validator("training_data", "results", mode="before")
    @classmethod
    def _store_type(cls, value: Any) -> Any:
        """Say which types exist instead of pydantic's "unable to extract tag"."""
        if isinstance(value, dict):
            kind = value.get("type")
            if kind is None:
                raise ValueError(
                    f"type is missing: {DATA_STORE_MOUNT_COS} (a bucket mounted with s3fs) or "
                    f"{DATA_STORE_HOST_MOUNT} (a folder of the node, with hostPath)"
                )
            if kind not in (DATA_STORE_MOUNT_COS, DATA_STORE_HOST_MOUNT):
                raise ValueError(
                    f"type must be {DATA_STORE_MOUNT_COS} or {DATA_STORE_HOST_MOUNT}, got {kind!r}"
                )
        return value


class LearnerSpec(Strict):
    """``spec`` of a Learner: FfDL's training request for one run."""

    training_id: LabelValue = Field(
        alias="trainingId",
        min_length=1,
        description="Id of the training run: the training_id label and TRAINING_ID (a label "
        "value, at most 63 characters). Required.",
    )
    user_id: LabelValue | None = Field(
        default=None,
        alias="userId",
        description="Owner of the run: the user_id label (a label value). Default: no label.",
    )
    learners: Replicas = Field(
        default=1,
        ge=1,
        description="Number of learner pods (StatefulSet replicas, at most 10000). Default: 1.",
    )
    framework: Framework = Field(description="Framework, image and command. Required.")
    image: Image | None = Field(
        default=None,
        description="A private learner image instead of kubetrain:learnerRegistry's. "
        "Default: <learnerRegistry>/<framework>_gpu_<version>:<imageTag>.",
    )
    resources: Resources = Field(
        default_factory=Resources,
        description="CPUs, memory and GPUs per learner. Default: 1 CPU, 1Gi, no GPU.",
    )
    data_stores: DataStores = Field(
        default_factory=DataStores,
        alias="dataStores",
        description="Training-data and results stores. Default: none.",
    )
    env: dict[str, str] = Field(
        default_factory=dict,
        description="Extra learner env vars from FfDL's whitelist (MODEL_DIR, LOG_DIR, "
        "TRAINING_JOB, TRAINING_COMMAND, GPU_COUNT; DATA_DIR / RESULT_DIR without a store); "
        "*_DIR values are paths under /job. Default: none.",
    )
    image_pull_secret: DNSSubdomain = Field(
        default="regcred",
        alias="imagePullSecret",
        description="Pull Secret of the learner pods. With spec.image kubetrain creates it from "
        "the credential of the same name (key dockerconfigjson); otherwise it must exist. "
        "Default: regcred.",
    )


@declare(
    "kubetrain's kind for an IBM FfDL learner (lcm/service/lcm/learner): a StatefulSet of "
    "learners with object-store volumes"
)
class Learner(JobDocument):
    """An FfDL learner: a StatefulSet of ``learners`` pods behind a headless Service."""

    API_VERSION: ClassVar[str] = "kubetrain.io/v1alpha1"
    KIND: ClassVar[str] = "Learner"

    api_version: Literal["kubetrain.io/v1alpha1"] = Field(alias="apiVersion")
    kind: Literal["Learner"]
    spec: LearnerSpec

    # Object names, after FfDL (which prefixed the StatefulSet and Service with "learner-").
    def training_data_volume(self) -> str:
        store = self.spec.data_stores.training_data
        prefix = "cosinputmount" if isinstance(store, CosStore) else "inputmount"
        return f"{prefix}-{self.name}"

    def results_volume(self) -> str:
        store = self.spec.data_stores.results
        prefix = "cosoutputmount" if isinstance(store, CosStore) else "outputmount"
        return f"{prefix}-{self.name}"

    def training_data_secret(self) -> str:
        return f"cossecretdata-{self.name}"

    def results_secret(self) -> str:
        return f"cossecretresults-{self.name}"

    def semantic_problems(self, settings: StackSettings) -> Problems:
        spec = self.spec
        problems: Problems = []
        if spec.image is None and not settings.learner_registry:
            problems.append(
                (
                    ("spec", "framework"),
                    "the learner image comes from kubetrain:learnerRegistry, which this stack "
                    "does not set; set it, or give spec.image (registry and namespace) for a "
                    "private image",
                )
            )
        res = spec.resources
        if res.gpu_type is not None and res.gpus == 0:
            problems.append(
                (
                    ("spec", "resources", "gpuType"),
                    f"gpuType {res.gpu_type!r} needs gpus >= 1, got gpus 0",
                )
            )
        results = spec.data_stores.results
        if results is not None and results.path is not None:
            problems.append(
                (
                    ("spec", "dataStores", "results", "path"),
                    f"results go to <bucket>/<trainingId> (FfDL's layout); path is for "
                    f"trainingData only, got {results.path!r}",
                )
            )
        problems += self._env_problems()
        return problems

    def _env_problems(self) -> Problems:
        problems: Problems = []
        stores = self.spec.data_stores
        derived = {
            "DATA_DIR": "spec.dataStores.trainingData" if stores.training_data else None,
            "RESULT_DIR": "spec.dataStores.results" if stores.results else None,
            "RESULT_BUCKET_DIR": "spec.dataStores.results" if stores.results else None,
        }
        allowed = [n for n in ENV_WHITELIST if n not in KUBETRAIN_ENV and not derived.get(n)]
        plain = not_credentials(self.metadata.annotations)
        for name, value in self.spec.env.items():
            path: Path = ("spec", "env", name)
            if is_credential_entry(name, value, plain):
                continue  # credential material: the one rule of models/secrets.py reports it
            if name in KUBETRAIN_ENV:
                problems.append((path, f"{name} is set by kubetrain (from {KUBETRAIN_ENV[name]})"))
            elif derived.get(name):
                problems.append((path, f"{name} is set by kubetrain (from {derived[name]})"))
            elif name not in ENV_WHITELIST:
                problems.append(
                    (
                        path,
                        f"{name!r} would never reach the learner: FfDL passes only "
                        f"{', '.join(allowed)}",
                    )
                )
            elif name.endswith("_DIR") and ".." in value.split("/"):
                # The value is not quoted: env values may be secret material.
                problems.append((path, "a *_DIR path must stay under /job (no '..' parts)"))
        return problems

    def derived_names(self, settings: StackSettings) -> list[DerivedName]:
        name = self.name
        last_pod = f"{name}-{self.spec.learners - 1}"
        domain = f".{settings.cluster_domain}" if settings.cluster_domain else ""
        names = [
            DerivedName(name, "Service and StatefulSet name", DNS1035_LABEL),
            DerivedName(last_pod, "learner pod name", DNS1123_LABEL),
            # The StatefulSet controller labels pods controller-revision-hash=<name>-<hash>,
            # a 10-character hash, so a StatefulSet name over 52 characters cannot run.
            DerivedName(f"{name}-{'0' * 10}", "controller-revision-hash label value", LABEL_VALUE),
            DerivedName(
                f"{last_pod}.{name}.{self.namespace}.svc{domain}",
                "learner host name",
                DNS1123_SUBDOMAIN,
            ),
        ]
        stores = self.spec.data_stores
        if stores.training_data is not None:
            names.append(DerivedName(self.training_data_volume(), "volume name", DNS1123_LABEL))
            if isinstance(stores.training_data, CosStore):
                names.append(
                    DerivedName(self.training_data_secret(), "Secret name", DNS1123_SUBDOMAIN)
                )
        if stores.results is not None:
            names.append(DerivedName(self.results_volume(), "volume name", DNS1123_LABEL))
            if isinstance(stores.results, CosStore):
                names.append(DerivedName(self.results_secret(), "Secret name", DNS1123_SUBDOMAIN))
        return names
