"""Field errors, as kube-apiserver's validation reports them (upstream
``k8s.io/apimachinery/pkg/util/validation/field``): a field path and what is wrong there.

The paths are the server's (``spec.containers[0].resources.requests`` for a request above its
limit); the messages are kubetrain's own words and quote the value received, except where the
value may be secret material (Secret data, env values), which is never repeated.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..schemas import sensitive_path, value_shape

__all__ = ["Errors", "Issue", "Path", "memoized", "quote"]

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Issue:
    """One thing the API server would refuse: where, and why."""

    path: Path
    message: str


def quote(value: Any) -> str:
    """A value as messages show it: strings quoted, maps and lists as compact JSON."""
    if isinstance(value, str):
        return repr(value if len(value) <= 200 else value[:200] + "...")
    if isinstance(value, Mapping | list):
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
        return text if len(text) <= 200 else text[:200] + "..."
    return repr(value)


def _shown(path: Path, value: Any) -> str:
    """:func:`quote`, unless the value may be secret material (:func:`sensitive_path`)."""
    return f"({value_shape(value)}, not shown)" if sensitive_path(path) else quote(value)


@dataclass
class Errors:
    """The issues found in one object, and the Kubernetes version they are judged by."""

    version: tuple[int, int]
    issues: list[Issue] = field(default_factory=list)

    def add(self, path: Path, message: str) -> None:
        self.issues.append(Issue(path, message))

    # The constructors mirror upstream field.Required, field.Invalid, field.NotSupported, ...

    def required(self, path: Path, detail: str = "") -> None:
        self.add(path, f"required field is missing{': ' + detail if detail else ''}")

    def invalid(self, path: Path, value: Any, detail: str) -> None:
        self.add(path, f"invalid value {_shown(path, value)}: {detail}")

    def not_supported(self, path: Path, value: Any, supported: Iterable[str]) -> None:
        allowed = ", ".join(sorted(supported))
        self.add(path, f"unsupported value {_shown(path, value)}; supported values: {allowed}")

    def duplicate(self, path: Path, value: Any) -> None:
        self.add(path, f"duplicate value {_shown(path, value)}")

    def forbidden(self, path: Path, detail: str) -> None:
        self.add(path, f"forbidden: {detail}")

    def not_found(self, path: Path, value: Any, detail: str = "") -> None:
        self.add(path, f"{_shown(path, value)} not found{': ' + detail if detail else ''}")

    def too_long(self, path: Path, limit: int, unit: str = "bytes") -> None:
        self.add(path, f"too long: may not be more than {limit} {unit}")

    def too_many(self, path: Path, count: int, limit: int) -> None:
        self.add(path, f"too many: {count}, at most {limit} allowed")

    def problem(self, path: Path, problem: str | None) -> None:
        """Report a message from :mod:`kubetrain.kube.names` (already quoting the value)."""
        if problem:
            self.add(path, problem)


Check = Callable[[Errors, Any, Path], None]


def memoized(check: Check, size: int = 4096) -> Check:
    """``check`` remembered by the value it is given (its ``repr``): the objects of one render
    or one tree repeat the same resources and containers thousands of times. Only for checks
    whose findings depend on nothing but the value and the version."""
    cache: dict[tuple[tuple[int, int], str], tuple[Issue, ...]] = {}

    def run(errs: Errors, value: Any, path: Path) -> None:
        key = (errs.version, repr(value))
        found = cache.get(key)
        if found is None:
            sub = Errors(errs.version)
            check(sub, value, ())
            found = tuple(sub.issues)
            if len(cache) >= size:
                cache.clear()
            cache[key] = found
        errs.issues.extend(Issue((*path, *issue.path), issue.message) for issue in found)

    return run
