"""Custom resources of the API-server corpus (``../shared/apiserver-corpus``) through the code of
``kubetrain validate``: the oracle is what a real kube-apiserver v1.36 answered.

Every case of a custom-resource kind (family ``custom-resource`` and the CR kinds of the other
families: TFJob, TrainingJob, Learner, PodGroup, ExternalSecret, GitRepository, Kustomization,
Application) is validated on its own, twice: with kubetrain's built-in schemas (what a user gets
without options), and with ``--crd ../shared/crds`` (the real upstream CRDs the server ran; the
TrainingJob and Learner CRDs it ran were kubetrain's generated ones, which are built in). No case
the server refused may pass; every case it accepted must pass the API and schema checks
(kubetrain's policy rules, the ids in ``RULES``, may still flag it: they are listed). The
agreement table by family is printed (``pytest -s``).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from kubetrain.kube.names import DNS1123_LABEL
from kubetrain.validate import RULES, CheckSettings, Finding, Located, Validator, check_objects

from conftest import REPO

SHARED = REPO.parent / "shared"
CORPUS = SHARED / "apiserver-corpus" / "create.jsonl"
CRDS = SHARED / "crds"
CR_KINDS = {
    "TFJob",
    "TrainingJob",
    "Learner",
    "PodGroup",
    "ExternalSecret",
    "GitRepository",
    "Kustomization",
    "Application",
}
#: Kubernetes version of the server that labelled the corpus.
VERSION = (1, 36)

pytestmark = pytest.mark.skipif(
    not (CORPUS.is_file() and CRDS.is_dir()),
    reason="../shared/apiserver-corpus and ../shared/crds (the API-server oracle) are absent; "
    "they sit beside the repository in CI",
)


def _out_of_scope(case: dict[str, Any]) -> bool:
    """A well-formed namespace that does not exist in the cluster: no offline tool can know
    (the corpus README)."""
    namespace = str(case["object"].get("metadata", {}).get("namespace", ""))
    return (
        f'namespaces "{namespace}" not found' in case["message"]
        and DNS1123_LABEL.check(namespace) is None
    )


def _cases() -> list[dict[str, Any]]:
    if not CORPUS.is_file():
        return []
    out = []
    with CORPUS.open(encoding="utf-8") as f:
        for line in f:
            case = json.loads(line)
            if case["kind"] in CR_KINDS and not _out_of_scope(case):
                out.append(case)
    return out


CASES = _cases()


def _verdicts(crds: tuple[str, ...]) -> list[tuple[dict[str, Any], list[Finding]]]:
    """Each case and the findings ``kubetrain validate`` reports for it alone: what
    ``app.validate_paths`` does for one file outside a project (schemas and API checks, then the
    rules with the default settings), with one validator for all cases."""
    validator = Validator(VERSION, crds=crds)
    settings = CheckSettings.from_stack(None)
    out = []
    for case in CASES:
        items = [Located(case["object"], f"{case['id']}.json")]
        report = validator.validate(items)
        check_objects(items, report.results, settings)
        out.append((case, [f for r in report.results for f in r.findings]))
    return out


def _table(results: list[tuple[dict[str, Any], list[Finding]]], title: str) -> str:
    rows: dict[str, Counter[str]] = {}
    for case, findings in results:
        if case["verdict"] == "rejected":
            agree = bool(findings)
        else:  # policy rules may flag what the server accepts
            agree = all(f.rule in RULES for f in findings)
        rows.setdefault(case["family"], Counter())["agree" if agree else "disagree"] += 1
    lines = [f"{title}: agreement with kube-apiserver v1.36 by family (custom resources)"]
    total = Counter[str]()
    for family, counts in sorted(rows.items()):
        n = counts["agree"] + counts["disagree"]
        total.update(counts)
        lines.append(f"  {family:20} {counts['agree']:4}/{n:<4} {100 * counts['agree'] / n:5.1f}%")
    n = total["agree"] + total["disagree"]
    lines.append(f"  {'all':20} {total['agree']:4}/{n:<4} {100 * total['agree'] / n:5.1f}%")
    return "\n".join(lines)


@pytest.mark.parametrize("crds", [(), (str(CRDS),)], ids=["built-in", "upstream-crds"])
def test_custom_resources_agree_with_the_api_server(
    crds: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    assert len(CASES) > 700  # the corpus holds about 750 such cases
    results = _verdicts(crds)
    passed_but_refused = [
        (c["id"], c["kind"], c["variant"])
        for c, f in results
        if c["verdict"] == "rejected" and not f
    ]
    refused_but_accepted = [
        (c["id"], c["kind"], c["variant"], [(x.rule, x.path, x.message) for x in f])
        for c, f in results
        if c["verdict"] == "accepted" and any(x.rule not in RULES for x in f)
    ]
    policy = Counter(
        x.rule for c, f in results if c["verdict"] == "accepted" for x in f if x.rule in RULES
    )
    with capsys.disabled():
        print("\n" + _table(results, "built-in schemas" if not crds else "--crd ../shared/crds"))
        print(f"  policy findings on accepted cases, by rule id: {dict(sorted(policy.items()))}")
    assert passed_but_refused == []
    assert refused_but_accepted == []
