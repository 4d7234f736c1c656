"""What a builder knows besides the job: the stack's settings and which back end it feeds."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..models.runtimes import Runtime, RuntimeKey
from ..models.stack import StackSettings

__all__ = ["BuildContext", "Target"]


class Target(enum.StrEnum):
    """Which back end a build feeds: ``render`` writes YAML for GitOps (no secret material,
    ExternalSecrets instead); ``pulumi`` registers resources (Secrets with values from Pulumi
    config secrets). Code compares the members, never the strings."""

    RENDER = "render"
    PULUMI = "pulumi"


@dataclass(frozen=True)
class BuildContext:
    settings: StackSettings
    target: Target = Target.RENDER
    #: Rewrites and dropped fields the builders report while expanding the current job, as
    #: (field path in the job document, message); :func:`.registry.build_job` collects them.
    warnings: list[tuple[tuple[str | int, ...], str]] = field(
        default_factory=list, compare=False, repr=False
    )
    #: The Kubeflow Trainer runtimes the stack's TrainJobs may name.
    runtimes: Mapping[RuntimeKey, Runtime] = field(default_factory=dict, compare=False, repr=False)
    #: Node labels the cluster being built for adds to every pod template of its jobs
    #: (``kubetrain:clusters[].nodeSelector``).
    node_selector: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    #: The value of each PriorityClass the stack delivers, by name (:func:`.gang.priority_classes`;
    #: the API server's own are known besides), which orders the pods an MPIJob's or a Volcano
    #: Job's partial gang sums.
    priorities: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "target", Target(self.target))  # a misspelt target is none

    def warn(self, path: tuple[str | int, ...], message: str) -> None:
        """Report that the output differs from what the job document says (a field rewritten
        or not used): printed as a warning at the field's line, an error under --strict."""
        if (path, message) not in self.warnings:
            self.warnings.append((path, message))
