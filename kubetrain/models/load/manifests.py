"""Plain Kubernetes objects of ``kubetrain:manifests`` / ``kubetrain:manifestFiles``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ...kube import apiserver, catalog, scopes
from ...kube import schemas as k8s
from ...kube.catalog import group_of
from ..base import (
    job_kinds,
    plain_copy,
)
from ..errors import Problem
from ..secrets import (
    configmap_credential_problems,
    credential_problems,
    external_secret_template_problems,
)
from ..source import (
    Document,
)
from ..stack import CONFIG_NAMESPACE, StackSettings
from .loaded import JobSource, LoadedManifest


def crd_scopes(docs: Iterable[Document]) -> dict[tuple[str, str], bool]:
    """(group, kind) -> namespaced, for every CRD among the stack's manifests."""
    out: dict[tuple[str, str], bool] = {}
    for doc in docs:
        data = doc.data
        if not isinstance(data, dict) or data.get("kind") != "CustomResourceDefinition":
            continue
        spec = data.get("spec")
        names = spec.get("names") if isinstance(spec, dict) else None
        if isinstance(names, dict) and isinstance(spec, dict):
            group, kind = spec.get("group"), names.get("kind")
            if isinstance(group, str) and isinstance(kind, str):
                out[(group, kind)] = spec.get("scope") != "Cluster"
    return out


def load_manifest(
    doc: Document,
    settings: StackSettings,
    problems: list[Problem],
    crds: Mapping[tuple[str, str], bool] = {},
) -> LoadedManifest | None:
    """A plain Kubernetes object: a mapping with apiVersion, kind and metadata.name, no job
    kind, no secret material; a built-in kind is checked against its schema and what the API
    server checks beyond it here (other kinds by ``validate``, which knows their schema
    locations and CRDs), and a namespaced built-in kind
    without a namespace is put in ``kubetrain:namespace``."""
    data = doc.data
    if not isinstance(data, dict):
        problems.append(doc.problem((), "a manifest must be a mapping with apiVersion and kind"))
        return None
    before = len(problems)
    api_version, kind, meta = data.get("apiVersion"), data.get("kind"), data.get("metadata")
    for key, value in (("apiVersion", api_version), ("kind", kind)):
        if not isinstance(value, str) or not value:
            problems.append(doc.problem((key,), "required field is missing"))
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
        problems.append(doc.problem(("metadata", "name"), "required field is missing"))
    if len(problems) > before:
        return None
    assert isinstance(api_version, str) and isinstance(kind, str) and isinstance(meta, dict)
    if (api_version, kind) in job_kinds():
        problems.append(
            doc.problem(
                ("kind",),
                f"{kind} is a job kind: list it under {CONFIG_NAMESPACE}:jobs (or in a file of "
                f"{CONFIG_NAMESPACE}:jobFiles), where kubetrain expands it",
            )
        )
        return None
    if kind == "Secret" and api_version == "v1":
        for key in ("data", "stringData"):
            if data.get(key):
                problems.append(
                    doc.problem(
                        (key,),
                        "a Secret with data puts secret material in the repository: give "
                        f"credentials with {CONFIG_NAMESPACE}:credentials and "
                        f"{CONFIG_NAMESPACE}:secretStore, render an ExternalSecret, or create "
                        f"the Secret elsewhere and list it in {CONFIG_NAMESPACE}:external.secrets",
                    )
                )
    # The one credential rule of job documents holds here too (env values, annotations, labels,
    # command lines of pod templates), and a ConfigMap key named like a credential holds one.
    found = credential_problems(data)
    if kind == "ConfigMap" and api_version == "v1":
        found += configmap_credential_problems(data)
    found += external_secret_template_problems(data)
    problems += [doc.problem(path, message) for path, message in found]
    validator = k8s.builtin_validator(settings.version, api_version, kind)
    if validator is not None:
        defs = k8s.definitions(settings.version)["$defs"]
        for issue in k8s.schema_issues(validator, data, defs):
            problems.append(doc.problem(issue.path, issue.message))
    if len(problems) > before:
        return None
    obj = plain_copy(data)
    builtin = k8s.builtin_definition(settings.version, api_version, kind) is not None
    if builtin:
        in_namespace: bool | None = catalog.lookup((group_of(api_version), kind)).namespaced
    else:
        external = settings.external
        in_namespace = scopes.namespaced(
            api_version, kind, crds, external.namespaced_kinds, external.cluster_scoped_kinds
        )
    if not meta.get("namespace"):
        if in_namespace is None:
            problems.append(
                doc.problem(
                    ("metadata", "namespace"),
                    f"cannot tell whether {kind} ({api_version}) is namespaced: give "
                    "metadata.namespace, put its CRD among the stack's manifests, or list "
                    f"{scopes.kind_key(api_version, kind)} in {CONFIG_NAMESPACE}:external."
                    "namespacedKinds or clusterScopedKinds",
                )
            )
            return None
        if in_namespace:
            obj["metadata"]["namespace"] = settings.namespace
    # What the API server refuses beyond the schema, at the manifest's own lines.
    for api_issue in apiserver.object_issues(obj, settings.version):
        problems.append(doc.problem(api_issue.path, api_issue.message))
    if len(problems) > before:
        return None
    return LoadedManifest(obj, JobSource(doc))


def duplicate_manifests(manifests: Iterable[LoadedManifest]) -> list[Problem]:
    first: dict[tuple[str, str, str, str], LoadedManifest] = {}
    problems = []
    for m in manifests:
        meta = m.obj["metadata"]
        key = (
            m.obj["apiVersion"].rpartition("/")[0],
            m.obj["kind"],
            meta.get("namespace", ""),
            meta["name"],
        )
        if key in first:
            problems.append(
                m.source.problem(
                    ("metadata", "name"), f"{m.title} is already defined at {first[key].source}"
                )
            )
        else:
            first[key] = m
    return problems
