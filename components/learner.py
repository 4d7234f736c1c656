"""The LearnerStatefulSet component: an IBM FfDL learner deployed as the objects kubetrain render
writes for it.

A StatefulSet of ``learners`` pods, its headless governing Service and the Secrets it needs (the
s3fs HMAC keys of each ``mount_cos`` store, the pull Secret of a private image), all children of
the component. The Secrets' values come from ``kubetrain:credentials`` as secret outputs: the
builder emits credential markers and :func:`components._resources.register` resolves them.

The arguments mirror :mod:`kubetrain.models.learner` under its attribute names. A data store is
one type holding the fields of both store kinds (the schema has no unions): ``type`` says which
ones apply, and validation refuses the others.

No ``from __future__ import annotations`` here: the Pulumi analyzer reads the annotations.
"""

from collections.abc import Collection
from typing import Any, NotRequired, TypedDict

import pulumi

from kubetrain.builders.learner import TRAINING_ID_LABEL
from kubetrain.builders.meta import to_selector
from kubetrain.models.kinds import attach_component
from kubetrain.models.learner import Learner as LearnerDocument

from ._args import JobMetadataArgs, SettingsArgs
from ._job import expand, register_expansion
from ._resources import Identity

__all__ = [
    "DataStoreArgs",
    "DataStoresArgs",
    "FrameworkArgs",
    "LearnerImageArgs",
    "LearnerResourcesArgs",
    "LearnerSpecArgs",
    "LearnerStatefulSet",
    "LearnerStatefulSetArgs",
]

TYPE = "kubetrain:index:LearnerStatefulSet"


class FrameworkArgs(TypedDict):
    """The deep-learning framework of a Learner, which picks its image, and the command it runs."""

    name: str
    (
        "Framework name (tensorflow, pytorch, caffe...): part of the learner image name, "
        "lower-case letters, digits and '.', '_', '-'. Required."
    )
    version: str
    """Framework version, e.g. "1.15": part of the image name (a private image's tag). Required."""
    image_tag: NotRequired[str]
    (
        "Tag of the learner image from settings.learnerRegistry; not used with spec.image, whose "
        "tag is the version. Default: latest."
    )
    command: str
    (
        "Shell command of the learner, run by bash -c after LEARNER_ID is exported; it may use "
        "$DATA_DIR, $RESULT_DIR, $MODEL_DIR... Required."
    )


class LearnerImageArgs(TypedDict):
    """A private learner image <registry>/<namespace>/<framework>:<version>."""

    registry: str
    """Registry host (and port), e.g. us.icr.io. Required."""
    namespace: str
    """Namespace (organisation) of the image in the registry. Required."""


class LearnerResourcesArgs(TypedDict, total=False):
    """What each learner pod gets; requests equal limits, as FfDL set them."""

    cpus: float
    """CPU cores per learner, e.g. 2 or 0.5 (whole milli-cores). Default: 1."""
    memory: str
    """Memory per learner, a Kubernetes quantity such as 4Gi or 512Mi. Default: 1Gi."""
    gpus: int
    """GPUs per learner, whole devices, written under settings.gpuResource. Default: 0."""
    gpu_type: str
    (
        "GPU model, e.g. nvidia-tesla-v100: a node selector on the node label named by "
        "settings.gpuTypeNodeLabel (unused without it). Needs gpus >= 1. Default: any GPU."
    )


class DataStoreArgs(TypedDict):
    """A Learner data store: an s3fs-mounted bucket (mount_cos) or a node folder (host_mount)."""

    type: str
    """mount_cos (an s3fs flex volume) or host_mount (a hostPath volume). Required."""
    bucket: str
    (
        "Bucket name (3-63 characters: lower-case letters, digits, '.', '-'); for host_mount the "
        "folder under hostPath standing for it. Required."
    )
    endpoint: NotRequired[str]
    """mount_cos only: S3 endpoint URL (http:// or https://). Required for mount_cos."""
    region: NotRequired[str]
    """mount_cos only: region (location constraint) of the bucket. Default: us-standard."""
    credentials: NotRequired[str]
    (
        "mount_cos only: name of a credential in kubetrain:credentials holding the HMAC keys "
        "access-key and secret-key (never the keys themselves). Required for mount_cos."
    )
    host_path: NotRequired[str]
    (
        "host_mount only: absolute folder on every node that holds one folder per bucket. "
        "Required for host_mount."
    )
    path: NotRequired[str]
    (
        "trainingData only: folder inside the bucket that DATA_DIR points at. "
        "Default: the bucket root."
    )


class DataStoresArgs(TypedDict, total=False):
    """Where a Learner reads its training data and writes its results."""

    training_data: DataStoreArgs
    (
        "Training data, mounted read-only at /mnt/data/<bucket>; DATA_DIR points at it. "
        "Default: none."
    )
    results: DataStoreArgs
    (
        "Results: the bucket is mounted at /mnt/results/<bucket> (RESULT_BUCKET_DIR, checkpoints "
        "in its _wml_checkpoints), RESULT_DIR is its folder <trainingId>. Default: none."
    )


class LearnerSpecArgs(TypedDict):
    """The spec of a kubetrain.io/v1alpha1 Learner: FfDL's training request for one run."""

    training_id: str
    """Id of the training run: the training_id label and TRAINING_ID (a label value). Required."""
    user_id: NotRequired[str]
    """Owner of the run: the user_id label (a label value). Default: no label."""
    learners: NotRequired[int]
    """Number of learner pods (StatefulSet replicas), at least 1. Default: 1."""
    framework: FrameworkArgs
    """Framework, image and command. Required."""
    image: NotRequired[LearnerImageArgs]
    (
        "A private learner image instead of settings.learnerRegistry's. "
        "Default: <learnerRegistry>/<framework>_gpu_<version>:<imageTag>."
    )
    resources: NotRequired[LearnerResourcesArgs]
    """CPUs, memory and GPUs per learner. Default: 1 CPU, 1Gi, no GPU."""
    data_stores: NotRequired[DataStoresArgs]
    """Training-data and results stores. Default: none."""
    env: NotRequired[dict[str, str]]
    (
        "Extra learner env vars from FfDL's whitelist (MODEL_DIR, LOG_DIR, TRAINING_JOB, "
        "TRAINING_COMMAND, GPU_COUNT...); *_DIR values are paths under /job. Default: none."
    )
    image_pull_secret: NotRequired[str]
    (
        "Pull Secret of the learner pods. With spec.image kubetrain creates it from the "
        "credential of the same name (key dockerconfigjson); otherwise it must exist. "
        "Default: regcred."
    )


class LearnerStatefulSetArgs(TypedDict):
    """An FfDL learner (kubetrain.io/v1alpha1 Learner) and the settings it is expanded with."""

    metadata: JobMetadataArgs
    """Name, namespace, labels and annotations of the learner."""
    spec: LearnerSpecArgs
    """The Learner's spec, as in a kubetrain.io/v1alpha1 Learner document."""
    settings: NotRequired[SettingsArgs]
    (
        "Stack-level settings (learner registry, GPU type node label, cluster domain...). "
        "Default: the defaults of a stack file."
    )


class LearnerStatefulSet(pulumi.ComponentResource):
    """An FfDL learner: a StatefulSet of learner pods, its headless Service and its Secrets."""

    label_selector: pulumi.Output[str]
    """Label selector of the learner pods (the StatefulSet's selector), e.g. for kubectl logs -l."""
    service_hosts: pulumi.Output[list[str]]
    (
        "DNS name of each learner pod through the governing headless Service, "
        "<name>-<i>.<name>.<namespace>.svc[.<clusterDomain>], in ordinal order."
    )
    mode: pulumi.Output[str]
    """How the learner is deployed: native or operator (after kubetrain.io/mode, settings.mode)."""

    def __init__(
        self,
        name: str,
        args: LearnerStatefulSetArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        exclude: Collection[Identity] = (),
        warn: bool = True,
    ) -> None:
        """``exclude``: objects (apiVersion, kind, namespace, name) registered elsewhere; the
        stack program passes the objects several jobs share (a pull Secret) and registers them
        once."""
        expansion = expand(LearnerDocument, args, f"LearnerStatefulSet {name}")
        super().__init__(TYPE, name, None, opts)
        register_expansion(
            self,
            expansion,
            where=f"LearnerStatefulSet {name}",
            opts=opts,
            exclude=exclude,
            warn=warn,
        )
        document = expansion.loaded.job
        assert isinstance(document, LearnerDocument)
        job, namespace = document.name, document.namespace
        domain = expansion.settings.cluster_domain
        suffix = f".{domain}" if domain else ""
        hosts = [f"{job}-{i}.{job}.{namespace}.svc{suffix}" for i in range(document.spec.learners)]
        selector = {"app.kubernetes.io/instance": job, TRAINING_ID_LABEL: document.spec.training_id}
        self.label_selector = pulumi.Output.from_input(to_selector(selector))
        self.service_hosts = pulumi.Output.from_input(hosts)
        self.mode = pulumi.Output.from_input(expansion.mode)
        self.register_outputs(
            {
                "labelSelector": self.label_selector,
                "serviceHosts": self.service_hosts,
                "mode": self.mode,
            }
        )

    def exports(self) -> dict[str, Any]:
        """What the stack program exports for this job."""
        return {
            "kind": "Learner",
            "mode": self.mode,
            "labelSelector": self.label_selector,
            "serviceHosts": self.service_hosts,
        }


attach_component(LearnerDocument, LearnerStatefulSet)
