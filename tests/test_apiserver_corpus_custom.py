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
import yaml

from kubetrain.kube.apiextensions import CRDVersion, Node, crd_versions
from kubetrain.kube.names import DNS1123_LABEL
from kubetrain.models.base import resource_kinds
from kubetrain.validate import RULES, CheckSettings, Finding, Located, Validator, check_objects
from kubetrain.validate.customresources import model_version

from conftest import REPO

SHARED = REPO.parent / "shared"
CORPORA = (
    SHARED / "apiserver-corpus" / "create.jsonl",
    SHARED / "apiserver-corpus-r3" / "create.jsonl",
)
CORPUS = CORPORA[0]
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
    "JobSet",
    "PyTorchJob",
}
#: Kubernetes version of the server that labelled the corpus.
VERSION = (1, 36)

pytestmark = pytest.mark.skipif(
    not (all(c.is_file() for c in CORPORA) and CRDS.is_dir()),
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
    out = []
    for corpus in CORPORA:
        if not corpus.is_file():
            return []
        with corpus.open(encoding="utf-8") as f:
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
            agree = any(f.rule != "webhook" for f in findings)
        else:  # policy rules may flag what the server accepts; webhooks it did not run
            agree = all(f.rule in RULES or f.rule == "webhook" for f in findings)
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
    assert len(CASES) > 1200  # the corpora hold about 1,220 such cases
    results = _verdicts(crds)
    # A webhook's refusal is not the API server's: the server that labelled the corpora ran
    # none, so it neither agrees nor disagrees, and is counted apart.
    passed_but_refused = [
        (c["id"], c["kind"], c["variant"])
        for c, f in results
        if c["verdict"] == "rejected" and not any(x.rule != "webhook" for x in f)
    ]
    refused_but_accepted = [
        (c["id"], c["kind"], c["variant"], [(x.rule, x.path, x.message) for x in f])
        for c, f in results
        if c["verdict"] == "accepted" and any(x.rule not in {*RULES, "webhook"} for x in f)
    ]
    policy = Counter(
        x.rule for c, f in results if c["verdict"] == "accepted" for x in f if x.rule in RULES
    )
    webhooks = Counter(
        x.who for c, f in results if c["verdict"] == "accepted" for x in f if x.rule == "webhook"
    )
    with capsys.disabled():
        print("\n" + _table(results, "built-in schemas" if not crds else "--crd ../shared/crds"))
        print(f"  policy findings on accepted cases, by rule id: {dict(sorted(policy.items()))}")
        print(f"  webhook refusals of accepted cases: {dict(sorted(webhooks.items()))}")
    assert webhooks, "the corpora hold cases only an operator's webhook refuses"
    assert passed_but_refused == []
    assert refused_but_accepted == []


# --- kubetrain's models of third-party kinds against the real CRDs ----------------------------

#: Constraints compared node by node where a model and the real CRD both describe a field.
_COMPARED = ("enum", "minimum", "maximum", "exclusive_minimum", "exclusive_maximum")
_COMPARED += ("min_length", "max_length", "min_items", "max_items", "type", "int_or_string")
_QUANTITY_SAMPLES = ("1", "-1", "500m", "1.5Gi", "2Ki", "1e3", "1GB", "1gi", "one", "", "1.5.3")


def _real_crds() -> dict[tuple[str, str], CRDVersion]:
    out = {}
    for file in sorted(CRDS.rglob("*.yaml")):
        for doc in yaml.load_all(file.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader):
            if doc:
                out.update({(v.api_version, v.kind): v for v in crd_versions(doc, str(file))})
    return out


def _differences(mine: Node, real: Node, path: tuple[str, ...]) -> list[str]:
    out = [
        f"{'.'.join(path)}: {key} {getattr(mine, key)!r}, the CRD {getattr(real, key)!r}"
        for key in _COMPARED
        if getattr(mine, key) != getattr(real, key)
    ]
    if sorted(mine.required) != sorted(r for r in real.required if r in mine.properties):
        out.append(f"{'.'.join(path)}: required {mine.required}, the CRD {real.required}")
    if (mine.pattern is None) != (real.pattern is None) or (
        mine.pattern is not None
        and real.pattern is not None
        and [bool(mine.pattern.search(s)) for s in _QUANTITY_SAMPLES]
        != [bool(real.pattern.search(s)) for s in _QUANTITY_SAMPLES]
    ):
        out.append(
            f"{'.'.join(path)}: pattern {mine.pattern_text!r}, the CRD {real.pattern_text!r}"
        )
    for name, child in mine.properties.items():
        other = real.properties.get(name) or real.additional
        if other is None:
            if not real.preserve_unknown:
                out.append(f"{'.'.join((*path, name))}: not in the CRD")
        elif not (path == () and name == "metadata"):
            out += _differences(child, other, (*path, name))
    if mine.additional is not None and real.additional is not None:
        out += _differences(mine.additional, real.additional, (*path, "*"))
    if mine.items is not None and real.items is not None:
        out += _differences(mine.items, real.items, (*path, "[]"))
    return out


def test_models_of_third_party_kinds_follow_their_real_crds() -> None:
    """Where a model describes a field, it requires, types and bounds it as the real CRD does:
    no stricter (the server would accept what kubetrain refuses) and no looser. Pod templates
    are Kubernetes' own types on both sides; the root's apiVersion, kind and metadata are the
    API server's."""
    real = _real_crds()
    compared = set()
    problems = []
    for (api_version, kind), model in sorted(resource_kinds().items()):
        if (api_version, kind) not in real:
            continue
        compared.add(kind)
        ours = model_version(api_version, kind, VERSION)
        assert ours is not None, model
        mine, theirs = ours.node, real[(api_version, kind)].node
        found = []
        # The body: spec, or the fields a kind has at its top (a WorkloadPriorityClass's value).
        body = sorted(set(mine.properties) - {"apiVersion", "kind", "metadata", "status"})
        assert body, kind
        for top in body:
            if top not in theirs.properties:
                found.append(f"{top}: not in the CRD")
                continue
            found += _differences(mine.properties[top], theirs.properties[top], (top,))
            if (top in mine.required) != (top in theirs.required):
                found.append(f"{top} required: {top in mine.required}")
        problems += [f"{kind} ({api_version}) {p}" for p in found]
    # Every kind kubetrain emits whose CRD is in ../shared/crds is compared (the loop ran).
    assert compared >= {
        "PodGroup",
        "ExternalSecret",
        "Application",
        "AppProject",
        "TFJob",
        "JobSet",
    }
    assert {k for (_, k) in real} & {k for (_, k) in resource_kinds()} == compared
    # The JobSet model is v0.12.0's (Kubeflow Trainer v2.3.0's pin), ../shared/crds holds
    # v0.9.1's CRD: what v0.12.0 added is the only difference, each one found (the e2e tier
    # compares the model with the v0.12.0 CRD itself).
    newer = [p for p in problems if p.startswith(JOBSET_V0_12)]
    assert sorted(p.split(":")[0] for p in newer) == sorted(JOBSET_V0_12), newer
    problems = [p for p in problems if p not in newer]
    assert problems == [], "\n".join(problems)


JOBSET_V0_12 = tuple(
    f"JobSet (jobset.x-k8s.io/v1alpha2) spec.{path}"
    for path in (
        "failurePolicy.restartStrategy",
        "failurePolicy.rules.[].action",
        "failurePolicy.rules.[].onJobFailureMessagePatterns",
        "volumeClaimPolicies",
    )
)
