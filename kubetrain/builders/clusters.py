"""Per-cluster overrides of ``kubetrain:clusters`` that act on built objects: a cluster's
``nodeSelector`` added to the pod templates of its jobs.

(A cluster's ``gpuResource`` and ``patches`` act before anything is built: the stack is loaded
for that cluster, :func:`kubetrain.models.load.load_stack`.)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["pod_specs", "with_node_selector"]

Manifest = dict[str, Any]


def pod_specs(obj: Manifest) -> Iterator[dict[str, Any]]:
    """Every pod spec of ``obj``: a Pod's ``spec``, and each ``template.spec`` holding
    containers at any depth (a Job's, a JobSet's replicated Jobs', a custom resource's replica
    templates)."""
    spec = obj.get("spec")
    if obj.get("kind") == "Pod" and isinstance(spec, dict):
        yield spec
        return
    yield from _templates(spec)


def _templates(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, list):
        for item in node:
            yield from _templates(item)
        return
    if not isinstance(node, dict):
        return
    template = node.get("template")
    if isinstance(template, dict):
        spec = template.get("spec")
        if isinstance(spec, dict) and isinstance(spec.get("containers"), list):
            yield spec
    for key, value in node.items():
        if key != "template" or not isinstance(value, dict):
            yield from _templates(value)
        elif isinstance(value.get("spec"), dict) and "containers" not in value["spec"]:
            yield from _templates(value["spec"])  # a JobSet's replicated Job template


def with_node_selector(obj: Manifest, selector: Mapping[str, str]) -> Manifest:
    """``obj`` with ``selector`` merged into the nodeSelector of each of its pod specs (the
    cluster's value wins for a key the job sets too). Objects without pods are unchanged."""
    if not selector:
        return obj
    for spec in pod_specs(obj):
        merged = dict(spec.get("nodeSelector") or {})
        merged.update(selector)
        spec["nodeSelector"] = dict(sorted(merged.items()))
    return obj
