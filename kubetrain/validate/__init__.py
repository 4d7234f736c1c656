"""Validation of Kubernetes objects: strict JSON schemas (built-in, generated, or from schema
locations in kubeconform's syntax), duplicates, and reports."""

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

__all__ = [
    "DEFAULT_VERSION",
    "Finding",
    "Format",
    "Located",
    "ObjectResult",
    "Report",
    "Validator",
    "add_lines",
    "format_report",
    "read_objects",
]
