"""The real CRDs kubetrain judges third-party custom resources by (kubetrain/kube/crds/data/),
derived by the project's own code (kubetrain.kube.crds.derive) from ../shared/crds, read in
place: the committed files are what deriving again gives (a drift test), they hold what the
server validates with, and validate uses them."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
import yaml

from kubetrain.kube.apiextensions import crd_versions, validate_crd
from kubetrain.kube.crds import derived_crd, derived_crds, expand
from kubetrain.kube.crds.derive import SHARED_KEY, _strip, derive_tree, main, write
from kubetrain.models.base import resource_kinds
from kubetrain.validate import Located, Validator
from kubetrain.validate.customresources import builtin_version

from conftest import REPO, UPSTREAM_CRDS, needs_upstream_crds

DATA = REPO / "kubetrain" / "kube" / "crds" / "data"


def _committed() -> dict[str, str]:
    return {p.relative_to(DATA).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(DATA.rglob("*.json"))}  # fmt: skip


@needs_upstream_crds
def test_the_derived_crds_are_what_deriving_from_the_shared_crds_gives() -> None:
    derived = derive_tree(UPSTREAM_CRDS)
    committed = _committed()
    assert len(derived) >= 25
    stale = sorted(set(committed) - set(derived))
    missing = sorted(set(derived) - set(committed))
    changed = sorted(r for r in set(derived) & set(committed) if derived[r] != committed[r])
    assert (stale, missing, changed) == ([], [], []), (
        "kubetrain/kube/crds/data drifted from ../shared/crds; regenerate it with "
        "`python -m kubetrain.kube.crds.derive ../shared/crds` and review the diff"
    )


@needs_upstream_crds
def test_the_drift_test_sees_a_changed_crd(tmp_path: Path) -> None:
    # A CRD whose bound changes upstream derives to other bytes than those committed.
    folder = tmp_path / "crds"
    shutil.copytree(UPSTREAM_CRDS / "scheduling.volcano.sh", folder / "scheduling.volcano.sh")
    before = derive_tree(folder)
    file = next((folder / "scheduling.volcano.sh").glob("*.yaml"))
    file.write_text(
        file.read_text().replace(
            "minMember:",
            "minMember:\n                minimum: 2\n                x-unused: 1\n               ",
            1,
        )
    )
    after = derive_tree(folder)
    assert (
        before["scheduling.volcano.sh/podgroups.json"]
        != after["scheduling.volcano.sh/podgroups.json"]
    )


@needs_upstream_crds
def test_each_derived_schema_is_the_real_one_without_descriptions() -> None:
    checked = 0
    for file in sorted(UPSTREAM_CRDS.rglob("*.yaml")):
        for doc in yaml.load_all(file.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader):
            if not doc:
                continue
            crd = derived_crd(f"{doc['spec']['group']}/{doc['spec']['versions'][0]['name']}",
                              doc["spec"]["names"]["kind"])  # fmt: skip
            assert crd is not None, file
            mine = {v["name"]: v for v in crd.definition()["spec"]["versions"]}
            for version in doc["spec"]["versions"]:
                if not version.get("served", True):
                    assert version["name"] not in mine  # the server serves none of it
                    continue
                real = version["schema"]["openAPIV3Schema"]
                assert mine[version["name"]]["schema"]["openAPIV3Schema"] == _strip(real)
                assert (mine[version["name"]].get("subresources") or None) == (
                    version.get("subresources") or None
                )
                checked += 1
            assert crd.scope == doc["spec"]["scope"]
            assert crd.source and crd.source in file.read_text(encoding="utf-8")
    assert checked >= 30


def test_every_derived_crd_is_one_the_api_server_accepts() -> None:
    crds = {id(c): c for c in derived_crds().values()}
    assert len(crds) >= 25
    for crd in crds.values():
        assert validate_crd(crd.definition()) == [], crd.file


def test_shared_subtrees_are_put_back() -> None:
    text = (DATA / "kubeflow.org" / "pytorchjobs.json").read_text(encoding="utf-8")
    assert SHARED_KEY in text  # the pod template is stored once
    schema = derived_crd("kubeflow.org/v1", "PyTorchJob").definition()  # type: ignore[union-attr]
    assert SHARED_KEY not in json.dumps(schema)
    assert expand({"a": [1, {"b": 2}]}) == {"a": [1, {"b": 2}]}


def test_third_party_kinds_kubetrain_emits_are_judged_by_their_real_crds() -> None:
    judged = set()
    for api_version, kind in sorted(resource_kinds()):
        real = derived_crd(api_version, kind)
        ours = builtin_version(api_version, kind, (1, 36))
        if real is None or ours is None:
            continue
        if kind == "JobSet":
            # ../shared/crds holds v0.9.1; the v0.12.0 model Trainer v2.3.0 pins judges (its
            # catalogue row's model_schema): the CRD's own source is not the judge's.
            assert ours.source != real.source
            continue
        assert ours.source == real.source, kind
        judged.add(kind)
    assert {"PyTorchJob", "TFJob", "MPIJob", "TrainJob", "PodGroup", "ClusterQueue",
            "ExternalSecret", "Application", "Kustomization"} <= judged  # fmt: skip


def test_a_jobset_of_v0_12_passes_where_the_shared_v0_9_1_crd_would_refuse_it() -> None:
    """volumeClaimPolicies (JobSet v0.12.0, written by native mode for the torchtune runtimes)
    is a field of the model that judges JobSets (found by make e2e: v0.9.1's CRD refused it)."""
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
              "metadata": {"name": "j", "namespace": "ml"},
              "spec": {"replicatedJobs": [], "volumeClaimPolicies": [{"templates": [
                  {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                   "resources": {"requests": {"storage": "1Gi"}}}}]}]}}  # fmt: skip
    found = Validator((1, 36)).check(Located(jobset, "j.yaml")).findings
    assert [f for f in found if f.rule == "schema"] == [], found
    jobset["spec"]["volumeClaimPolicie"] = []
    found = Validator((1, 36)).check(Located(jobset, "j.yaml")).findings
    assert [(f.rule, f.path) for f in found if f.rule == "schema"] == [
        ("schema", ("spec", "volumeClaimPolicie"))
    ]


def test_a_kind_kubetrain_has_no_model_of_is_judged_by_its_real_crd() -> None:
    # Flux's OCIRepository: no kubetrain model, yet a real CRD.
    repo = {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "OCIRepository",
            "metadata": {"name": "r", "namespace": "flux-system"},
            "spec": {"interval": "5m", "url": "oci://example.com/x", "bogus": 1}}  # fmt: skip
    result = Validator((1, 36)).check(Located(repo, "r.yaml"))
    assert [(f.rule, f.path) for f in result.findings] == [("schema", ("spec", "bogus"))]
    good = copy.deepcopy(repo)
    del good["spec"]["bogus"]
    assert Validator((1, 36)).check(Located(good, "r.yaml")).findings == []


def test_the_scale_subresource_refuses_negative_replicas() -> None:
    # The CRD says nothing of the Worker's replicas; its scale subresource's path is checked.
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
           "metadata": {"name": "p", "namespace": "ns"},
           "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": -1, "template": {"spec": {
               "containers": [{"name": "pytorch", "image": "i:1"}]}}}}}}  # fmt: skip
    result = Validator((1, 36)).check(Located(job, "p.yaml"))
    assert [(f.rule, f.path, f.message) for f in result.findings] == [
        ("schema", ("spec", "pytorchReplicaSpecs", "Worker", "replicas"),
         "Invalid value: -1: should be a non-negative integer")
    ]  # fmt: skip
    assert crd_versions(derived_crd("kubeflow.org/v1", "PyTorchJob").definition())[0].scale_replicas  # type: ignore[union-attr]


def test_status_under_the_status_subresource_is_only_shaped() -> None:
    # A create drops status (PrepareForCreate): its values are not validated, its shape is.
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
           "metadata": {"name": "p", "namespace": "ns"},
           "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {
               "containers": [{"name": "pytorch", "image": "i:1"}]}}}}},
           "status": {"conditions": [{"type": "x"}]}}  # fmt: skip
    assert Validator((1, 36)).check(Located(job, "p.yaml")).findings == []
    job["status"] = {"bogus": 1}
    found = Validator((1, 36)).check(Located(job, "p.yaml")).findings
    assert [(f.rule, f.path) for f in found] == [("schema", ("status", "bogus"))]


def test_the_command_derives_into_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path / "absent")]) == 2
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "x.yaml").write_text(yaml.safe_dump({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"kind": "Thing", "plural": "things"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                     "openAPIV3Schema": {"type": "object", "description": "gone"}}}]}}))  # fmt: skip
    out = tmp_path / "out"
    (out / "old").mkdir(parents=True)
    (out / "old" / "stale.json").write_text("{}")
    assert write(crds, out) == ["example.com/things.json", "shared.json"]
    assert not (out / "old" / "stale.json").exists()
    assert "description" not in (out / "example.com" / "things.json").read_text()
