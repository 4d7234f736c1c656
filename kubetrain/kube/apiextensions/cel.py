"""``x-kubernetes-validations``: CEL rules of a CRD schema, compiled once, evaluated per object.

Mirrors ``k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel`` (``Compile`` and
``Validator.Validate``) on create:

* ``self`` is the value at the node that carries the rule; object properties are reachable under
  their escaped names (``__dash__``, ``__dot__``, ``__slash__``, ``__underscores__``, reserved
  words as ``__<word>__``: ``apiserver/pkg/cel/escaping.go``), map keys as they are;
* a rule that refers to ``oldSelf`` is a transition rule and is not evaluated on create, unless
  ``optionalOldSelf`` is true, in which case ``oldSelf`` is ``optional.none()``;
* a false rule reports ``messageExpression`` (when it evaluates to a non-empty one-line string),
  else ``message``, else ``failed rule: <rule>``, at the node's path plus ``fieldPath``, with the
  ``reason`` (``FieldValueInvalid`` by default);
* an evaluation error is reported on the rule's node.

The evaluator is ``cel-expr-python`` (Google's CEL C++ runtime; see ``pyproject.toml`` for the
choice), with the CEL extensions Kubernetes enables that it has: strings, optional values and
``cel.bind``. Deviation from upstream, on purpose: the Kubernetes-specific CEL libraries (lists'
``isSorted``/``sum``, ``quantity()``, ``url()``, ``ip()``, ``cidr()``, ``format.*``, ``semver``)
are not provided; a rule that calls one is kept but not evaluated (:attr:`Rule.unsupported`), so
kubetrain never refuses what the server would accept because of a missing library.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..schemas import json_type
from .cellibs import Requirement, requirement

if TYPE_CHECKING:
    from .schema import Node

__all__ = ["RESERVED", "Rule", "RuleFailure", "compile_rule", "escape_property", "evaluate"]

#: Functions of Kubernetes' CEL libraries (``k8s.io/apiserver/pkg/cel/library``) that the CEL
#: runtime used here does not have.
KUBERNETES_LIBRARY = frozenset(
    {
        "isSorted",
        "sum",
        "min",
        "max",
        "indexOf",
        "lastIndexOf",
        "find",
        "findAll",
        "url",
        "isURL",
        "getScheme",
        "getHost",
        "getHostname",
        "getPort",
        "getEscapedPath",
        "getQuery",
        "quantity",
        "isQuantity",
        "sign",
        "isGreaterThan",
        "isLessThan",
        "compareTo",
        "asInteger",
        "asApproximateFloat",
        "isInteger",
        "add",
        "sub",
        "ip",
        "isIP",
        "cidr",
        "isCIDR",
        "family",
        "containsIP",
        "containsCIDR",
        "masked",
        "prefixLength",
        "isUnspecified",
        "isLoopback",
        "isLinkLocalMulticast",
        "isLinkLocalUnicast",
        "isGlobalUnicast",
        "isCanonical",
        "semver",
        "isSemver",
        "major",
        "minor",
        "patch",
        "named",
        "validate",
    }
)
_UNDECLARED = re.compile(r"undeclared reference to '([A-Za-z_][A-Za-z0-9_]*)'")
_NO_OVERLOAD = re.compile(r"found no matching overload for '([A-Za-z_][A-Za-z0-9_]*)'")
_OLD_SELF = re.compile(r"\boldSelf\b")
#: CEL's reserved words, escaped as ``__<word>__`` when they name a property.
RESERVED = frozenset(
    {
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    }
)
_ESCAPABLE = re.compile(r"[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*")
_REASONS = {
    "FieldValueInvalid": "Invalid value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueRequired": "Required value",
    "FieldValueDuplicate": "Duplicate value",
}
_FIELD_PATH_PART = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\['((?:[^'\\]|\\.)*)'\]|\[(\d+)\]")

_ENV: Any = None
#: The most iterations the CEL runtime evaluates in one expression (its comprehension budget).
ITERATION_LIMIT = 10_000


def _env() -> Any:
    """One CEL environment per process: ``self`` of any type, Kubernetes' extensions."""
    global _ENV
    if _ENV is None:
        # Imported on first use: most objects have no CEL rule to evaluate.
        from cel_expr_python import cel
        from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

        # Strings at version 2, as Kubernetes enables them (ext.Strings(ext.StringsVersion(2))):
        # a later version would accept strings v3's reverse(), which the server refuses. The
        # bindings extension is kubetrain's own (for optionalOldSelf, below): a rule's
        # cel.bind is refused before it gets here (cellibs: not in Kubernetes' base
        # environment).
        _ENV = cel.NewEnv(
            variables={"self": cel.Type.DYN, "oldSelf": cel.Type.DYN},
            extensions=[
                ext_strings.ExtStrings(2),
                ext_optional.ExtOptional(),
                ext_bindings.ExtBindings(),
            ],
            functions=_sets(cel),
        )
    return _ENV


def _sets(cel: Any) -> list[Any]:
    """cel-go's sets extension (``ext.Sets``: ``sets.contains``, ``sets.equivalent``,
    ``sets.intersects`` of two lists, compared with CEL's equality), which the C++ runtime
    lacks."""
    lists = [cel.Type.List(cel.Type.DYN), cel.Type.List(cel.Type.DYN)]

    def contains(a: list[Any], b: list[Any]) -> bool:
        return all(any(_equal(x, y) for x in a) for y in b)

    def intersects(a: list[Any], b: list[Any]) -> bool:
        return any(any(_equal(x, y) for x in a) for y in b)

    functions = {
        "contains": contains,
        "equivalent": lambda a, b: contains(a, b) and contains(b, a),
        "intersects": intersects,
    }
    return [
        cel.FunctionDecl(
            f"sets.{name}",
            [cel.Overload(f"sets_{name}_list_list", cel.Type.BOOL, lists, False, impl)],
        )
        for name, impl in functions.items()
    ]


def _equal(a: Any, b: Any) -> bool:
    """CEL's equality of plain values: numbers across int, uint and double; no bool equals a
    number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


@functools.lru_cache(maxsize=8192)
def escape_property(name: str) -> str | None:
    """The name a property has in CEL (``apiserver/pkg/cel`` ``Escape``), or ``None`` when it
    cannot be reached as a field."""
    if name in RESERVED:
        return f"__{name}__"
    if not _ESCAPABLE.fullmatch(name):
        return None
    return (
        name.replace("__", "__underscores__")
        .replace(".", "__dot__")
        .replace("-", "__dash__")
        .replace("/", "__slash__")
    )


@dataclass(frozen=True)
class Rule:
    """One compiled ``x-kubernetes-validations`` entry."""

    rule: str
    message: str = ""
    field_path: tuple[str | int, ...] = ()
    reason: str = "FieldValueInvalid"
    program: Any = None
    message_program: Any = None
    #: A transition rule (refers to ``oldSelf``): not evaluated on create.
    transition: bool = False
    #: Calls a Kubernetes CEL library function the runtime lacks: kept, not evaluated.
    unsupported: str = ""
    #: The Kubernetes feature of the rule (or its messageExpression) that needs the newest
    #: API server, and the expression's text (:mod:`.cellibs`); ``None``: every version.
    requires: tuple[Requirement, str] | None = None

    def refusal(self, minor: int) -> str | None:
        """What the API server of Kubernetes 1.``minor`` says of the rule in a new CRD, or
        ``None`` when it compiles it."""
        if self.requires is None or minor >= self.requires[0].minor:
            return None
        needed, source = self.requires
        return needed.message(source, minor)


@dataclass(frozen=True)
class RuleFailure:
    """A rule that did not hold (or could not be evaluated) for a value."""

    path: tuple[str | int, ...]
    message: str
    #: Not a refusal: the rule could not be evaluated here (the runtime's iteration limit).
    unchecked: bool = False


def _compile(expression: str, uses: Requirement | None = None) -> tuple[Any, str]:
    """(program, unsupported function) of one expression; ``ValueError`` when it does not
    compile for another reason. ``uses``: the Kubernetes feature the expression needs
    (:mod:`.cellibs`): one the runtime lacks leaves the expression unevaluated, not refused."""
    try:
        return _env().compile(expression), ""
    except RuntimeError as exc:
        text = str(exc)
        missing = _UNDECLARED.search(text) or _NO_OVERLOAD.search(text)
        if missing and (missing[1] in KUBERNETES_LIBRARY or uses is not None):
            return None, uses.name if uses is not None else missing[1]
        first = text.removeprefix("INVALID_ARGUMENT: ").split("\n", 1)[0]
        raise ValueError(f"compilation failed: {first}") from None


def parse_field_path(text: str) -> tuple[str | int, ...] | None:
    """``.spec.foo['a.b'][0]`` -> ``("spec", "foo", "a.b", 0)``; ``None`` when malformed."""
    parts: list[str | int] = []
    pos = 0
    while pos < len(text):
        m = _FIELD_PATH_PART.match(text, pos)
        if not m:
            return None
        if m[1] is not None:
            parts.append(m[1])
        elif m[2] is not None:
            parts.append(m[2].replace("\\'", "'"))
        else:
            parts.append(int(m[3]))
        pos = m.end()
    return tuple(parts)


def compile_rule(props: Mapping[str, Any], node: Node) -> Rule:
    """Compile one rule (``ValueError`` when its expression or fieldPath is malformed)."""
    text = str(props.get("rule") or "")
    uses = requirement(text)
    message_text = props.get("messageExpression")
    message_uses = requirement(message_text) if isinstance(message_text, str) else None
    transition = bool(_OLD_SELF.search(text))
    expression = text
    if transition and props.get("optionalOldSelf") is True:
        # On create, oldSelf is optional.none(): bind it around the rule.
        expression, transition = f"cel.bind(oldSelf, optional.none(), {text})", False
    program, unsupported = _compile(expression, uses)
    message_program = None
    if isinstance(message_text, str) and message_text:
        message_program, _ = _compile(message_text, message_uses)
    found = [
        (needed, str(source))
        for needed, source in ((uses, text), (message_uses, message_text))
        if needed is not None
    ]
    requires = max(found, key=lambda pair: pair[0].minor, default=None)
    field_path: tuple[str | int, ...] = ()
    if isinstance(props.get("fieldPath"), str) and props["fieldPath"]:
        parsed = parse_field_path(props["fieldPath"])
        if parsed is None:
            raise ValueError(f"fieldPath {props['fieldPath']!r} is not a valid JSON path")
        field_path = parsed
    return Rule(
        rule=text,
        message=str(props.get("message") or ""),
        field_path=field_path,
        reason=str(props.get("reason") or "FieldValueInvalid"),
        program=program,
        message_program=message_program,
        transition=transition,
        unsupported=unsupported,
        requires=requires,
    )


def _masked(value: Any, char: str) -> Any:
    """``value`` with every scalar and every mapping key replaced (strings by ``char`` of the
    same length, numbers by 0 or 1, booleans by false or true, keys by ``x0``, ``x1``...):
    without a schema to tell an object's properties from a map's keys, every key is one."""
    flag = char == "y"
    if isinstance(value, bool):
        return flag
    if isinstance(value, int | float):
        return type(value)(flag)
    if isinstance(value, str):
        return char * len(value)
    if isinstance(value, dict):
        return {f"{char}{i}": _masked(v, char) for i, v in enumerate(value.values())}
    if isinstance(value, list):
        return [_masked(v, char) for v in value]
    return value


def _eval_message(rule: Rule, self_value: Any) -> str | None:
    """The messageExpression's text, or ``None`` when it gives none the server would use
    (not a non-empty one-line string of at most 5 KiB: MaxEvaluatedMessageExpressionSizeBytes),
    or cannot be evaluated."""
    try:
        result = rule.message_program.eval(data={"self": self_value})
    except RuntimeError:  # out of budget: the server falls back to the message too
        return None
    if result.type().name() != "STRING":
        return None
    text = result.value()
    if isinstance(text, str) and text.strip() and "\n" not in text and len(text) <= 5120:
        return text
    return None


def _message(rule: Rule, self_value: Any, masked: Callable[[str], Any] | None = None) -> str:
    """The failure's message: the messageExpression's text when it has one and it does not
    depend on the values of the object (it is evaluated again with every value and map key
    masked, twice: ``masked(char)``; a message that changes prints something of the object,
    maybe a password, a number under a secret field or a map key of one, which kubetrain's
    reports never do), else the static message, else ``failed rule: <rule>``."""
    fallback = rule.message or f"failed rule: {rule.rule}"
    if rule.message_program is None:
        return fallback
    text = _eval_message(rule, self_value)
    if text is None:
        return fallback
    mask = masked or (lambda char: _masked(self_value, char))
    if any(_eval_message(rule, mask(c)) != text for c in "xy"):
        return (
            f"{fallback} (the rule's messageExpression prints a value of the object; kubetrain "
            "does not show it)"
        )
    return text


def evaluate(
    rule: Rule,
    self_value: Any,
    raw_value: Any,
    path: tuple[str | int, ...],
    masked: Callable[[str], Any] | None = None,
    *,
    old_value: Any = None,
) -> RuleFailure | None:
    """Evaluate one rule on create, or with ``old_value`` (as CEL sees it) a transition rule
    on update: ``oldSelf`` is the correlated value of the live object (upstream
    ``Validator.Validate`` with its ``oldObj``; only called where both exist). ``self_value``
    is the value as CEL sees it (escaped), ``raw_value`` as the object holds it (for the
    message); ``masked(char)`` gives the value with its values and map keys masked (see
    :func:`_message`)."""
    if rule.program is None or rule.transition != (old_value is not None):
        return None
    data = {"self": self_value} if old_value is None else {"self": self_value, "oldSelf": old_value}
    try:
        result = rule.program.eval(data=data)
    except RuntimeError:
        # The runtime stops a comprehension at 10,000 iterations; the API server's limit is a
        # cost (1,000,000 per call), which a long list can stay under. So no verdict: a warning.
        return RuleFailure(
            path,
            f"not checked: the rule needs more than the {ITERATION_LIMIT:,} iterations "
            "kubetrain's CEL runtime evaluates (the API server allows a cost of 1,000,000 per "
            f"call): {rule.rule}",
            unchecked=True,
        )
    kind = result.type().name()
    if kind == "BOOL" and result.value() is True:
        return None
    if kind == "BOOL":
        what = _REASONS.get(rule.reason, "Invalid value")
        detail = _message(rule, self_value, masked)
        if what == "Invalid value":
            detail = f'Invalid value: "{json_type(raw_value)}": {detail}'
        else:
            detail = f"{what}: {detail}"
        return RuleFailure((*path, *rule.field_path), detail)
    error = str(result.value()) if kind == "ERROR" else f"rule returned {kind.lower()}, not bool"
    return RuleFailure(
        path,
        f'Invalid value: "{json_type(raw_value)}": {error} evaluating rule: {rule.rule}',
    )
