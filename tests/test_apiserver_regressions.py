"""Every disagreement with a real kube-apiserver v1.36.2 that the validation generator
(e2e/test_validation_oracle.py, ``make e2e``) found, kept as a labelled case and run offline.

Each record of ``tests/apiserver-regressions/*.jsonl`` holds the object sent (or the live object
and the edit, for an update), the server's answer (verdict, status, message, the field paths it
names), what kubetrain said when the case was found, and its status: ``fixed`` (kubetrain now
agrees: verdict, and a refusal at a field the server names or one around it), ``tolerated`` (a
difference kubetrain keeps on purpose, named: ``TOLERANCES`` of tests/apiserver_oracle.py,
each with its reason) or ``open`` (not fixed yet: still disagreeing, so that a fix shows up
here and the record is relabelled). New records are added with ``python
tests/apiserver_oracle.py label RECORDS.jsonl``.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from apiserver_oracle import REGRESSIONS, SERVER, TOLERANCES, case_id, judged


def _records() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for file in sorted(REGRESSIONS.glob("*.jsonl")):
        for line in file.read_text(encoding="utf-8").splitlines():
            out.append((file.name, json.loads(line)))
    return out


RECORDS = _records()


def test_the_regression_cases_are_there_and_well_formed() -> None:
    assert len(RECORDS) >= 60
    kinds = Counter(r["kind"] for _, r in RECORDS)
    assert len(kinds) >= 15, kinds
    for name, record in RECORDS:
        assert record["id"] == case_id(record), (name, record["id"])
        assert record["server"]["source"] == SERVER
        assert record["status"] in ("fixed", "tolerated", "open")
        assert ("tolerance" in record) == (record["status"] == "tolerated"), record["id"]
        assert record["found"]["disagreement"] in ("false-accept", "false-reject", "other-field")
    # One line per case, sorted by id, keys sorted: the files are what `label` writes.
    for file in sorted(REGRESSIONS.glob("*.jsonl")):
        lines = file.read_text(encoding="utf-8").splitlines()
        records = [json.loads(line) for line in lines]
        assert [r["id"] for r in records] == sorted({r["id"] for r in records}), file.name
        assert lines == [json.dumps(r, sort_keys=True) for r in records], file.name


@pytest.mark.parametrize(
    "record", [r for _, r in RECORDS], ids=[f"{n}:{r['id']}" for n, r in RECORDS]
)
def test_kubetrain_says_what_the_record_says(record: dict[str, Any]) -> None:
    what, known = judged(record)
    if record["status"] == "fixed":
        assert not what, f"{what} again: {record['variant']}: {record['server']['message'][:300]}"
    elif record["status"] == "tolerated":
        assert what and known == record["tolerance"], (what, known)
    else:
        assert what, "fixed: relabel the record (python tests/apiserver_oracle.py label)"


def test_every_tolerance_is_pinned_by_a_case() -> None:
    used = Counter(r.get("tolerance") for _, r in RECORDS if r["status"] == "tolerated")
    for name, (reason, _) in TOLERANCES.items():
        assert reason and used[name] >= 1, name
    assert set(used) <= set(TOLERANCES)


def test_the_records_hold_the_disagreements_found_not_agreements() -> None:
    # What kubetrain said when a case was found disagreed with the server (else it would not
    # have been kept): the server refused what kubetrain accepted, or the reverse, or both
    # refused at unrelated fields.
    for _, record in RECORDS:
        found, server = record["found"], record["server"]["verdict"]
        if found["disagreement"] == "false-accept":
            assert (server, found["kubetrain"]["verdict"]) == ("rejected", "accepted")
        elif found["disagreement"] == "false-reject":
            assert (server, found["kubetrain"]["verdict"]) == ("accepted", "rejected")
        else:
            assert server == found["kubetrain"]["verdict"] == "rejected"


@pytest.mark.parametrize(
    ("message", "sent", "path"),
    [
        (
            "failed to create typed patch object (ml-gen/gen-deploy; apps/v1, Kind=Deployment): "
            ".spec.template.spec.containers[name=].name: expected string, got "
            "&value.valueUnstructured{Value:map[string]interface {}{}}",
            {"spec": {"template": {"spec": {"containers": [{"name": {}, "image": "i"}]}}}},
            ("spec", "template", "spec", "containers", 0, "name"),
        ),
        (
            "failed to create typed patch object (kubeflow/p; kubeflow.org/v1, Kind=PaddleJob): "
            '.spec.x.containers[name="paddle"].ports[containerPort=,protocol="TCP"]'
            ".containerPort: expected numeric (int or float), got &value.valueUnstructured{}",
            {
                "spec": {
                    "x": {
                        "containers": [
                            {"name": "sidecar", "ports": [{"containerPort": 1}]},
                            {
                                "name": "paddle",
                                "ports": [{"containerPort": 2}, {"containerPort": {}}],
                            },
                        ]
                    }
                }
            },
            ("spec", "x", "containers", 1, "ports", 1, "containerPort"),
        ),
    ],
)
def test_a_typed_patch_path_names_the_item_whose_key_it_cannot_print(
    message: str, sent: dict[str, Any], path: tuple[Any, ...]
) -> None:
    """Server-side apply names a list item by its keys; one whose key holds a map is printed
    with the key empty (found by the e2e generator: two "other-field" disagreements that were
    the same field). The server's path is read as the item kubetrain names by index."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
    from harness.dryrun import paths_of

    assert paths_of({"message": message}, sent) == (path,)
