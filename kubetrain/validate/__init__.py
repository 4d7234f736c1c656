"""Validation of Kubernetes objects: strict JSON schemas (built-in, generated, or from schema
locations in kubeconform's syntax; or kubeconform itself), duplicates, the semantic checks that
schemas cannot make, and reports."""

from .engine import (
    DEFAULT_VERSION,
    Finding,
    Located,
    ObjectResult,
    Report,
    Validator,
    add_lines,
    read_objects,
)
from .report import Format, format_report
from .semantic import RULES, CheckSettings, check_objects

__all__ = [
    "DEFAULT_VERSION",
    "RULES",
    "CheckSettings",
    "Finding",
    "Format",
    "Located",
    "ObjectResult",
    "Report",
    "Validator",
    "add_lines",
    "check_objects",
    "format_report",
    "read_objects",
]
