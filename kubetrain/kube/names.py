"""Kubernetes naming rules: DNS labels, subdomains, label keys and values.

Each checker returns ``None`` when the value is valid, else a message that quotes the value, so
callers can attach it to a field path.
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "CONFIG_MAP_KEY",
    "DNS1035_LABEL",
    "DNS1123_LABEL",
    "DNS1123_SUBDOMAIN",
    "LABEL_VALUE",
    "PORT_NAME",
    "NameRule",
    "check_api_version_kind",
    "check_config_map_key",
    "check_env_var_name",
    "check_label_key",
    "check_path_segment",
    "looks_like_credential",
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


#: A named port (IANA_SVC_NAME, as in upstream ``validation.IsValidPortName``).
PORT_NAME = NameRule(
    "port name (IANA_SVC_NAME)",
    r"(?=.*[a-z])[a-z0-9]([a-z0-9]|-(?!-))*(?<!-)",
    15,
    "lower-case letters, digits and single '-', at least one letter, not starting or ending "
    "with '-'",
)
#: A key of ConfigMap or Secret data (upstream ``validation.IsConfigMapKey``).
CONFIG_MAP_KEY = NameRule(
    "ConfigMap or Secret key",
    r"[-._a-zA-Z0-9]+",
    253,
    "letters, digits, '-', '_' and '.'",
)
_ENV_VAR_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
_RELAXED_ENV_VAR_NAME = re.compile(r"[ -<>-~]+")  # printable ASCII except '='


def check_config_map_key(key: str) -> str | None:
    """A ConfigMap or Secret data key (upstream ``validation.IsConfigMapKey``)."""
    if problem := CONFIG_MAP_KEY.check(key):
        return problem
    if key in (".", "..") or key.startswith(".."):
        return (
            f"{key!r} is not a valid ConfigMap or Secret key: it may not be '.' or start with '..'"
        )
    return None


def check_env_var_name(name: str, relaxed: bool) -> str | None:
    """An environment variable name or ``envFrom`` prefix (upstream ``validation.IsEnvVarName``
    and, from Kubernetes 1.32, ``validation.IsRelaxedEnvVarName``)."""
    if relaxed:
        if not _RELAXED_ENV_VAR_NAME.fullmatch(name):
            return (
                f"{name!r} is not a valid environment variable name: printable ASCII other than '='"
            )
    elif not _ENV_VAR_NAME.fullmatch(name):
        return (
            f"{name!r} is not a valid environment variable name: letters, digits, '_', '-' and "
            "'.', not starting with a digit"
        )
    return None


def check_path_segment(name: str) -> str | None:
    """A name that is one segment of a URL path, the rule every object name meets (upstream
    ``path.IsValidPathSegmentName``)."""
    if name in (".", ".."):
        return f"{name!r} may not be '.' or '..'"
    if "/" in name or "%" in name:
        return f"{name!r} may not contain '/' or '%'"
    return None


# Field and variable names that hold credential material, compared without case, '-' and '_'.
_CREDENTIAL_WORDS = frozenset(
    {
        "accesskey",
        "accesskeyid",
        "accesstoken",
        "apikey",
        "auth",
        "authtoken",
        "bearertoken",
        "clientsecret",
        "hmac",
        "passwd",
        "password",
        "privatekey",
        "secret",
        "secretaccesskey",
        "secretkey",
        "sessiontoken",
        "token",
        "username",
    }
)
_CREDENTIAL_SUFFIXES = (
    "accesskey",
    "accesskeyid",
    "apikey",
    "passwd",
    "password",
    "privatekey",
    "secret",
    "secretkey",
    "token",
    "username",
)


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


@functools.lru_cache(maxsize=16384)
def looks_like_credential(name: str) -> bool:
    """Whether a field or env var name is one that holds credential material
    (``accessKey``, ``secret-key``, ``COS_APIKEY``, ``AWS_SECRET_ACCESS_KEY``, ``password``)."""
    squashed = _squash(name)
    return squashed in _CREDENTIAL_WORDS or squashed.endswith(_CREDENTIAL_SUFFIXES)
