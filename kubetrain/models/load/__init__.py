"""Loading a stack: stack file -> settings -> job documents -> validated, located models.

All problems found in one pass are reported together, each as ``FILE:LINE: path: message``.
One module per part of the work:

- :mod:`.stacks`: a stack (its file, Pulumi config or data made in memory) loaded whole;
- :mod:`.discovery`: stack files by name, the project root, the documents of jobFiles and
  manifestFiles;
- :mod:`.config`: ``kubetrain:*`` keys, Pulumi config values, component inputs' attribute names;
- :mod:`.jobs`: one job document's rules, the stack's duplicates and output budget;
- :mod:`.manifests`: plain Kubernetes objects;
- :mod:`.trainjob_rules`: Kubeflow Trainer runtimes and what the trainer admits of a TrainJob;
- :mod:`.kueue_rules`: queues, priority classes and quotas;
- :mod:`.messages`: pydantic's errors as messages at the stack file's fields;
- :mod:`.embedded`: embedded Kubernetes types against the stack's Kubernetes version;
- :mod:`.loaded`: what loading gives (:class:`Stack`, :class:`LoadedJob`, ...).
"""

from __future__ import annotations

from ..base import MODE_ANNOTATION, NATIVE_WORKLOAD_ANNOTATION
from .config import config_keys, document_keys
from .discovery import discover_stacks, find_project_root, stack_name, stack_name_problem
from .jobs import load_job, load_job_document
from .loaded import JobSource, LoadedJob, LoadedManifest, Stack
from .stacks import load_stack, load_stack_config, load_stack_data
from .trainjob_rules import runtime_from_args

__all__ = [
    "MODE_ANNOTATION",
    "NATIVE_WORKLOAD_ANNOTATION",
    "JobSource",
    "LoadedJob",
    "LoadedManifest",
    "Stack",
    "config_keys",
    "discover_stacks",
    "document_keys",
    "find_project_root",
    "load_job",
    "load_job_document",
    "load_stack",
    "load_stack_config",
    "load_stack_data",
    "runtime_from_args",
    "stack_name",
    "stack_name_problem",
]
