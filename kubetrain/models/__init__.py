"""Typed input: the stack file, the job kinds and the shared Kubernetes types.

Importing this package registers every job kind.
"""

from . import (  # noqa: F401  (registers the job and resource kinds)
    jaxjob,
    jobset,
    kueue,
    learner,
    mpijob,
    paddlejob,
    pytorchjob,
    scheduling,
    secrets,
    tfjob,
    trainingjob,
    trainjob,
    volcanojob,
    xgboostjob,
)
from .base import DerivedName, JobDocument, JobMeta, K8sType, Strict, job_kind, job_kinds
from .errors import CheckFailed, InputError, KubetrainError, OwnershipError, Problem
from .kinds import KindDeclaration, declaration, declarations, declare
from .load import (
    MODE_ANNOTATION,
    NATIVE_WORKLOAD_ANNOTATION,
    JobSource,
    LoadedJob,
    Stack,
    discover_stacks,
    find_project_root,
    load_job,
    load_stack,
    load_stack_config,
)
from .stack import StackSettings

__all__ = [
    "MODE_ANNOTATION",
    "NATIVE_WORKLOAD_ANNOTATION",
    "CheckFailed",
    "DerivedName",
    "InputError",
    "JobDocument",
    "JobMeta",
    "JobSource",
    "K8sType",
    "KindDeclaration",
    "KubetrainError",
    "LoadedJob",
    "OwnershipError",
    "Problem",
    "Stack",
    "StackSettings",
    "Strict",
    "declaration",
    "declarations",
    "declare",
    "discover_stacks",
    "find_project_root",
    "job_kind",
    "job_kinds",
    "load_job",
    "load_stack",
    "load_stack_config",
]
