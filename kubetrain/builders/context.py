"""What a builder knows besides the job: the stack's settings and which back end it feeds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..models.stack import StackSettings

__all__ = ["BuildContext", "Target"]

#: ``render`` writes YAML for GitOps (no secret material, ExternalSecrets instead); ``pulumi``
#: registers resources (Secrets with values from Pulumi config secrets).
Target = Literal["render", "pulumi"]


@dataclass(frozen=True)
class BuildContext:
    settings: StackSettings
    target: Target = "render"
