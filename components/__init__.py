"""Pulumi ComponentResources deploying kubetrain jobs: the objects ``kubetrain render`` writes.

One component per job kind (``TFJob`` with its ``TFReplicaSet`` children, ``TrainingJob``,
``LearnerStatefulSet``; type token ``kubetrain:index:<ClassName>``), one per module. Each
takes ``(name, args, opts)``; ``args`` is a TypedDict (the schema other Pulumi languages see
through ``provider/``), validated into the same pydantic spec and expanded by the same builder
as the render path. ``stacks/__main__.py`` creates one component per job of the selected stack.

The only package importing pulumi; it uses kubetrain.models and kubetrain.builders, nothing else.
"""

from ._args import JobMetadataArgs, SettingsArgs
from ._program import COMPONENTS, component_name, deploy_stack
from .learner import (
    DataStoreArgs,
    DataStoresArgs,
    FrameworkArgs,
    LearnerImageArgs,
    LearnerResourcesArgs,
    LearnerSpecArgs,
    LearnerStatefulSet,
    LearnerStatefulSetArgs,
)
from .tfjob import (
    RunPolicyArgs,
    SchedulingPolicyArgs,
    TFJob,
    TFJobArgs,
    TFJobSpecArgs,
    TFReplicaSpecArgs,
)
from .tfreplicaset import TFReplicaSet, TFReplicaSetArgs
from .trainingjob import (
    MasterSpecArgs,
    PserverSpecArgs,
    TrainerSpecArgs,
    TrainingJob,
    TrainingJobArgs,
    TrainingJobSpecArgs,
)

#: Every component, in the order the provider hosts them.
ALL_COMPONENTS = (TFJob, TFReplicaSet, TrainingJob, LearnerStatefulSet)

__all__ = [
    "ALL_COMPONENTS",
    "COMPONENTS",
    "DataStoreArgs",
    "DataStoresArgs",
    "FrameworkArgs",
    "JobMetadataArgs",
    "LearnerImageArgs",
    "LearnerResourcesArgs",
    "LearnerSpecArgs",
    "LearnerStatefulSet",
    "LearnerStatefulSetArgs",
    "MasterSpecArgs",
    "PserverSpecArgs",
    "RunPolicyArgs",
    "SchedulingPolicyArgs",
    "SettingsArgs",
    "TFJob",
    "TFJobArgs",
    "TFJobSpecArgs",
    "TFReplicaSet",
    "TFReplicaSetArgs",
    "TFReplicaSpecArgs",
    "TrainerSpecArgs",
    "TrainingJob",
    "TrainingJobArgs",
    "TrainingJobSpecArgs",
    "component_name",
    "deploy_stack",
]
