"""Pulumi ComponentResources deploying kubetrain jobs: the objects ``kubetrain render`` writes.

One component per job kind (type token ``kubetrain:index:<ClassName>``), one per module. Each
takes ``(name, args, opts)``; ``args`` is a TypedDict (the schema other Pulumi languages see
through ``provider/``), validated into the same pydantic spec and expanded by the same builder
as the render path. ``stacks/__main__.py`` creates one component per job of the selected stack.

The only package importing pulumi; it uses kubetrain.spec and kubetrain.build, nothing else.
"""

from ._args import JobMetadataArgs, SettingsArgs
from ._program import COMPONENTS, component_name, deploy_stack
from .tfjob import (
    RunPolicyArgs,
    SchedulingPolicyArgs,
    TFJob,
    TFJobArgs,
    TFJobSpecArgs,
    TFReplicaSpecArgs,
)
from .tfreplicaset import TFReplicaSet, TFReplicaSetArgs

#: Every component, in the order the provider hosts them.
ALL_COMPONENTS = (TFJob, TFReplicaSet)

__all__ = [
    "ALL_COMPONENTS",
    "COMPONENTS",
    "JobMetadataArgs",
    "RunPolicyArgs",
    "SchedulingPolicyArgs",
    "SettingsArgs",
    "TFJob",
    "TFJobArgs",
    "TFJobSpecArgs",
    "TFReplicaSet",
    "TFReplicaSetArgs",
    "TFReplicaSpecArgs",
    "component_name",
    "deploy_stack",
]
