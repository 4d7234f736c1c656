"""Which CEL features a CRD's rule may use, per Kubernetes version.

kube-apiserver compiles a new CRD's rules in the ``NewExpressions`` environment of its base
CEL environment (``k8s.io/apiserver/pkg/cel/environment/base.go``, v0.36.2) at the
compatibility version ``DefaultCompatibilityVersion`` gives: the server's own minor version
minus one (``MinCompatibilityVersion``, component-base v0.36.2). A library introduced at 1.N is
thus usable in a new rule from Kubernetes 1.(N+1) on. Below, every feature by the first
server version that accepts it in a new CRD:

=====================================================  ==========  ======================
feature                                                 introduced  accepted from server
=====================================================  ==========  ======================
URLs, regex ``find``, the Kubernetes lists library       1.0         always
optional types (``optional.*``, ``.?``), quantities      1.28        1.29
strings v2 (``format``, ``strings.quote``)               1.29        1.30 (v0 before)
the sets extension (``sets.contains``...)                1.29        1.30
IP and CIDR addresses                                    1.30        1.31
the format library (``format.dns1123Label()``...)        1.31        1.32
two-variable comprehensions (``all(i, v, ...)``...)      1.32        1.33
semver                                                   1.33        1.34
lists v3 (``distinct``, ``sort``, ``lists.range``...)    1.34        1.35
=====================================================  ==========  ======================

Never, in a CRD: ``cel.bind`` (the bindings extension is not in the base environment),
``authorizer`` (declared for admission policies only), strings v3 and later (``reverse()`` of
a string), ``math.*``, ``base64.*``. ``tests/oracles/cel-kubernetes`` holds the verdicts of
that environment itself, per version, on a corpus of rules.

The features are found in the rule's text (string literals skipped): the runtime kubetrain
evaluates rules with parses neither two-variable macros nor Kubernetes' libraries, so this is a
reading of calls by name, as the checker resolves them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ALWAYS", "NEVER", "Requirement", "requirement"]

ALWAYS = 0
NEVER = 10_000

#: Namespaced functions (``sets.contains``) and namespace-like identifiers, by the first minor
#: version that accepts them.
_NAMESPACES = {
    "sets": 30,
    "format": 32,
    "lists": 35,
    "strings": 30,
    "optional": 29,
    "ip": 31,  # ip.isCanonical
    "cel": NEVER,
    "math": NEVER,
    "base64": NEVER,
}
#: Global functions.
_GLOBALS = {
    "url": ALWAYS,
    "isURL": ALWAYS,
    "quantity": 29,
    "isQuantity": 29,
    "ip": 31,
    "isIP": 31,
    "cidr": 31,
    "isCIDR": 31,
    "semver": 34,
    "isSemver": 34,
}
#: Member functions beyond the standard library and strings v0 (a name two libraries share is
#: accepted from the earlier).
_MEMBERS = {
    **dict.fromkeys(("isSorted", "sum", "min", "max", "find", "findAll"), ALWAYS),
    **dict.fromkeys(
        ("getScheme", "getHost", "getHostname", "getPort", "getEscapedPath", "getQuery"), ALWAYS
    ),
    **dict.fromkeys(
        (
            "sign",
            "isGreaterThan",
            "isLessThan",
            "compareTo",
            "asApproximateFloat",
            "asInteger",
            "isInteger",
            "add",
            "sub",
        ),
        29,
    ),
    **dict.fromkeys(("format", "quote"), 30),
    **dict.fromkeys(
        (
            "family",
            "isUnspecified",
            "isLoopback",
            "isLinkLocalMulticast",
            "isLinkLocalUnicast",
            "isGlobalUnicast",
            "containsIP",
            "containsCIDR",
            "prefixLength",
            "masked",
            "ip",
        ),
        31,
    ),
    "validate": 32,
    **dict.fromkeys(("major", "minor", "patch"), 34),
    **dict.fromkeys(("distinct", "flatten", "slice", "sort", "sortBy", "reverse"), 35),
}
#: Macros of the two-variable comprehensions extension (``ext.TwoVarComprehensions``):
#: ``all``, ``exists``, ``existsOne`` and ``exists_one`` with two variables, and the
#: ``transform*`` macros, which have no one-variable form.
_TWO_VARIABLE = frozenset({"all", "exists", "existsOne", "exists_one"})
_TRANSFORMS = frozenset({"transformList", "transformMap", "transformMapEntry"})
TWO_VARIABLE_FROM = 33
#: Identifiers only admission policies declare.
_ADMISSION_ONLY = frozenset({"authorizer"})

_TOKEN = re.compile(
    r"""(?P<string>[rRbB]{0,2}(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))
      |(?P<ident>[A-Za-z_][A-Za-z0-9_]*)
      |(?P<punct>\.\?|[?][.\[]|[()\[\]{},.?])
      |(?P<other>\s+|.)""",
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class Requirement:
    """The most demanding feature a rule uses: the first server minor version that accepts it
    (``NEVER``: none does), the name the checker would call undeclared, and where."""

    minor: int
    name: str
    offset: int
    #: cel-go's words from the version on where the name is declared but not for this receiver
    #: (``reverse`` of a string, from lists v3's 1.35).
    detail: str = ""
    detail_from: int = NEVER

    def message(self, text: str, minor: int = NEVER) -> str:
        """cel-go's error on Kubernetes 1.``minor``, as the API server words it."""
        line = text.count("\n", 0, self.offset) + 1
        column = self.offset - (text.rfind("\n", 0, self.offset) + 1) + 1
        what = f"undeclared reference to '{self.name}' (in container '')"
        if self.detail and minor >= self.detail_from:
            what = self.detail
        return f"compilation failed: ERROR: <input>:{line}:{column}: {what}"


def requirement(text: str) -> Requirement | None:
    """The feature of ``text`` that needs the newest Kubernetes (``None``: only what every
    version has)."""
    tokens = [
        (m.lastgroup or "", m.group(), m.start())
        for m in _TOKEN.finditer(text)
        if m.lastgroup != "other"
    ]
    best: Requirement | None = None

    def need(minor: int, name: str, offset: int, detail: str = "", since: int = NEVER) -> None:
        nonlocal best
        if minor > ALWAYS and (best is None or minor > best.minor):
            best = Requirement(minor, name, offset, detail, since)

    for i, (kind, value, offset) in enumerate(tokens):
        before = tokens[i - 1][1] if i else ""
        after = tokens[i + 1][1] if i + 1 < len(tokens) else ""
        if kind == "punct" and value in (".?", "?.", "?["):
            need(29, "optional", offset)
            continue
        if kind != "ident" or before == ".":
            if kind == "ident" and after == "(":
                _member(tokens, i, need)
            continue
        if value in _ADMISSION_ONLY:
            need(NEVER, value, offset)
        elif after == "." and value in _NAMESPACES and _is_call(tokens, i + 2):
            need(_NAMESPACES[value], value, offset)
        elif after == "(" and value in _GLOBALS:
            need(_GLOBALS[value], value, tokens[i + 1][2])
    return best


def _is_call(tokens: list[tuple[str, str, int]], i: int) -> bool:
    """Whether ``tokens[i]`` is a name called at once (``name(``)."""
    return i + 1 < len(tokens) and tokens[i][0] == "ident" and tokens[i + 1][1] == "("


def _member(tokens: list[tuple[str, str, int]], i: int, add: Callable[..., None]) -> None:
    """A member call ``.name(``: a library's function, or a two-variable macro."""
    _, name, _ = tokens[i]
    paren = tokens[i + 1][2]
    if name in _TRANSFORMS or (name in _TWO_VARIABLE and _two_variables(tokens, i + 2)):
        add(TWO_VARIABLE_FROM, name, paren)
        return
    if name == "reverse" and i >= 2 and tokens[i - 2][0] == "string":
        # strings v3's reverse is never in Kubernetes; lists v3's takes a list.
        add(
            NEVER,
            name,
            paren,
            "found no matching overload for 'reverse' applied to 'string.()'",
            _MEMBERS["reverse"],
        )
        return
    minor = _MEMBERS.get(name)
    if minor is not None:
        add(minor, name, paren)


def _two_variables(tokens: list[tuple[str, str, int]], i: int) -> bool:
    """Whether the arguments from ``tokens[i]`` start with two plain identifiers and have at
    least three parts: ``all(i, v, pred)``, not ``all(x, pred)``."""
    if i + 3 >= len(tokens):
        return False
    first, comma, second, comma2 = tokens[i : i + 4]
    return first[0] == "ident" and comma[1] == "," and second[0] == "ident" and comma2[1] == ","
