"""kubetrain's own kinds (``kubetrain.io``) and PaddlePaddle EDL's (``paddlepaddle.org``), whose
CRDs kubetrain writes (:mod:`kubetrain.builders.crd` reads their names here)."""

from __future__ import annotations

from . import Scope, group, hand

GROUPS = (
    group("kubetrain.io", hand("Learner", scope=Scope.NAMESPACED, plural="learners")),
    group("paddlepaddle.org", hand("TrainingJob", scope=Scope.NAMESPACED, plural="trainingjobs")),
)
