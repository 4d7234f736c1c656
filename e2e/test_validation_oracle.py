"""Validation as a differential test: kubetrain validate against a real kube-apiserver v1.36.2.

Objects kubetrain renders (e2e/harness/generator.py: every example stack in each mode, the
committed rendered/ tree, a seed of each other kind it validates), and hypothesis' mutations of
them, are sent to the server with server-side apply and dry run (field manager kubetrain,
strict field validation: e2e/harness/dryrun.py), as creates and as updates of live objects, on
a control plane of its own with the CRDs of ../shared/crds and kubetrain's, and no admission
webhook. Each verdict and field path is compared with kubetrain's for Kubernetes 1.36
(tests/apiserver_oracle.py, which the offline regression cases use too).

A disagreement fails the test unless a tolerance of tests/apiserver_oracle.py (each with its
reason, pinned by regression cases in tests/apiserver-regressions/) covers it. Every
disagreement found is written as a regression record (the object, the server's answer and
kubetrain's) to the session's folder, and with KUBETRAIN_E2E_RECORD=FILE appended to FILE, for
labelling into tests/apiserver-regressions/ (``python tests/apiserver_oracle.py label FILE``).
A crash of kubetrain on a generated object is a disagreement too (the run goes on and fails at
the end, naming it). Deterministic: a fixed number of examples,
derandomized; the counts per kind are printed.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from conftest import start_cluster
from harness import generator, tools
from harness.crds import documents, install
from harness.dryrun import Answer, DryRun

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from apiserver_oracle import (
    SERVER,
    Verdict,
    create_verdict,
    disagreement,
    path_agreement,
    tolerance,
    update_verdict,
)

#: Mutated objects sent as creates, and as updates of live objects.
CREATES = int(os.environ.get("KUBETRAIN_E2E_CREATES", "1200"))
UPDATES = int(os.environ.get("KUBETRAIN_E2E_UPDATES", "150"))


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )


class Tally:
    def __init__(self) -> None:
        self.sent: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()
        self.agree: Counter[str] = Counter()
        self.exact: Counter[str] = Counter()
        self.refused: Counter[str] = Counter()
        self.found: list[dict[str, Any]] = []
        self.tolerated: Counter[str] = Counter()
        self.crashes: list[str] = []

    def judge(self, operation: str, kind: str, case: dict[str, Any], answer: Answer,
              ours: Verdict, variant: str, origin: str) -> None:  # fmt: skip
        self.sent[kind] += 1
        self.refused[kind] += answer.verdict == "rejected"
        what = disagreement(answer.verdict, answer.paths, ours)
        if not what:
            self.agree[kind] += 1
            self.exact[kind] += path_agreement(answer.paths, ours.paths) in ("exact", "-")
            return
        record = {
            "operation": operation,
            "kind": kind,
            "variant": variant,
            "base": origin,
            **case,
            "server": {"source": SERVER, **answer.record()},
            "kubetrain": ours.record(),
            "disagreement": what,
        }
        known = tolerance(record)
        if known:
            self.tolerated[known] += 1
            self.agree[kind] += 1
            record["status"] = "tolerated"
            record["tolerance"] = known
        self.found.append(record)

    def table(self, title: str) -> str:
        header = f"{'kind':45} {'sent':>5} {'refused':>8} {'agree':>6} {'same field':>10}"
        lines = [f"{title}: kubetrain validate against {SERVER}", header]
        for kind in sorted(self.sent):
            lines.append(f"{kind:45} {self.sent[kind]:5} {self.refused[kind]:8} "
                         f"{self.agree[kind]:6} {self.exact[kind]:10}")  # fmt: skip
        total = sum(self.sent.values())
        lines.append(f"{'all':45} {total:5} {sum(self.refused.values()):8} "
                     f"{sum(self.agree.values()):6} {sum(self.exact.values()):10}")  # fmt: skip
        lines.append(f"not sent (no URL can name them): {sum(self.skipped.values())}; "
                     f"tolerated: {dict(sorted(self.tolerated.items()))}")  # fmt: skip
        return "\n".join(lines)


def _verdict(tally: Tally, case: generator.Case, judge: Any) -> Verdict | None:
    """kubetrain's verdict, or ``None`` after counting a crash of kubetrain's as a
    disagreement (then the run goes on: one crash does not hide the rest)."""
    try:
        verdict: Verdict = judge()
    except Exception as exc:  # a traceback in kubetrain is the finding
        tally.crashes.append(f"{case.kind} {case.variant}: {type(exc).__name__}: {exc}")
        return None
    return verdict


@pytest.fixture(scope="module")
def oracle(e2e_tmp: Path) -> Iterator[DryRun]:
    """A control plane of its own: the CRDs of ../shared/crds and kubetrain's, no operator and
    no admission webhook (the verdicts are the API server's own)."""
    cluster = start_cluster("oracle", e2e_tmp)
    try:
        # Volcano's Job CRD, which ../shared/crds lacks: the release make e2e runs (v1.14.1).
        install(cluster, documents(tools.path("volcano") / "crds" / "batch.volcano.sh_jobs.yaml"))
        dry = DryRun(cluster)
        assert dry.webhooks() == []
        yield dry
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def bases(e2e_tmp: Path) -> list[generator.Base]:
    return generator.bases(e2e_tmp / "bases")


def _write(found: list[dict[str, Any]], folder: Path, name: str) -> Path:
    out = folder / name
    with out.open("w", encoding="utf-8") as f:
        for record in found:
            f.write(json.dumps(record, sort_keys=True) + "\n")
    target = os.environ.get("KUBETRAIN_E2E_RECORD")
    if target and found:
        with open(target, "a", encoding="utf-8") as f:
            for record in found:
                f.write(json.dumps(record, sort_keys=True) + "\n")
    return out


def _report(tally: Tally, title: str, folder: Path, name: str, least: int = 0) -> None:
    """Write the records, print the table, then fail on too few objects sent (hypothesis
    drops repeated examples: fewer than asked may be sent, never fewer than ``least``) or on
    a disagreement no tolerance covers."""
    out = _write(tally.found, folder, name)
    print("\n" + tally.table(title) + f"\nrecords of every disagreement: {out}")
    if os.environ.get("KUBETRAIN_E2E_REPORT"):  # the tables of a closing note
        report = Path(os.environ["KUBETRAIN_E2E_REPORT"])
        report.mkdir(parents=True, exist_ok=True)
        (report / f"validation-{title}.txt").write_text(tally.table(title) + "\n")
    assert not tally.crashes, "kubetrain crashed:\n" + "\n".join(tally.crashes[:20])
    assert sum(tally.sent.values()) >= least, (sum(tally.sent.values()), least)
    open_ = [r for r in tally.found if r.get("status") != "tolerated"]
    shown = "\n".join(
        f"{r['disagreement']}: {r['kind']} {r['variant']} -- server: "
        f"{r['server']['message'][:200]} -- kubetrain: "
        f"{'; '.join(r['kubetrain']['findings'])[:200]}"
        for r in open_[:40]
    )
    assert not open_, f"{len(open_)} disagreements with the API server:\n{shown}"


def test_every_base_object_is_accepted_by_both(oracle: DryRun, bases, e2e_tmp: Path) -> None:
    tally = Tally()
    for base in bases:
        answer = oracle.create(base.obj)
        if answer is None:
            tally.skipped[base.kind] += 1
            continue
        tally.judge("create", base.kind, {"object": base.obj}, answer, create_verdict(base.obj),
                    "unchanged", base.origin)  # fmt: skip
    assert len(tally.sent) >= 40  # kinds
    assert sum(tally.refused.values()) == 0, [r["server"]["message"] for r in tally.found]
    _report(tally, "bases", e2e_tmp, "validation-bases.jsonl")


def test_mutated_creates_get_the_servers_verdict(oracle: DryRun, bases, e2e_tmp: Path) -> None:
    kinds = generator.by_kind(bases)
    schemas = generator.Schemas()
    tally = Tally()

    @_settings(CREATES)
    @given(generator.mutation(kinds, schemas))
    def run(case: generator.Case) -> None:
        answer = oracle.create(case.obj)
        if answer is None:
            tally.skipped[case.kind] += 1
            return
        ours = _verdict(tally, case, lambda: create_verdict(case.obj))
        if ours is not None:
            tally.judge("create", case.kind, {"object": case.obj}, answer, ours, case.variant,
                        case.origin)  # fmt: skip

    run()
    _report(tally, "creates", e2e_tmp, "validation-creates.jsonl", CREATES // 2)
    assert len(tally.sent) == len(kinds), sorted(set(kinds) - set(tally.sent))
    assert sum(tally.refused.values()) >= CREATES // 5  # the mutations reach the checks


def test_updates_of_live_objects_get_the_servers_verdict(
    oracle: DryRun, bases, e2e_tmp: Path
) -> None:
    kinds = generator.by_kind(bases)
    schemas = generator.Schemas()
    tally = Tally()

    @_settings(UPDATES)
    @given(generator.mutation(kinds, schemas))
    def run(case: generator.Case) -> None:
        answer = oracle.update(case.base, case.obj)
        if answer is None:
            tally.skipped[case.kind] += 1
            return
        ours = _verdict(tally, case, lambda: update_verdict(case.base, case.obj))
        if ours is not None:
            tally.judge("update", case.kind, {"before": case.base, "after": case.obj}, answer,
                        ours, case.variant, case.origin)  # fmt: skip

    run()
    _report(tally, "updates", e2e_tmp, "validation-updates.jsonl", UPDATES // 2)
