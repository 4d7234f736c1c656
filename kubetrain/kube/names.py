"""Kubernetes naming rules: DNS labels, subdomains, label keys and values.

Each checker returns ``None`` when the value is valid, else a message that quotes the value, so
callers can attach it to a field path.
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "DNS1035_LABEL",
    "DNS1123_LABEL",
    "DNS1123_SUBDOMAIN",
    "LABEL_VALUE",
    "NameRule",
    "check_api_version_kind",
    "check_label_key",
]


class NameRule:
    """A Kubernetes name format: a pattern, a length limit and how to describe both."""

    __slots__ = ("_seen", "description", "max_length", "pattern", "title")

    def __init__(self, title: str, pattern: str, max_length: int, description: str) -> None:
        self.title = title
        self.pattern = re.compile(pattern)
        self.max_length = max_length
        self.description = description
        # Names and label values repeat across thousands of objects: remember the verdicts.
        self._seen: dict[str, str | None] = {}

    def check(self, value: str) -> str | None:
        try:
            return self._seen[value]
        except KeyError:
            pass
        verdict = self._check(value)
        if len(self._seen) < 65536:
            self._seen[value] = verdict
        return verdict

    def _check(self, value: str) -> str | None:
        if len(value) > self.max_length:
            return (
                f"{value!r} is {len(value)} characters, over the {self.max_length}-character "
                f"limit of a {self.title}"
            )
        if not self.pattern.fullmatch(value):
            return f"{value!r} is not a valid {self.title}: {self.description}"
        return None


_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL = NameRule(
    "DNS-1123 label",
    _LABEL,
    63,
    "lower-case letters, digits and '-', starting and ending with a letter or digit",
)
DNS1035_LABEL = NameRule(
    "DNS-1035 label",
    r"[a-z]([-a-z0-9]*[a-z0-9])?",
    63,
    "lower-case letters, digits and '-', starting with a letter and ending with a letter or digit",
)
DNS1123_SUBDOMAIN = NameRule(
    "DNS-1123 subdomain",
    rf"{_LABEL}(\.{_LABEL})*",
    253,
    "dot-separated DNS-1123 labels (lower-case letters, digits, '-' and '.')",
)
LABEL_VALUE = NameRule(
    "label value",
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?",
    63,
    "empty, or letters, digits, '-', '_' and '.', starting and ending with a letter or digit",
)
_LABEL_NAME = NameRule(
    "label key name",
    r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]",
    63,
    "letters, digits, '-', '_' and '.', starting and ending with a letter or digit",
)


@functools.lru_cache(maxsize=16384)
def check_label_key(key: str) -> str | None:
    """Check a label or annotation key: an optional DNS subdomain prefix, '/', and a name."""
    prefix, slash, name = key.rpartition("/")
    if slash and (problem := DNS1123_SUBDOMAIN.check(prefix)):
        return f"prefix of key {key!r}: {problem}"
    if problem := _LABEL_NAME.check(name):
        return f"key {key!r}: {problem}"
    return None


def check_api_version_kind(api_version: str, kind: str) -> str | None:
    """Check the syntax of an object's ``apiVersion`` and ``kind``, as kube-apiserver's
    ``ValidateCustomResourceDefinitionNames`` and ``ValidateCustomResourceDefinitionVersion``
    do for the kinds it can serve: the group a DNS-1123 subdomain, the version a DNS-1035 label,
    the kind (lower-cased) a DNS-1035 label. Anything else can never be served, and is never
    put into a path or URL (a kind ``../../x`` would name another file)."""
    group, slash, version = api_version.rpartition("/")
    if slash and (problem := DNS1123_SUBDOMAIN.check(group)):
        return f"the API group of apiVersion: {problem}"
    if problem := DNS1035_LABEL.check(version):
        return f"the version of apiVersion: {problem}"
    if problem := DNS1035_LABEL.check(kind.lower()):
        return f"kind (lower-cased): {problem}"
    return None
