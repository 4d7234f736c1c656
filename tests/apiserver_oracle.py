"""kubetrain's verdict on an object, and how it compares with a real kube-apiserver's.

Shared by the offline regression cases (tests/test_apiserver_regressions.py, run by `make
test`) and the e2e generator that finds them (e2e/test_validation_oracle.py, `make e2e`), so
both judge a case the same way:

- kubetrain's verdict on a create is what ``kubetrain validate`` refuses for the same
  Kubernetes version: findings of the schema, the API server's checks and the CRD's rules
  (rules ``schema``, ``api``, ``structure``, ``crd``, ``schema-missing``). kubetrain's own
  policy rules (``reference``, ``pod-security``...) are not the server's and are not run;
  operators' webhooks are counted apart (the server that answers runs none).
- On an update of a live object: those of the object sent (its nulls left out: the apply
  removes those fields), and what kube/immutable.py says the server refuses of the edit
  (``update_refusals``, origin the API server).
- A case agrees when both accept, or both refuse and, where the server names fields, one of
  kubetrain's refusals names one of them, or a field inside or around it (``spec.trainer.env``
  for a duplicate ``spec.trainer.env[1]``): ``path_agreement`` says which.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path as FilePath
from typing import Any

from kubetrain.kube import schemas as k8s
from kubetrain.kube.immutable import API_SERVER, update_refusals
from kubetrain.models.errors import format_path
from kubetrain.validate import Located, Validator

PathPart = str | int
Path = tuple[PathPart, ...]
#: The Kubernetes version of the server the cases were labelled by.
VERSION = (1, 36)
SERVER = "kube-apiserver v1.36.2"
#: Findings that mean "the API server refuses this object".
REFUSING = frozenset({"schema", "api", "structure", "schema-missing", "crd"})


@dataclass(frozen=True)
class Verdict:
    verdict: str  # accepted | rejected
    paths: tuple[Path, ...] = ()
    findings: tuple[str, ...] = ()
    webhooks: tuple[str, ...] = field(default=(), compare=False)

    def record(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "paths": [list(p) for p in self.paths],
                "findings": list(self.findings)}  # fmt: skip


@cache
def _validator() -> Validator:
    return Validator(VERSION)


def create_verdict(obj: Any) -> Verdict:
    """What ``kubetrain validate`` says of creating ``obj`` (one object, checked alone: a CRD
    among the cases judges no other case)."""
    result = _validator().check(Located(obj, "case.json"))
    refused = [f for f in result.findings if f.rule in REFUSING]
    webhooks = tuple(f"{format_path(f.path)}: {f.message}" for f in result.findings
                     if f.rule == "webhook")  # fmt: skip
    if not refused:
        return Verdict("accepted", webhooks=webhooks)
    return Verdict(
        "rejected",
        tuple(dict.fromkeys(tuple(f.path) for f in refused)),
        tuple(f"{format_path(f.path)}: {f.message}" for f in refused),
        webhooks,
    )


def _dotted(text: str) -> Path:
    parts: list[PathPart] = []
    for m in re.finditer(r"\.?([^.\[\]]+)|\[(\d+)\]", text):
        parts.append(m[1] if m[1] is not None else int(m[2]))
    return tuple(parts)


def without_nulls(value: Any) -> Any:
    """``value`` without the fields set to null, outside lists: applied over a live object,
    server-side apply takes a null as "remove this field of mine" (a Learner's
    ``spec.resources: null`` is accepted as an update, refused as a create by its CRD's
    schema); a list is applied as written (a Kustomization's atomic ``spec.patches`` with a
    null ``annotationSelector`` inside is refused as an update too)."""
    if isinstance(value, Mapping):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    return value


def update_verdict(before: Mapping[str, Any], after: Mapping[str, Any]) -> Verdict:
    """What kubetrain says of applying ``after`` over a live ``before``: the object the apply
    leaves (``after`` without its nulls) judged as a create, and the edit by kube/immutable.py."""
    after = without_nulls(after)
    created = create_verdict(after)
    refusals = [r for r in update_refusals(before, after) if r.origin == API_SERVER]
    if not refusals:
        return created
    return Verdict(
        "rejected",
        tuple(dict.fromkeys((*created.paths, *(_dotted(r.path) for r in refusals)))),
        (*created.findings, *(str(r) for r in refusals)),
    )


def related(a: Path, b: Path) -> bool:
    n = min(len(a), len(b))
    return n > 0 and a[:n] == b[:n]


def path_agreement(server: Sequence[Path], ours: Sequence[Path]) -> str:
    """``exact`` (a field both name), ``related`` (one names a field inside the other's),
    ``none``, or ``-`` when the server names no field."""
    if not server:
        return "-"
    if set(map(tuple, server)) & set(map(tuple, ours)):
        return "exact"
    if any(related(tuple(s), tuple(o)) for s in server for o in ours):
        return "related"
    return "none"


def disagreement(server_verdict: str, server_paths: Sequence[Path], ours: Verdict) -> str:
    """``""`` when kubetrain agrees with the server; else ``false-accept`` (the server refused,
    kubetrain accepts), ``false-reject`` or ``other-field`` (both refuse, at unrelated
    fields)."""
    if server_verdict != ours.verdict:
        return "false-accept" if server_verdict == "rejected" else "false-reject"
    if server_verdict == "rejected" and path_agreement(server_paths, ours.paths) == "none":
        return "other-field"
    return ""


# --- tolerated disagreements -------------------------------------------------------------------


def _at(obj: Any, path: Path) -> Any:
    for part in path:
        if (isinstance(part, int) and isinstance(obj, list) and 0 <= part < len(obj)) or (
            isinstance(part, str) and isinstance(obj, Mapping) and part in obj
        ):
            obj = obj[part]
        else:
            return None
    return obj


def _beyond(low_bits: int, high_bits: int) -> Any:
    """A tolerance test: a false reject of a built-in kind at fields whose every value is an
    integer beyond a signed ``low_bits`` integer but within a signed ``high_bits`` one."""

    def covers(record: Mapping[str, Any]) -> bool:
        if record["disagreement"] != "false-reject":
            return False
        obj = record.get("object", record.get("after"))
        if (
            not isinstance(obj, Mapping)
            or k8s.builtin_definition(
                VERSION, str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
            )
            is None
        ):
            return False  # a custom resource: its CRD's integer formats are checked, none wraps
        paths = [tuple(p) for p in record["kubetrain"]["paths"]]
        values = [_at(obj, p) for p in paths]
        return bool(paths) and all(
            isinstance(v, int)
            and not isinstance(v, bool)
            and not -(2 ** (low_bits - 1)) <= v < 2 ** (low_bits - 1)
            and -(2 ** (high_bits - 1)) <= v < 2 ** (high_bits - 1)
            for v in values
        )

    return covers


_CLAIM_VOLUME = re.compile(r"^(spec\.template\.spec\.volumes)\[\d+\]")


def claim_volume_free(path: str) -> str:
    """A StatefulSet's field path with the index of a pod template volume left out."""
    return _CLAIM_VOLUME.sub(r"\1[*]", path)


def _text(path: Sequence[PathPart]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def _claim_volume_order(record: Mapping[str, Any]) -> bool:
    """Both refuse a StatefulSet with two or more claim templates at the same template volume
    but for its index."""
    obj = record.get("object", record.get("after"))
    if record["disagreement"] != "other-field" or not isinstance(obj, Mapping):
        return False
    claims = _at(obj, ("spec", "volumeClaimTemplates"))
    if obj.get("kind") != "StatefulSet" or not isinstance(claims, list) or len(claims) < 2:
        return False
    server = {claim_volume_free(_text(p)) for p in record["server"]["paths"]}
    ours = {claim_volume_free(_text(p)) for p in record["kubetrain"]["paths"]}
    return bool(server & ours)


#: Disagreements kubetrain keeps, each with its reason (docs/validation.md says the same), and
#: the test of a regression record it covers. Every record in tests/apiserver-regressions/ of
#: status ``tolerated`` names one, and the e2e generator passes a disagreement only if one
#: covers it.
TOLERANCES: dict[str, tuple[str, Any]] = {
    "int32-wrapped": (
        "Server-side apply converts a built-in object's int32 field from int64 by truncation: "
        "2^32+2 replicas is stored as 2, 2^31 as -2^31 (accepted if that is valid). kubetrain "
        "refuses the value, as a create by POST (kubectl create, Argo CD's client-side apply) "
        "does ('cannot unmarshal number ... of type int32'): what the cluster would store is "
        "not what was written.",
        _beyond(32, 64),
    ),
    "claim-volume-order": (
        "A StatefulSet's claim templates are validated as template volumes "
        "(ValidateStatefulSetSpec, v1.36.2) in an order kubetrain does not reproduce in every "
        "case: the server that labelled ../shared/apiserver-corpus-r4 named the second claim "
        "template of [data, R4_Data] at volumes[0], the v1.36.2 server of the e2e tier names "
        "it at volumes[1], kubetrain's index (its place in volumeClaimTemplates). The field "
        "is the same.",
        _claim_volume_order,
    ),
    "int64-overflow": (
        "A built-in object's int64 field given an integer beyond int64 (2^63): the server's "
        "JSON decoding reads it as a float and converts it to int64, so it stores another "
        "number than the one written (metadata.deletionGracePeriodSeconds = 2^63 is accepted "
        "on create). kubetrain refuses a value that cannot be stored as written.",
        _beyond(64, 1024),
    ),
}


def tolerance(record: Mapping[str, Any]) -> str:
    """The name of the tolerance covering a disagreement record, or ``""``."""
    return next((name for name, (_, covers) in TOLERANCES.items() if covers(record)), "")


# --- regression records ------------------------------------------------------------------------

#: Where the disagreements found are kept (run offline by tests/test_apiserver_regressions.py).
REGRESSIONS = FilePath(__file__).resolve().parent / "apiserver-regressions"
_CASE_KEYS = ("operation", "object", "before", "after")


def case_id(record: Mapping[str, Any]) -> str:
    """A record's id: a digest of what was sent (the operation and the object or objects)."""
    case = {k: record[k] for k in _CASE_KEYS if k in record}
    text = json.dumps(case, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def verdict_now(record: Mapping[str, Any]) -> Verdict:
    """kubetrain's verdict today on a record's case."""
    if record["operation"] == "update":
        return update_verdict(record["before"], record["after"])
    return create_verdict(record["object"])


def judged(record: Mapping[str, Any]) -> tuple[str, str]:
    """(disagreement today, the tolerance covering it) of a record: ``("", "")`` when kubetrain
    agrees with the server's answer kept in it."""
    ours = verdict_now(record)
    server = record["server"]
    what = disagreement(server["verdict"], [tuple(p) for p in server["paths"]], ours)
    if not what:
        return "", ""
    return what, tolerance({**record, "kubetrain": ours.record(), "disagreement": what})


def label(raw: Mapping[str, Any], server_paths: Sequence[Path]) -> dict[str, Any]:
    """A regression record from one the e2e generator wrote (``raw``): the case, the server's
    answer (its field paths ``server_paths``, as the harness reads them), what kubetrain said
    when it was found, and its status today: ``fixed`` (kubetrain agrees now), ``tolerated``
    (a tolerance covers it, named) or ``open``."""
    record: dict[str, Any] = {k: raw[k] for k in _CASE_KEYS if k in raw}
    record.update(
        id=case_id(raw),
        kind=raw["kind"],
        variant=raw["variant"],
        base=raw["base"],
        server={
            "source": raw["server"].get("source", SERVER),
            "verdict": raw["server"]["verdict"],
            "status": raw["server"]["status"],
            "reason": raw["server"].get("reason", ""),
            "message": raw["server"]["message"],
            "paths": [list(p) for p in server_paths],
        },
        found={"kubetrain": raw["kubetrain"], "disagreement": raw["disagreement"]},
    )
    what, known = judged(record)
    record["status"] = "fixed" if not what else "tolerated" if known else "open"
    if known:
        record["tolerance"] = known
    return record


def merge(raw_files: Sequence[str], into: str = "generator.jsonl") -> int:
    """Label the e2e generator's records in ``raw_files`` (KUBETRAIN_E2E_RECORD) into
    ``tests/apiserver-regressions/<into>``, once per case, sorted by id; how many are new."""
    sys.path.insert(0, str(FilePath(__file__).resolve().parent.parent / "e2e"))
    from harness.dryrun import paths_of

    target = REGRESSIONS / into
    kept = {}
    if target.exists():
        for line in target.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            kept[record["id"]] = record
    before = len(kept)
    for name in raw_files:
        for line in FilePath(name).read_text(encoding="utf-8").splitlines():
            raw = json.loads(line)
            if case_id(raw) in kept:
                continue
            sent = raw.get("object", raw.get("after"))
            body = {"message": raw["server"]["message"],
                    "details": {"causes": raw["server"].get("causes") or []}}  # fmt: skip
            kept[case_id(raw)] = label(raw, paths_of(body, sent))
    REGRESSIONS.mkdir(exist_ok=True)
    target.write_text(
        "".join(json.dumps(kept[k], sort_keys=True) + "\n" for k in sorted(kept)),
        encoding="utf-8",
    )
    return len(kept) - before


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "label":
        print("usage: python tests/apiserver_oracle.py label RECORDS.jsonl...", file=sys.stderr)
        raise SystemExit(2)
    print(f"{merge(sys.argv[2:])} new regression records in {REGRESSIONS}")
