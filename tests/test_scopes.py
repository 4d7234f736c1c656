"""The scopes the catalogue gives custom kinds agree with the real CRDs of ../shared/crds."""

from __future__ import annotations

import yaml

from kubetrain.kube import catalog
from kubetrain.kube.scopes import namespaced

from conftest import REPO, needs_upstream_crds

CRDS = REPO.parent / "shared" / "crds"


@needs_upstream_crds
def test_every_upstream_crd_is_known_with_its_scope() -> None:
    seen = 0
    for path in sorted(CRDS.rglob("*.yaml")):
        for doc in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            key = (spec["group"], spec["names"]["kind"])
            assert catalog.lookup(key).namespaced == (spec["scope"] == "Namespaced"), (
                path.name,
                key,
            )
            seen += 1
    assert seen >= 20


def test_the_stacks_crds_win_over_declarations_and_the_table() -> None:
    assert namespaced("external-secrets.io/v1", "ExternalSecret") is True
    assert namespaced("kueue.x-k8s.io/v1beta1", "ClusterQueue") is False
    assert namespaced("example.com/v1", "Widget") is None
    assert namespaced("example.com/v1", "Widget", declared_cluster=["Widget.example.com"]) is False
    assert namespaced("example.com/v1", "Widget", declared_namespaced=["Widget.example.com"])
    crds = {("external-secrets.io", "ExternalSecret"): False}
    assert namespaced("external-secrets.io/v1", "ExternalSecret", crds) is False
