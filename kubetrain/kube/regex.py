"""Regular expressions as Go reads them: RE2 syntax, matched in time linear in the text.

Kubernetes' CRD ``pattern`` (kube-openapi's validator and the CRD's own validation,
``regexp.Compile`` in ``apiextensions/validation``) and Kustomize's patch target selectors
(kustomize/api v0.21.1 ``types.NewSelectorRegex``: ``regexp.Compile`` of each anchored field)
are Go regular
expressions. Python's ``re`` reads a larger language (lookarounds, backreferences) and
backtracks: ``(a+)+b`` against a long name runs for ever. Here they are compiled by RE2, the
engine Go's ``regexp`` implements, so what Go refuses is refused and no match takes more than
linear time.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import re2

__all__ = ["GoRegex", "go_regex"]

#: The longest pattern kubetrain compiles (the API server has no such limit, but a pattern is
#: written by hand: a CRD's longest upstream pattern is under 300 characters).
MAX_PATTERN_CHARS = 10_000

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a refused pattern is our message, never RE2's log line


class GoRegex:
    """A compiled Go regular expression."""

    def __init__(self, pattern: str, compiled: Any) -> None:
        self.pattern = pattern
        self._compiled = compiled

    def search(self, text: str) -> bool:
        """Whether the pattern matches somewhere in ``text`` (Go's ``MatchString``)."""
        return self._compiled.search(text) is not None

    def fullmatch(self, text: str) -> bool:
        """Whether the pattern matches all of ``text``."""
        return self._compiled.fullmatch(text) is not None


@cache
def go_regex(pattern: str) -> GoRegex:
    """``pattern`` compiled as Go compiles it; ``ValueError`` naming what Go refuses."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ValueError(
            f"a pattern of {len(pattern):,} characters (at most {MAX_PATTERN_CHARS:,})"
        )
    try:
        compiled = re2.compile(pattern, options=_OPTIONS)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise ValueError(f"error parsing regexp: {detail}") from None
    return GoRegex(pattern, compiled)
