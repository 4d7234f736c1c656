"""A CRD version's ``openAPIV3Schema`` compiled once into a tree of :class:`Node` objects.

Mirrors ``k8s.io/apiextensions-apiserver/pkg/apiserver/schema``: ``NewStructural`` turns the
``JSONSchemaProps`` of a structural schema into a tree whose nodes carry the generic part (type,
nullable, default), the extensions (``x-kubernetes-*``) and the value validations; junctors
(``allOf``/``anyOf``/``oneOf``/``not``) carry value validations only. Patterns are compiled and
CEL rules (``x-kubernetes-validations``) are compiled into programs here, once per process, so
validating an object only walks it.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..regex import GoRegex, go_regex
from . import celdemand
from .cel import Rule, compile_rule, escape_property
from .decoding import Undecodable, float64_keyword, int64_keyword

__all__ = ["MISSING", "Node", "compile_schema"]


class _Missing:
    """No default (``None`` is a default: JSON ``null``)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass(eq=False)
class Node:
    """One node of a structural schema."""

    type: str = ""
    nullable: bool = False
    default: Any = MISSING
    properties: dict[str, Node] = field(default_factory=dict)
    additional: Node | None = None
    items: Node | None = None
    preserve_unknown: bool = False
    embedded: bool = False
    int_or_string: bool = False
    list_type: str = ""
    list_map_keys: tuple[str, ...] = ()
    map_type: str = ""
    # value validations
    required: tuple[str, ...] = ()
    enum: list[Any] | None = None
    format: str = ""
    pattern: GoRegex | None = None
    pattern_text: str = ""
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    multiple_of: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    min_properties: int | None = None
    max_properties: int | None = None
    all_of: list[Node] = field(default_factory=list)
    any_of: list[Node] = field(default_factory=list)
    one_of: list[Node] = field(default_factory=list)
    not_: Node | None = None
    rules: list[Rule] = field(default_factory=list)
    #: This node or one below it has CEL rules (rule-free subtrees are not walked for CEL).
    subtree_rules: bool = False
    #: The rules evaluated on create (not the transition rules, which need ``oldSelf``), and
    #: whether this node or one below has any: a create walks only those subtrees, and
    #: converts a value for CEL only where a rule reads it.
    create_rules: list[Rule] = field(default_factory=list)
    subtree_create_rules: bool = False
    #: What those rules can read of the value (:mod:`.celdemand`): only that is converted for
    #: them, and handed to the runtime.
    create_demand: Any = celdemand.ALL
    #: A property name here or below is spelt differently in CEL (see ``escape_property``).
    subtree_escapes: bool = False
    #: A default here or below (defaulting walks only such subtrees).
    subtree_defaults: bool = False
    #: The Python types of a value with nothing to check beyond its type (no enum, no value
    #: validation, no junctor): a value of one of these types needs no walk, when it is a
    #: string or within :attr:`int_range`. ``()``: every value is walked.
    accepts: tuple[builtins.type, ...] = ()
    #: The range an integer of format ``int32`` or ``int64`` must be within.
    int_range: tuple[int, int] | None = None
    #: Neither an enum nor a junctor (an object or a list of this node is walked at once).
    simple: bool = False

    def finish(self) -> Node:
        children = [c for c in (*self.properties.values(), self.additional, self.items) if c]
        self.subtree_defaults = self.default is not MISSING or any(
            c.subtree_defaults for c in children
        )
        self.accepts, self.int_range = self._plain_types()
        self.simple = self.enum is None and not (
            self.all_of or self.any_of or self.one_of or self.not_
        )
        self.subtree_rules = bool(self.rules) or any(c.subtree_rules for c in children)
        self.create_rules = [r for r in self.rules if not r.transition]
        need: Any = celdemand.PRESENT
        for rule in self.create_rules:
            if rule.program is not None:
                need = celdemand.merge(need, celdemand.demand(rule.program.serialize()))
        self.create_demand = need
        self.subtree_create_rules = bool(self.create_rules) or any(
            c.subtree_create_rules for c in children
        )
        self.subtree_escapes = any(escape_property(k) != k for k in self.properties) or any(
            c.subtree_escapes for c in children
        )
        return self

    def _plain_types(self) -> tuple[tuple[builtins.type, ...], tuple[int, int] | None]:
        """:attr:`accepts` and :attr:`int_range`, from what ``validation._check`` checks of a
        scalar: its type, an enum, a string's length, pattern and format, a number's bounds
        and multiple, an integer's format's range, the junctors."""
        if self.enum is not None or self.all_of or self.any_of or self.one_of or self.not_:
            return (), None
        plain_number = self.minimum is None and self.maximum is None and self.multiple_of is None
        plain_text = self.pattern is None and self.min_length is None and self.max_length is None
        int_range = INT_RANGES.get(self.format)
        if self.int_or_string:
            # A string's format is checked (``FORMATS``) unless it is none, an integer's, or
            # int-or-string itself.
            text_format = self.format in ("", "int-or-string") or int_range is not None
            return (
                ((str, int), int_range)
                if plain_number and plain_text and text_format
                else ((), None)
            )
        if self.type == "string":
            return ((str,), None) if plain_text and not self.format else ((), None)
        if self.type == "boolean":
            return (bool,), None
        if self.type == "integer" and plain_number:
            return (int,), int_range  # a format other than int32 or int64 checks nothing
        if self.type == "number" and plain_number:
            return (int, float), int_range
        return (), None


#: The ranges of the integer formats the API server checks (kube-openapi's validate: an integer
#: of format int32 or int64 must fit it).
INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def _float64(value: Any) -> float | None:
    """A ``*float64`` keyword as the API server decodes it (:mod:`.decoding`); ``None`` when
    unset or undecodable (a CRD holding one is refused by ``validate_crd``)."""
    try:
        return float64_keyword(value)
    except Undecodable:
        return None


def _int64(value: Any) -> int | None:
    """An ``*int64`` keyword as the API server decodes it: ``5.0`` is 5 (kubectl sends ``5``)."""
    try:
        return int64_keyword(value)
    except Undecodable:
        return None


def compile_schema(props: Mapping[str, Any], path: str = "") -> Node:
    """Compile one ``JSONSchemaProps`` (and everything below it).

    Raises ``ValueError`` for a pattern or a CEL rule that does not compile; a CRD whose schema
    holds one is refused by :func:`~kubetrain.kube.apiextensions.definition.validate_crd` first.
    """
    node = Node()
    kind = props.get("type")
    node.type = kind if isinstance(kind, str) else ""
    node.nullable = props.get("nullable") is True
    if "default" in props:
        node.default = props["default"]
    node.preserve_unknown = props.get("x-kubernetes-preserve-unknown-fields") is True
    node.embedded = props.get("x-kubernetes-embedded-resource") is True
    node.int_or_string = props.get("x-kubernetes-int-or-string") is True
    node.list_type = str(props.get("x-kubernetes-list-type") or "")
    node.list_map_keys = tuple(props.get("x-kubernetes-list-map-keys") or ())
    node.map_type = str(props.get("x-kubernetes-map-type") or "")
    properties = props.get("properties")
    if isinstance(properties, Mapping):
        node.properties = {
            str(k): compile_schema(v, f"{path}.{k}")
            for k, v in properties.items()
            if isinstance(v, Mapping)
        }
    extra = props.get("additionalProperties")
    if isinstance(extra, Mapping):
        node.additional = compile_schema(extra, f"{path}[*]")
    elif extra is True:
        node.preserve_unknown = True
    items = props.get("items")
    if isinstance(items, Mapping):
        node.items = compile_schema(items, f"{path}[*]")
    node.required = tuple(str(r) for r in props.get("required") or ())
    if isinstance(props.get("enum"), list):
        node.enum = list(props["enum"])
    node.format = str(props.get("format") or "")
    if isinstance(props.get("pattern"), str):
        node.pattern_text = props["pattern"]
        node.pattern = go_regex(node.pattern_text)
    node.minimum = _float64(props.get("minimum"))
    node.maximum = _float64(props.get("maximum"))
    node.exclusive_minimum = props.get("exclusiveMinimum") is True
    node.exclusive_maximum = props.get("exclusiveMaximum") is True
    node.multiple_of = _float64(props.get("multipleOf"))
    for key, attr in (
        ("minLength", "min_length"),
        ("maxLength", "max_length"),
        ("minItems", "min_items"),
        ("maxItems", "max_items"),
        ("minProperties", "min_properties"),
        ("maxProperties", "max_properties"),
    ):
        setattr(node, attr, _int64(props.get(key)))
    for key, attr in (("allOf", "all_of"), ("anyOf", "any_of"), ("oneOf", "one_of")):
        branches = props.get(key)
        if isinstance(branches, list):
            setattr(
                node,
                attr,
                [compile_schema(b, path) for b in branches if isinstance(b, Mapping)],
            )
    if node.int_or_string and _is_int_or_string_pair(node.any_of):
        node.any_of = []  # the type check says it already
    if isinstance(props.get("not"), Mapping):
        node.not_ = compile_schema(props["not"], path)
    for rule in props.get("x-kubernetes-validations") or ():
        if isinstance(rule, Mapping):
            node.rules.append(compile_rule(rule, node))
    return node.finish()


def _is_int_or_string_pair(branches: list[Node]) -> bool:
    return sorted(b.type for b in branches) == ["integer", "string"]
