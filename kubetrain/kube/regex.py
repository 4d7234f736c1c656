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
        #: Texts already matched: the objects of one render repeat the same names, labels
        #: and values thousands of times (bounded: cleared when full).
        self._seen: dict[str, bool] = {}

    def search(self, text: str) -> bool:
        """Whether the pattern matches somewhere in ``text`` (Go's ``MatchString``)."""
        found = self._seen.get(text)
        if found is None:
            found = self._compiled.search(text) is not None
            if len(self._seen) >= 4096:
                self._seen.clear()
            self._seen[text] = found
        return found

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
    refused = _go_refusal(pattern)
    if refused is not None:
        raise ValueError(f"error parsing regexp: {refused}")
    try:
        compiled = re2.compile(pattern, options=_OPTIONS)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise ValueError(f"error parsing regexp: {detail}") from None
    return GoRegex(pattern, compiled)


#: Go's ``maxHeight`` (regexp/syntax/parse.go, Go 1.26): the deepest parse tree Go accepts.
_MAX_HEIGHT = 1000


def _go_refusal(pattern: str) -> str | None:
    r"""What Go's ``regexp/syntax`` (Go 1.26, the toolchain of Kubernetes v1.36) refuses and
    RE2 accepts, as Go words it, or ``None``:

    * ``\C`` (any byte), an escape RE2 has and Go does not (``parseEscape``: "invalid escape
      sequence"), in or out of a character class;
    * a parse tree higher than ``maxHeight`` (``checkHeight``: "expression nests too deeply").
      The height is counted as ``calcHeight`` counts it, one per node from the root to the
      deepest leaf, over the nodes Go's parser makes of groups: a capture, a repetition and a
      concatenation or alternation of several parts each add one; a non-capturing group adds
      none, and a run of literals is one leaf (Go's later simplifications, which factor
      alternations, can only add a level where kubetrain counts none).
    """
    i, n = 0, len(pattern)
    # One frame per open group: [height of its deepest part so far, parts in the current
    # branch, branches, capturing].
    stack: list[list[int]] = [[0, 0, 1, 0]]
    last = 0  # height of the last atom (for a repetition after it)
    literal_run = False
    while i < n:
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1 : i + 2]
            if nxt == "C":
                return "invalid escape sequence: `\\C`"
            if nxt == "Q":
                end = pattern.find("\\E", i + 2)
                i = n if end < 0 else end + 2
                last, literal_run = _atom(stack[-1], 1, literal_run, True)
                continue
            i += 2
            last, literal_run = _atom(stack[-1], 1, literal_run, nxt not in "dDwWsSpPbBAz")
            continue
        if c == "[":
            j = i + 1
            if pattern[j : j + 1] == "^":
                j += 1
            if pattern[j : j + 1] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                if pattern[j] == "\\":
                    if pattern[j + 1 : j + 2] == "C":
                        return "invalid escape sequence: `\\C`"
                    j += 2
                    continue
                if pattern.startswith("[:", j):
                    close = pattern.find(":]", j + 2)
                    j = close + 2 if close >= 0 else j + 1
                    continue
                j += 1
            i = j + 1
            last, literal_run = _atom(stack[-1], 1, literal_run, False)
            continue
        if c == "(":
            named = pattern.startswith("(?P<", i) or (
                pattern.startswith("(?<", i) and pattern[i + 3 : i + 4] not in ("=", "!")
            )
            capturing = not pattern.startswith("(?", i) or named
            flags_only = pattern.startswith("(?", i) and not capturing
            if flags_only:
                close = i + 2
                while close < n and pattern[close] not in ":)":
                    close += 1
                if close < n and pattern[close] == ")":  # (?i): flags, no group
                    i = close + 1
                    continue
                i = close + 1
            else:
                close = pattern.find(">", i) if named else i
                i = n if close < 0 else close + 1
            stack.append([0, 0, 1, int(capturing)])
            literal_run = False
            continue
        if c == ")" and len(stack) > 1:
            frame = stack.pop()
            height = _group_height(frame)
            last, literal_run = _atom(stack[-1], height, False, False)
            i += 1
            continue
        if c == "|":
            frame = stack[-1]
            frame[0] = max(frame[0], _branch_height(frame))
            frame[1], frame[2] = 0, frame[2] + 1
            literal_run = False
            i += 1
            continue
        if c in "*+?{":
            if c == "{":
                close = pattern.find("}", i)
                body = pattern[i + 1 : close] if close > 0 else ""
                if close < 0 or not body or not all(p.isdigit() for p in body.split(",", 1) if p):
                    last, literal_run = _atom(stack[-1], 1, literal_run, True)
                    i += 1
                    continue
                i = close + 1
            else:
                i += 1
            if pattern[i : i + 1] == "?":
                i += 1
            # The repetition node over the last atom: one more level above it.
            frame = stack[-1]
            frame[0] = max(frame[0], last + 1)
            last = last + 1
            literal_run = False
            continue
        last, literal_run = _atom(stack[-1], 1, literal_run, True)
        i += 1
        if _group_height(stack[-1]) > _MAX_HEIGHT:
            break
    while len(stack) > 1:  # an unclosed group: RE2 refuses the pattern itself
        frame = stack.pop()
        _atom(stack[-1], _group_height(frame), False, False)
    if _group_height(stack[0], root=True) > _MAX_HEIGHT:
        return f"expression nests too deeply: `{pattern}`"
    return None


def _atom(frame: list[int], height: int, literal_run: bool, literal: bool) -> tuple[int, bool]:
    """Add one part of ``height`` to the group's current branch; a literal after a literal
    joins it (one OpLiteral). Returns the atom's height and whether a literal run goes on."""
    if not (literal and literal_run):
        frame[1] += 1
    frame[0] = max(frame[0], height)
    return height, literal


def _branch_height(frame: list[int]) -> int:
    return frame[0] + (1 if frame[1] > 1 else 0)


def _group_height(frame: list[int], root: bool = False) -> int:
    """A group's height: its parts', plus one for a concatenation and one for an alternation
    of several, plus one for a capture."""
    height = _branch_height(frame) + (1 if frame[2] > 1 else 0)
    return height + (0 if root else frame[3])
