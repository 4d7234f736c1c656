"""The VolcanoJob component: a Volcano Job (``batch.volcano.sh/v1alpha1``) deployed as the objects
kubetrain render writes for it.

Native mode: the PodGroup, the tasks' pods and what the svc plugin creates (the hosts ConfigMap,
the headless Service, the NetworkPolicy), all children of the component. Operator mode: the Job
custom resource, for a cluster that runs Volcano's job controller.

No ``from __future__ import annotations`` here: the Pulumi analyzer reads the annotations.
"""

from collections.abc import Collection
from typing import Any, NotRequired, TypedDict

import pulumi

from kubetrain.builders.volcanojob import pod_name
from kubetrain.models.kinds import attach_component
from kubetrain.models.volcanojob import VolcanoJob as VolcanoJobDocument

from ._args import JobMetadataArgs, SettingsArgs
from ._job import expand, register_expansion
from ._resources import Identity

__all__ = ["VolcanoJob", "VolcanoJobArgs", "VolcanoJobSpecArgs", "VolcanoTaskArgs"]

TYPE = "kubetrain:index:VolcanoJob"


class VolcanoTaskArgs(TypedDict):
    """One task of a Volcano Job: replicas pods of one template."""

    name: NotRequired[str]
    """Task name (a DNS-1123 label); its pods are <job>-<task>-<index>. Default: default<index>."""
    replicas: NotRequired[int]
    """Pods of this task. Default: 0."""
    min_available: NotRequired[int]
    """Pods of this task the gang needs. Default: replicas."""
    template: dict[str, Any]
    """Pod template (a Kubernetes PodTemplateSpec)."""
    policies: NotRequired[list[dict[str, Any]]]
    """Lifecycle policies of the task (operator mode). Default: none."""
    topology_policy: NotRequired[str]
    """NUMA topology policy: none, best-effort, restricted or single-numa-node. Default: none."""
    max_retry: NotRequired[int]
    """Retries of the task. Default: 3."""


class VolcanoJobSpecArgs(TypedDict):
    """The spec of a batch.volcano.sh/v1alpha1 Job."""

    tasks: list[VolcanoTaskArgs]
    """The tasks (at least one)."""
    min_available: NotRequired[int]
    """Pods the gang needs to start. Default: the tasks' minAvailable summed."""
    scheduler_name: NotRequired[str]
    """Scheduler of the pods. Default: volcano."""
    queue: NotRequired[str]
    """Volcano queue. Default: default."""
    plugins: NotRequired[dict[str, list[str]]]
    """Job plugins and their arguments: env, svc, ssh (operator mode), ... Default: none."""
    policies: NotRequired[list[dict[str, Any]]]
    """Lifecycle policies of the job (operator mode). Default: none."""
    max_retry: NotRequired[int]
    """Retries of the job. Default: 3."""
    priority_class_name: NotRequired[str]
    """PriorityClass of the job's pods. Default: none."""


class VolcanoJobArgs(TypedDict):
    """A Volcano Job (batch.volcano.sh/v1alpha1) and the settings it is expanded with."""

    metadata: JobMetadataArgs
    """Name, namespace, labels and annotations (kubetrain.io/mode: operator or native)."""
    spec: VolcanoJobSpecArgs
    """The Job's spec, as in a batch.volcano.sh/v1alpha1 Job manifest."""
    settings: NotRequired[SettingsArgs]
    """Stack-level settings (namespace default, GPU resource name, mode...). Default: none."""
    priority_classes: NotRequired[dict[str, int]]
    (
        "Value of each PriorityClass the cluster holds, by name: a gang smaller than the job "
        "sums the pods of higher-priority replica types first, as the operator does (the "
        "API server's own classes are known). Default: none."
    )


class VolcanoJob(pulumi.ComponentResource):
    """A Volcano Job: its PodGroup, its tasks' pods and the svc plugin's objects."""

    pods: pulumi.Output[list[str]]
    """Names of the job's pods, task by task: <job>-<task>-<index>."""
    mode: pulumi.Output[str]
    """How the job is deployed: native (its objects) or operator (its Volcano Job)."""

    def __init__(
        self,
        name: str,
        args: VolcanoJobArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        exclude: Collection[Identity] = (),
        warn: bool = True,
    ) -> None:
        """``exclude``: objects registered elsewhere (see the other job components)."""
        expansion = expand(VolcanoJobDocument, args, f"VolcanoJob {name}")
        super().__init__(TYPE, name, None, opts)
        register_expansion(
            self, expansion, where=f"VolcanoJob {name}", opts=opts, exclude=exclude, warn=warn
        )
        document = expansion.loaded.job
        assert isinstance(document, VolcanoJobDocument)
        names = [
            pod_name(document.name, task_name, i)
            for task, task_name in zip(document.spec.tasks, document.task_names(), strict=True)
            for i in range(task.replicas)
        ]
        self.pods = pulumi.Output.from_input(names)
        self.mode = pulumi.Output.from_input(expansion.mode)
        self.register_outputs({"pods": self.pods, "mode": self.mode})

    def exports(self) -> dict[str, Any]:
        """What the stack program exports for this job."""
        return {"kind": "VolcanoJob", "mode": self.mode, "pods": self.pods}


attach_component(VolcanoJobDocument, VolcanoJob)
