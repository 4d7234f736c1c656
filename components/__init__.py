"""Pulumi ComponentResources deploying kubetrain jobs: the objects ``kubetrain render`` writes.

One component per job kind, attached to the kind's declaration (:mod:`kubetrain.models.kinds`),
with the child components it creates (``TFJob`` with its ``TFReplicaSet`` children); type token
``kubetrain:index:<ClassName>``, one per module. Each
takes ``(name, args, opts)``; ``args`` is a TypedDict (the schema other Pulumi languages see
through ``provider/``), validated into the same pydantic spec and expanded by the same builder
as the render path. ``stacks/__main__.py`` creates one component per job of the selected stack.

The only package importing pulumi; it uses kubetrain.models and kubetrain.builders, nothing else.
"""

from kubetrain.models import declarations

from ._args import JobMetadataArgs, SettingsArgs
from ._kubeflow import KubeflowJobComponent, ReplicaSpecArgs
from ._kubeflow_args import RunPolicyArgs, SchedulingPolicyArgs
from ._program import COMPONENTS, component_name, deploy_stack
from .jaxjob import JAXJob, JAXJobArgs, JAXJobSpecArgs
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
from .mpijob import MPIJob, MPIJobArgs, MPIJobSpecArgs, MPIReplicaSpecArgs
from .paddlejob import PaddleElasticPolicyArgs, PaddleJob, PaddleJobArgs, PaddleJobSpecArgs
from .pytorchjob import (
    ElasticPolicyArgs,
    PyTorchJob,
    PyTorchJobArgs,
    PyTorchJobSpecArgs,
    PyTorchReplicaSpecArgs,
    RDZVConfArgs,
)
from .tfjob import (
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
from .trainjob import (
    InitializerArgs,
    InitializerStepArgs,
    RuntimePatchArgs,
    RuntimeRefArgs,
    TrainerArgs,
    TrainJob,
    TrainJobArgs,
    TrainJobRuntimeArgs,
    TrainJobSpecArgs,
)
from .volcanojob import VolcanoJob, VolcanoJobArgs, VolcanoJobSpecArgs, VolcanoTaskArgs
from .xgboostjob import XGBoostJob, XGBoostJobArgs, XGBoostJobSpecArgs

#: Every component, in the order the provider hosts them: each declared kind's component and the
#: components it creates as children.
ALL_COMPONENTS: tuple[type, ...] = tuple(
    c for d in declarations() if d.component is not None for c in (d.component, *d.child_components)
)

__all__ = [
    "ALL_COMPONENTS",
    "COMPONENTS",
    "DataStoreArgs",
    "DataStoresArgs",
    "ElasticPolicyArgs",
    "FrameworkArgs",
    "InitializerArgs",
    "InitializerStepArgs",
    "JAXJob",
    "JAXJobArgs",
    "JAXJobSpecArgs",
    "JobMetadataArgs",
    "KubeflowJobComponent",
    "LearnerImageArgs",
    "LearnerResourcesArgs",
    "LearnerSpecArgs",
    "LearnerStatefulSet",
    "LearnerStatefulSetArgs",
    "MPIJob",
    "MPIJobArgs",
    "MPIJobSpecArgs",
    "MPIReplicaSpecArgs",
    "MasterSpecArgs",
    "PaddleElasticPolicyArgs",
    "PaddleJob",
    "PaddleJobArgs",
    "PaddleJobSpecArgs",
    "PserverSpecArgs",
    "PyTorchJob",
    "PyTorchJobArgs",
    "PyTorchJobSpecArgs",
    "PyTorchReplicaSpecArgs",
    "RDZVConfArgs",
    "ReplicaSpecArgs",
    "RunPolicyArgs",
    "RuntimePatchArgs",
    "RuntimeRefArgs",
    "SchedulingPolicyArgs",
    "SettingsArgs",
    "TFJob",
    "TFJobArgs",
    "TFJobSpecArgs",
    "TFReplicaSet",
    "TFReplicaSetArgs",
    "TFReplicaSpecArgs",
    "TrainJob",
    "TrainJobArgs",
    "TrainJobRuntimeArgs",
    "TrainJobSpecArgs",
    "TrainerArgs",
    "TrainerSpecArgs",
    "TrainingJob",
    "TrainingJobArgs",
    "TrainingJobSpecArgs",
    "VolcanoJob",
    "VolcanoJobArgs",
    "VolcanoJobSpecArgs",
    "VolcanoTaskArgs",
    "XGBoostJob",
    "XGBoostJobArgs",
    "XGBoostJobSpecArgs",
    "component_name",
    "deploy_stack",
]
