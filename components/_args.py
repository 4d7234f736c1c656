"""Argument types every job component shares: the job's metadata and the stack-level settings.

They are TypedDicts the Pulumi analyzer turns into the provider schema other languages see, so
each field is a plain type (no unions, string map keys) with a docstring that says the unit and
the default. Keys are snake_case in Python; the schema (and Pulumi YAML) spells them camelCase,
which is also how the job documents of a stack file spell them.

Docstrings that reach the schema are single strings without line breaks (the analyzer copies
them verbatim, indentation included): long ones are written as implicitly joined strings.
No ``from __future__ import annotations`` here: the analyzer reads the annotations at runtime.
"""

from typing import NotRequired, TypedDict

__all__ = ["JobMetadataArgs", "SettingsArgs"]


class JobMetadataArgs(TypedDict):
    """The part of a job document's metadata kubetrain reads."""

    name: str
    (
        "Name of the job; every object it creates is named after it, so it must leave room for "
        "the longest derived name (a DNS-1123 subdomain)."
    )
    namespace: NotRequired[str]
    """Namespace of the job and of every object it creates. Default: settings.namespace."""
    labels: NotRequired[dict[str, str]]
    """Labels of the job document (they reach the custom resource in operator mode)."""
    annotations: NotRequired[dict[str, str]]
    (
        "Annotations of the job document; kubetrain.io/mode (native or operator) overrides "
        "settings.mode for this job, kubetrain.io/native-workload (pod, job or jobset) "
        "settings.native_workload."
    )


class SettingsArgs(TypedDict, total=False):
    """Stack-level settings a job's expansion depends on (the kubetrain:* keys of a stack)."""

    namespace: str
    """Namespace of a job whose metadata names none. Default: default."""
    kubernetes_version: str
    """Kubernetes minor version, e.g. "1.33": the schema pod templates must meet. Default: 1.33."""
    mode: str
    (
        "native (the objects the operator would create) or operator (the custom resource, for a "
        "cluster running the operator). Default: native."
    )
    native_workload: str
    (
        "Native mode, Kubeflow replica jobs (kubeflow.org/v1): what runs each replica, pod (a "
        "bare Pod, as the training operator creates), job (a batch/v1 Job per replica) or "
        "jobset (one JobSet per job, for clusters running the JobSet controller). Default: job."
    )
    gpu_resource: str
    """Extended resource name written for GPUs. Default: nvidia.com/gpu."""
    cluster_domain: str
    """DNS domain appended to service hosts, e.g. cluster.local. Default: none."""
    gang_scheduler: str
    """Gang scheduler of multi-pod jobs: none, volcano or scheduler-plugins. Default: none."""
    pod_security: str
    """Pod Security Standards level pods must meet: baseline or restricted. Default: baseline."""
    learner_registry: str
    """Registry of FfDL learner images. Default: none."""
    gpu_type_node_label: str
    """Node label that selects a Learner's gpuType (unused without it). Default: none."""
    pod_await: str
    (
        "How pulumi up waits for objects that run pods: auto (all but gang-scheduled ones), "
        "ready (all) or skip (none). Default: auto."
    )
    pod_await_timeout_seconds: int
    """Seconds pulumi up waits for an awaited object that runs pods. Default: 10 minutes."""
