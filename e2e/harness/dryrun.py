"""The API server's verdict on an object: server-side apply with dry run, as Flux, Argo CD's
server-side sync, Pulumi and `kubectl apply --server-side --dry-run=server --validate=strict`
send it (field manager kubetrain, strict field validation).

`DryRun.create(obj)` sends an object that does not exist (the server judges a create);
`DryRun.update(before, after)` applies `before` for real, then sends `after` as a dry-run
apply of the same field manager (the server judges an in-place update of a live object:
`after` merged into what it stored), and deletes `before` again. Each gives an `Answer`: the
verdict, the HTTP status, the server's message and the field paths it names, as tuples
(`("spec", "containers", 0, "name")`), list-map key selectors of server-side apply
(`targets[jobName="node"]`) resolved to the item's index in the object sent.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .cluster import ControlPlane, wait_for

PathPart = str | int
FIELD_MANAGER = "kubetrain"
QUERY = "fieldManager=kubetrain&fieldValidation=Strict"


@dataclass(frozen=True)
class Answer:
    """What the server answered to one request."""

    verdict: str  # "accepted" | "rejected"
    status: int
    message: str
    paths: tuple[tuple[PathPart, ...], ...] = ()
    reason: str = ""

    causes: tuple[dict[str, Any], ...] = ()

    def record(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "status": self.status,
            "reason": self.reason,
            "message": self.message,
            "causes": list(self.causes),
            "paths": [list(p) for p in self.paths],
        }


# "<nil>: Invalid value: \"\": Checked value must be of type integer with format int32 in
# spec.slotsPerWorker": a CRD's format check names its field at the end of the message.
_CHECKED_IN = re.compile(r"Checked value must be of type \w+ with format \w+ in ([^\s,\]]+)")
# ".spec.trainer.env: duplicate entries for key [name=\"A\"]" (a typed patch object), or
# ".spec.foo: field not declared in schema" (strict field validation), at a line's start.
_DOTTED = re.compile(r"(?:^|: |\n)(\.[A-Za-z_$][^\s:]*(?:\[[^\]]*\][^\s:]*)*):")
# 'unknown field "spec.foo"' (strict decoding of a built-in kind).
_UNKNOWN = re.compile(r'unknown field "([^"]+)"')
_DUPLICATE = re.compile(r'duplicate field "([^"]+)"')
# '... is invalid: [spec.a: Invalid value: ..., spec.b: Required value]' (validation's field
# errors, one per line or in brackets): a path before a field error's type.
_FIELD_ERROR = re.compile(
    r"(?:^|[\s\[,*])([A-Za-z$][^\s:]*): (?:Invalid value|Required value|Unsupported value|"
    r"Forbidden|Duplicate value|Too long|Too many|Not found)"
)


_NAME = re.compile(r"[^.\[]+")


def _closing(text: str, pos: int) -> int:
    """The index of the ``]`` closing the ``[`` at ``pos`` (quotes and nested brackets skipped:
    ``ports[containerPort=[],protocol="TCP"]``), or the text's end."""
    depth, quoted, i = 0, False, pos
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(text)


def parse_path(text: str, obj: Any = None) -> tuple[PathPart, ...] | None:
    """A server's field path in kubetrain's parts, read along ``obj`` (the object sent):
    ``spec.hard[requests.cpu]`` -> ``("spec", "hard", "requests.cpu")``; ``items[3]`` -> index
    3; a map key written with its dots (server-side apply's ``.metadata.labels.app.kubernetes.
    io/name``, a CRD's ``limits.nvidia.com/gpu``) -> the key of the object's map it spells; a
    server-side apply key selector (``targets[jobName="node"]``, ``containerNames[="a"]``) ->
    the index of the item in ``obj`` it selects. ``None`` for no path (``<nil>``, ``""``)."""
    text = text.strip()
    if not text or text in ("<nil>", "[]"):
        return None
    parts: list[PathPart] = []
    here = obj
    pos = 0
    while pos < len(text):
        if text[pos] == ".":
            pos += 1
            continue
        part: PathPart
        if text[pos] == "[":
            end = _closing(text, pos)
            inner, pos = text[pos + 1 : end], end + 1
            if inner.isdigit():
                part = int(inner)
            elif "=" in inner and isinstance(here, list):
                part = _key_index(here, inner)
            else:
                part = inner
        else:
            found = _key_at(here, text, pos)
            if found is not None:
                part, pos = found, pos + len(found)
            else:
                m = _NAME.match(text, pos)
                if m is None:
                    break
                part, pos = m[0], m.end()
        parts.append(part)
        here = _step(here, part)
    return tuple(parts) or None


def _key_at(here: Any, text: str, pos: int) -> str | None:
    """The longest key of the mapping ``here`` that ``text`` spells at ``pos``, followed by
    the end, a dot or a bracket."""
    if not isinstance(here, Mapping):
        return None
    for key in sorted((k for k in here if isinstance(k, str)), key=len, reverse=True):
        after = text[pos + len(key) : pos + len(key) + 1]
        if text.startswith(key, pos) and after in ("", ".", "["):
            return key
    return None


def _step(value: Any, part: PathPart) -> Any:
    if isinstance(part, int) and isinstance(value, list) and 0 <= part < len(value):
        return value[part]
    if isinstance(part, str) and isinstance(value, Mapping):
        return value.get(part)
    return None


def _key_index(items: list[Any], selector: str) -> PathPart:
    """``name="A"`` or ``jobName="node",name="x"`` or ``="a"`` (a set's value): the index of
    the first item that matches (a duplicate is reported at its second occurrence by
    kubetrain, the server names the key: either is the same list item's key). A key the item
    leaves out matches its default (``protocol="TCP"``, ``name=""``), if no item has all; so
    does an empty key (``containers[name=]``, ``ports[containerPort=,...]``) whose item holds
    a map or a list there, which the server cannot print as a key (the typed patch's "expected
    string, got map": found by the e2e generator)."""
    wanted: dict[str, Any] = {}
    for key, raw in re.findall(r'(\w*)=("(?:[^"\\]|\\.)*"|\[[^\]]*\]|[^,]*)', selector):
        try:
            wanted[key] = json.loads(raw)
        except ValueError:
            wanted[key] = raw

    def unprintable(item: Mapping[str, Any], key: str, value: Any) -> bool:
        return value == "" and isinstance(item.get(key), Mapping | list)

    for loose in (False, True):
        for i, item in enumerate(items):
            if "" in wanted and item == wanted[""]:
                return i
            if isinstance(item, Mapping) and all(
                item.get(k) == v or (loose and (k not in item or unprintable(item, k, v)))
                for k, v in wanted.items()
                if k
            ):
                return i
    return selector


def paths_of(body: Any, obj: Any) -> tuple[tuple[PathPart, ...], ...]:
    """Every field path a server's Status names."""
    found: list[tuple[PathPart, ...]] = []

    def add(text: str | None) -> None:
        path = parse_path(text or "", obj)
        if path and path not in found:
            found.append(path)

    if not isinstance(body, Mapping):
        return ()
    message = str(body.get("message", ""))
    for cause in (body.get("details") or {}).get("causes") or []:
        add(cause.get("field"))
        for m in _CHECKED_IN.finditer(str(cause.get("message", ""))):
            add(m[1])
    for m in _CHECKED_IN.finditer(message):
        add(m[1])
    for m in _DOTTED.finditer(message):
        add(m[1].lstrip("."))
    for pattern in (_UNKNOWN, _DUPLICATE):
        for m in pattern.finditer(message):
            add(m[1])
    if " is invalid: " in message:
        for m in _FIELD_ERROR.finditer(message.split(" is invalid: ", 1)[1]):
            add(m[1])
    return tuple(found)


def answer(status: int, body: Any, obj: Any) -> Answer:
    if 200 <= status < 300:
        return Answer("accepted", status, "")
    message = body.get("message", "") if isinstance(body, Mapping) else str(body)
    reason = body.get("reason", "") if isinstance(body, Mapping) else ""
    details = body.get("details") if isinstance(body, Mapping) else None
    causes = tuple((details or {}).get("causes") or ()) if isinstance(details, Mapping) else ()
    return Answer("rejected", status, str(message), paths_of(body, obj), str(reason), causes)


@dataclass
class DryRun:
    """Dry-run applies against one control plane (with the CRDs to judge installed)."""

    cluster: ControlPlane
    namespaces: set[str] = field(default_factory=set)
    #: apiVersion -> kind -> (plural, namespaced), from discovery.
    _resources: dict[str, dict[str, tuple[str, bool]]] = field(default_factory=dict)

    def resource(self, api_version: str, kind: str) -> tuple[str, str, bool] | None:
        """(URL prefix, plural, namespaced) of a kind at an apiVersion the server serves."""
        prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        if api_version not in self._resources:
            body = (
                self.cluster.get(prefix)
                if re.fullmatch(r"[\w.-]+(/[\w.-]+)?", api_version)
                else None
            )
            self._resources[api_version] = {
                r["kind"]: (r["name"], r["namespaced"])
                for r in (body or {}).get("resources", [])
                if "/" not in r["name"]
            }
        found = self._resources[api_version].get(kind)
        return (prefix, *found) if found else None

    def url(self, obj: Mapping[str, Any]) -> str | None:
        """The object's URL, or None when its kind is not served or it cannot have one (no
        name, a name or namespace no URL can carry)."""
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
        name = meta.get("name")
        if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
            return None
        res = self.resource(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        if res is None:
            return None
        prefix, plural, namespaced = res
        quoted = urllib.parse.quote(name, safe="")
        if namespaced:
            namespace = meta.get("namespace") or "default"
            if not isinstance(namespace, str) or not re.fullmatch(r"[a-z0-9-]{1,63}", namespace):
                return None
            return f"{prefix}/namespaces/{namespace}/{plural}/{quoted}"
        return f"{prefix}/{plural}/{quoted}"

    def ensure_namespace(self, name: str) -> None:
        if name in self.namespaces:
            return
        status, body = self.cluster.request(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        )
        if status not in (201, 409):
            raise RuntimeError(f"creating namespace {name}: {status} {body}")
        wait_for(
            f"the default ServiceAccount of {name}",
            lambda: self.cluster.get(f"/api/v1/namespaces/{name}/serviceaccounts/default"),
            60,
        )
        self.namespaces.add(name)

    def apply(self, obj: Mapping[str, Any], *, dry_run: bool) -> Answer | None:
        url = self.url(obj)
        if url is None:
            return None
        if "/namespaces/" in url:
            self.ensure_namespace(url.split("/namespaces/")[1].split("/")[0])
        query = QUERY + ("&dryRun=All" if dry_run else "")
        status, body = self.cluster.request(
            "PATCH",
            url,
            json.dumps(obj).encode(),
            content_type="application/apply-patch+yaml",
            query=query,
        )
        return answer(status, body, obj)

    def create(self, obj: Mapping[str, Any]) -> Answer | None:
        """The verdict on creating `obj` (None when it cannot be sent: see `url`)."""
        return self.apply(obj, dry_run=True)

    def update(self, before: Mapping[str, Any], after: Mapping[str, Any]) -> Answer | None:
        """The verdict on applying `after` over a live `before` (None when `before` is not
        accepted or either cannot be sent)."""
        url = self.url(before)
        if url is None or url != self.url(after):
            return None
        stored = self.apply(before, dry_run=False)
        if stored is None or stored.verdict != "accepted":
            return None
        try:
            return self.apply(after, dry_run=True)
        finally:
            self.delete(url)

    def delete(self, url: str) -> None:
        status, body = self.cluster.request(
            "DELETE", url, {"kind": "DeleteOptions", "apiVersion": "v1",
                            "propagationPolicy": "Background", "gracePeriodSeconds": 0}
        )  # fmt: skip
        if status not in (200, 202, 404):
            raise RuntimeError(f"deleting {url}: {status} {body}")
        # A finalizer (foregroundDeletion, a controller's) may keep it a moment.
        wait_for(f"{url} gone", lambda: self.cluster.request("GET", url)[0] == 404, 60)

    def webhooks(self) -> list[str]:
        """The admission webhook configurations the server calls (none: its verdict is its
        own)."""
        names = []
        for kind in ("validatingwebhookconfigurations", "mutatingwebhookconfigurations"):
            body = self.cluster.get(f"/apis/admissionregistration.k8s.io/v1/{kind}") or {}
            names += [f"{kind}/{i['metadata']['name']}" for i in body.get("items", [])]
        return names
