"""Pure builders: job specs -> Kubernetes manifests (plain dicts). Never imports pulumi.

Importing this package registers the builder of every job kind.
"""

from .. import delivery  # noqa: F401  (registers the GitOps resource kinds)
from . import (  # noqa: F401  (registers the builders)
    jaxjob,
    learner,
    mpijob,
    paddlejob,
    pytorchjob,
    tfjob,
    trainingjob,
    trainjob,
    volcanojob,
    xgboostjob,
)
from .context import BuildContext, Target
from .registry import Built, build_job, build_stack

__all__ = ["BuildContext", "Built", "Target", "build_job", "build_stack"]
