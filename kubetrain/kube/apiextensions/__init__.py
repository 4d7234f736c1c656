"""Custom resources as kube-apiserver's apiextensions sees them: structural schemas compiled once
(:mod:`.schema`), custom resources validated against them with defaults, unknown fields and CEL
rules (:mod:`.validation`, :mod:`.cel`), and CustomResourceDefinitions validated themselves
(:mod:`.definition`, :mod:`.structural`). Mirrors ``k8s.io/apiextensions-apiserver``."""

from .definition import CRDVersion, crd_versions, validate_crd
from .schema import Node, compile_schema
from .structural import structural_problems
from .validation import (
    apply_defaults,
    validate_custom_resource,
    validate_custom_resource_update,
    validate_value,
)

__all__ = [
    "CRDVersion",
    "Node",
    "apply_defaults",
    "compile_schema",
    "crd_versions",
    "structural_problems",
    "validate_crd",
    "validate_custom_resource",
    "validate_custom_resource_update",
    "validate_value",
]
