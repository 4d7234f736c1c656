"""The CRDs a test cluster holds: every CRD of ../shared/crds, kubetrain's own, and those the
operators' own releases install (read from their Go modules, beside the built binaries)."""

from __future__ import annotations

import time
from pathlib import Path

import yaml

from . import tools
from .cluster import ControlPlane, wait_for

SHARED = tools.REPO.parent / "shared"
SHARED_CRDS = SHARED / "crds"


def documents(path: Path) -> list[dict]:
    files = sorted(path.rglob("*.yaml")) if path.is_dir() else [path]
    out = []
    for file in files:
        for doc in yaml.safe_load_all(file.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                out.append(doc)
    return out


def shared_crds() -> list[dict]:
    return documents(SHARED_CRDS)


def kubetrain_crds(version: tuple[int, int] = (1, 36)) -> list[dict]:
    """The CRDs kubetrain itself renders (operator mode of its own kinds) for `version`."""
    import kubetrain.builders  # noqa: F401 - registers every kind's CRD
    from kubetrain.builders.crd import custom_resource_definition, owned_crds

    return [custom_resource_definition(info.model, version) for info in owned_crds()]


def install(cluster: ControlPlane, crds: list[dict], timeout: float = 120) -> list[str]:
    """Create or update `crds` (server-side apply, field manager kubetrain-e2e) and wait until
    every one is Established; their names."""
    names = []
    for crd in crds:
        name = crd["metadata"]["name"]
        names.append(name)
        body = yaml.safe_dump(crd).encode()
        status, answer = cluster.request(
            "PATCH",
            f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}",
            body,
            content_type="application/apply-patch+yaml",
            query="fieldManager=kubetrain-e2e&force=true",
        )
        if status not in (200, 201):
            raise RuntimeError(f"installing CRD {name}: {status} {answer}")
    for name in names:
        wait_for(f"CRD {name} Established", lambda n=name: _established(cluster, n), timeout)
    # Discovery lags a moment behind the Established condition.
    time.sleep(0.5)
    return names


def _established(cluster: ControlPlane, name: str) -> bool:
    crd = cluster.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
    conditions = (crd or {}).get("status", {}).get("conditions", [])
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)
