"""What kube-apiserver works out about a CRD's CEL rule before it accepts the CRD: the rule's
estimated worst-case cost, and the compile-time refusals that depend on the schema's types.

The runtime kubetrain evaluates rules with (``cel-expr-python``) declares ``self`` as ``dyn``
and has no cost model, so this module does what the API server does with the typed AST:

* the type of ``self`` is the schema's CEL declaration, as ``SchemaDeclType``
  (``apiserver/pkg/cel/common/schemas.go``) builds it: objects expose their declared properties
  (and, at a resource's root, ``apiVersion``, ``kind``, ``metadata.name`` and
  ``metadata.generateName``), lists and maps their items, and every string, list and map has a
  largest size, from ``maxLength``/``maxItems``/``maxProperties`` or else from the 3 MiB request
  limit and the item's smallest serialized size;
* selecting a property the declaration lacks is cel-go's ``undefined field`` error, and a
  ``matches`` pattern that Go cannot compile is ``ValidateRegexLiterals``' error;
* the cost is ``checker.Cost`` (cel-go v0.26.0 ``checker/cost.go``, as Kubernetes v1.36
  vendors it) with Kubernetes' estimator
  (``apiserver/pkg/cel/library/cost.go`` and the size estimator of
  ``apiextensions-apiserver/.../schema/cel/compilation.go``), presence tests free
  (``PresenceTestHasCost(false)``, the base environment's option).

The typed AST is read from the runtime's own parse: ``Expression.serialize()`` is a
``cel.expr.CheckedExpr`` in a ``google.protobuf.Any``, decoded here from its wire format (field
numbers of ``cel.dev/expr``'s ``syntax.proto`` and ``checked.proto``). Types are inferred here,
from the declaration, not taken from the runtime's check (which sees ``dyn``).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..regex import go_regex
from .cel import RESERVED, escape_property

if TYPE_CHECKING:
    from .schema import Node

__all__ = [
    "MAX_REQUEST_BYTES",
    "PER_EXPRESSION_LIMIT",
    "TOTAL_LIMIT",
    "Decl",
    "cost_error_message",
    "decl_of",
    "estimate",
    "max_cardinality",
]

#: ``celconfig.MaxRequestSizeBytes``: the largest request the API server reads.
MAX_REQUEST_BYTES = 3 * 1024 * 1024
#: ``StaticEstimatedCostLimit``: the most one rule (times how often its node can occur) may cost.
PER_EXPRESSION_LIMIT = 10_000_000
#: ``StaticEstimatedCRDCostLimit``: the most all rules of one schema may cost together.
TOTAL_LIMIT = 100_000_000
_MAX = 2**64 - 1  # math.MaxUint64: an unknown size or cost

# cel-go common/cost.go
_SELECT_AND_IDENT = 1
_CONST = 0
_LIST_CREATE = 10
_MAP_CREATE = 30
_STRUCT_CREATE = 40
_STRING_TRAVERSAL = 0.1
_REGEX_STRING_LENGTH = 0.25
_MAX_NAME_FORMAT_REGEX = 128

_ACCUMULATORS = frozenset({"@result", "__result__"})


# --- decoding the runtime's parse (protobuf wire format) --------------------------------------


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 70:
            raise ValueError("varint too long")


def _fields(data: bytes) -> Iterator[tuple[int, Any]]:
    """(field number, value) of one message: ints for varints, bytes for the rest."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        elif wire == 5:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        yield number, value


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


@dataclass
class Expr:
    """One node of a parsed CEL expression (``cel.expr.Expr``)."""

    id: int = 0
    kind: str = ""  # literal, ident, select, call, list, map, struct, comprehension
    value: Any = None  # literal: the value; ident: the name; select: the field name
    literal_type: str = ""  # null, bool, int, uint, double, string, bytes, duration, timestamp
    test_only: bool = False
    function: str = ""
    target: Expr | None = None
    args: list[Expr] = field(default_factory=list)  # call args; list elements; map keys+values
    operand: Expr | None = None
    # comprehension
    iter_var: str = ""
    iter_var2: str = ""
    accu_var: str = ""
    iter_range: Expr | None = None
    accu_init: Expr | None = None
    loop_condition: Expr | None = None
    loop_step: Expr | None = None
    result: Expr | None = None


#: Fields of ``Expr.Comprehension`` holding expressions, by field number.
_COMPREHENSION_PARTS = {
    2: "iter_range",
    4: "accu_init",
    5: "loop_condition",
    6: "loop_step",
    7: "result",
}
_CONSTANTS = {1: "null", 2: "bool", 3: "int", 4: "uint", 5: "double", 6: "string", 7: "bytes"}


def _expr(data: bytes) -> Expr:
    e = Expr()
    for number, value in _fields(data):
        if number == 2:
            e.id = _signed(value)
        elif number == 3:
            e.kind = "literal"
            for n, v in _fields(value):
                e.literal_type = _CONSTANTS.get(n, "duration" if n == 8 else "timestamp")
                if n == 2:
                    e.value = bool(v)
                elif n == 3:
                    e.value = _signed(v)
                elif n == 4:
                    e.value = v
                elif n == 5:
                    e.value = struct.unpack("<d", v)[0]
                elif n == 6:
                    e.value = v.decode("utf-8", "replace")
                elif n == 7:
                    e.value = bytes(v)
            if not e.literal_type:
                e.literal_type = "null"
        elif number == 4:
            e.kind = "ident"
            e.value = next((v.decode() for n, v in _fields(value) if n == 1), "")
        elif number == 5:
            e.kind = "select"
            for n, v in _fields(value):
                if n == 1:
                    e.operand = _expr(v)
                elif n == 2:
                    e.value = v.decode()
                elif n == 3:
                    e.test_only = bool(v)
        elif number == 6:
            e.kind = "call"
            for n, v in _fields(value):
                if n == 1:
                    e.target = _expr(v)
                elif n == 2:
                    e.function = v.decode()
                elif n == 3:
                    e.args.append(_expr(v))
        elif number == 7:
            e.kind = "list"
            e.args = [_expr(v) for n, v in _fields(value) if n == 1]
        elif number == 8:
            e.kind = "struct"
            for n, v in _fields(value):
                if n == 1 and v:
                    e.value = v.decode()
                elif n == 2:
                    entry = dict(_fields(v))
                    if 3 in entry:
                        e.args += [_expr(entry[3]), _expr(entry.get(4, b""))]
                    else:
                        e.args.append(_expr(entry.get(4, b"")))
            if e.value is None:
                e.kind = "map"
        elif number == 9:
            e.kind = "comprehension"
            for n, v in _fields(value):
                if n == 1:
                    e.iter_var = v.decode()
                elif n == 8:
                    e.iter_var2 = v.decode()
                elif n == 3:
                    e.accu_var = v.decode()
                elif n in _COMPREHENSION_PARTS:
                    setattr(e, _COMPREHENSION_PARTS[n], _expr(v))
    return e


@dataclass
class Parsed:
    """A parsed expression and where each node is in the text."""

    expr: Expr
    positions: dict[int, int]
    line_offsets: list[int]

    def location(self, node: Expr) -> str:
        """``<input>:LINE:COLUMN`` of a node, as cel-go's ``ToDisplayString`` prints it."""
        offset = self.positions.get(node.id, 0)
        line, start = 1, 0
        for number, line_start in enumerate(self.line_offsets, 2):
            if line_start <= offset:
                line, start = number, line_start
        return f"<input>:{line}:{offset - start + 1}"


def parse(serialized: bytes) -> Parsed:
    """The expression of ``Expression.serialize()`` (an ``Any`` holding a ``CheckedExpr``)."""
    checked = next((v for n, v in _fields(serialized) if n == 2), serialized)
    root, positions, offsets = Expr(), {}, []
    for number, value in _fields(checked):
        if number == 4:
            root = _expr(value)
        elif number == 5:
            for n, v in _fields(value):
                if n == 3:
                    pos = 0
                    while pos < len(v):
                        offset, pos = _varint(v, pos)
                        offsets.append(offset)
                elif n == 4:
                    entry = dict(_fields(v))
                    positions[_signed(entry.get(1, 0))] = entry.get(2, 0)
    return Parsed(root, positions, offsets)


# --- declarations (SchemaDeclType) ------------------------------------------------------------


@dataclass(eq=False)
class Decl:
    """A CEL declaration of a schema node (``apiservercel.DeclType``)."""

    kind: str  # object, map, list, string, bytes, int, double, bool, duration, timestamp, dyn
    fields: dict[str, Decl] = field(default_factory=dict)  # escaped property names
    elem: Decl | None = None
    key: Decl | None = None
    max_elements: int = 0
    min_size: int = 0


_STRING_KEY = Decl("string", min_size=2)


def _request_string_length(node: Node) -> int:
    """``estimateMaxStringLengthPerRequest``."""
    if node.int_or_string:
        return MAX_REQUEST_BYTES - 2
    return {"duration": 32, "date": 12, "date-time": 32}.get(node.format, MAX_REQUEST_BYTES - 2)


def decl_of(node: Node, is_root: bool) -> Decl | None:
    """``SchemaDeclType``: the declaration of ``node``, or ``None`` where CEL cannot see it."""
    if node.int_or_string:
        if node.max_length is not None:
            return Decl("dyn", max_elements=max(node.max_length, 0) * 4, min_size=1)
        return Decl("dyn", max_elements=_request_string_length(node), min_size=1)
    properties = dict(node.properties)
    if is_root:
        properties = _with_type_and_object_meta(node)
    if node.type == "array":
        if node.items is None:
            return None
        items = decl_of(node.items, node.items.embedded)
        if items is None:
            return None
        most = (
            max(node.max_items, 0)
            if node.max_items is not None
            else (MAX_REQUEST_BYTES - 2) // (items.min_size + 1)
        )
        return Decl("list", elem=items, max_elements=most, min_size=2)
    if node.type == "object":
        if node.additional is not None:
            values = decl_of(node.additional, node.additional.embedded)
            if values is None:
                return None
            most = (
                max(node.max_properties, 0)
                if node.max_properties is not None
                else (MAX_REQUEST_BYTES - 2) // (values.min_size + 6)
            )
            return Decl("map", key=_STRING_KEY, elem=values, max_elements=most, min_size=2)
        fields: dict[str, Decl] = {}
        min_size = 2
        for name, prop in properties.items():
            found = decl_of(prop, prop.embedded)
            if found is None:
                continue
            escaped = escape_property(name)
            if escaped is not None:
                fields[escaped] = found
            if name in node.required and _no_default(prop):
                min_size += len(name) + found.min_size + 4
        return Decl("object", fields=fields, min_size=min_size)
    if node.type == "string":
        if node.format == "byte":
            length = max(node.max_length, 0) if node.max_length is not None else None
            return Decl(
                "bytes",
                max_elements=length if length is not None else _request_string_length(node),
                min_size=2,
            )
        if node.format == "duration":
            return Decl("duration", max_elements=_request_string_length(node), min_size=3)
        if node.format in ("date", "date-time"):
            smallest = 12 if node.format == "date" else 21
            return Decl("timestamp", max_elements=_request_string_length(node), min_size=smallest)
        if node.max_length is not None:
            most = max(node.max_length, 0) * 4
        elif node.enum:
            most = max((len(v) for v in node.enum if isinstance(v, str)), default=0)
        else:
            most = _request_string_length(node)
        return Decl("string", max_elements=most, min_size=2)
    simple = {"boolean": ("bool", 4), "number": ("double", 1), "integer": ("int", 1)}
    if node.type in simple:
        kind, smallest = simple[node.type]
        return Decl(kind, min_size=smallest)
    return None


def _no_default(node: Node) -> bool:
    from .schema import MISSING

    return node.default is MISSING


def _with_type_and_object_meta(node: Node) -> dict[str, Node]:
    """``WithTypeAndObjectMeta``: a resource's root always shows apiVersion, kind and
    metadata.name / generateName (and only those of its metadata)."""
    from .schema import Node as SchemaNode

    props = node.properties
    meta = props.get("metadata")
    if (
        props.get("kind", SchemaNode()).type == "string"
        and props.get("apiVersion", SchemaNode()).type == "string"
        and meta is not None
        and meta.type == "object"
        and meta.properties.get("name", SchemaNode()).type == "string"
        and meta.properties.get("generateName", SchemaNode()).type == "string"
    ):
        return dict(props)
    string = SchemaNode(type="string")
    return {
        **props,
        "kind": string,
        "apiVersion": string,
        "metadata": SchemaNode(type="object", properties={"name": string, "generateName": string}),
    }


def max_cardinality(min_size: int) -> int:
    """``maxCardinality``: how many times data of ``min_size`` bytes fits in one request."""
    return MAX_REQUEST_BYTES // (min_size + 1)


# --- types of expressions --------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _T:
    """The type inferred for an expression: a kind, and for schema values their declaration."""

    kind: str  # bool int uint double string bytes duration timestamp null list map struct dyn
    decl: Decl | None = None
    elem: _T | None = None
    key: _T | None = None


_DYN = _T("dyn")
_SCALARS = frozenset({"bool", "int", "uint", "double", "duration", "timestamp"})


def _of(decl: Decl | None) -> _T:
    if decl is None:
        return _DYN
    if decl.kind == "object":
        return _T("struct", decl)
    if decl.kind == "list":
        return _T("list", decl, _of(decl.elem))
    if decl.kind == "map":
        return _T("map", decl, _of(decl.elem), _T("string"))
    return _T(decl.kind, decl)


_RESULT_KINDS = {
    "size": "int",
    "int": "int",
    "uint": "uint",
    "double": "double",
    "string": "string",
    "bytes": "bytes",
    "bool": "bool",
    "duration": "duration",
    "timestamp": "timestamp",
    "matches": "bool",
    "contains": "bool",
    "startsWith": "bool",
    "endsWith": "bool",
    "charAt": "string",
    "lowerAscii": "string",
    "upperAscii": "string",
    "replace": "string",
    "substring": "string",
    "trim": "string",
    "join": "string",
    "reverse": "string",
    "format": "string",
    "strings.quote": "string",
    "lastIndexOf": "int",
    "isSorted": "bool",
    "@in": "bool",
    "!_": "bool",
    "_&&_": "bool",
    "_||_": "bool",
    "_==_": "bool",
    "_!=_": "bool",
    "_<_": "bool",
    "_<=_": "bool",
    "_>_": "bool",
    "_>=_": "bool",
    "@not_strictly_false": "bool",
    "hasValue": "bool",
    "url": "struct",
    "quantity": "struct",
    "semver": "struct",
}


class Refused(ValueError):
    """A compile-time refusal, at a node of the expression."""

    def __init__(self, node: Expr, message: str) -> None:
        super().__init__(message)
        self.node = node


# --- the estimate (checker.Cost) -------------------------------------------------------------


@dataclass
class _Var:
    path: list[str] | None
    size: tuple[int, int] | None
    entry: tuple[str, tuple[int, int], tuple[int, int]] | None
    type: _T


def _add(a: int, b: int) -> int:
    return _MAX if a + b > _MAX else a + b


def _mul(a: int, b: int) -> int:
    return _MAX if a * b > _MAX else a * b


def _factor(x: int, f: float) -> int:
    value = math.ceil(x * f)
    return _MAX if value >= _MAX else value


Range = tuple[int, int]


def _radd(a: Range, b: Range) -> Range:
    return (_add(a[0], b[0]), _add(a[1], b[1]))


def _rmul(a: Range, b: Range) -> Range:
    return (_mul(a[0], b[0]), _mul(a[1], b[1]))


def _rfactor(a: Range, f: float) -> Range:
    return (_factor(a[0], f), _factor(a[1], f))


def _union(a: Range, b: Range) -> Range:
    return (min(a[0], b[0]), max(a[1], b[1]))


_UNKNOWN: Range = (0, _MAX)


class _Coster:
    """cel-go's ``coster`` over one rule, with Kubernetes' size and call estimators."""

    def __init__(self, root: Decl) -> None:
        self.root = root
        self.paths: dict[int, list[str]] = {}
        self.sizes: dict[int, Range] = {}
        self.entries: dict[int, tuple[str, Range, Range]] = {}
        self.types: dict[int, _T] = {}
        self.scopes: dict[str, list[_Var]] = {}
        self.depth = 0

    # types and variables
    def type_of(self, e: Expr) -> _T:
        return self.types.get(e.id, _DYN)

    def peek(self, name: str) -> _Var | None:
        stack = self.scopes.get(name)
        return stack[-1] if stack else None

    def push(self, name: str, var: _Var) -> None:
        self.scopes.setdefault(name, []).append(var)

    def pop(self, name: str) -> None:
        self.scopes[name].pop()

    def path_of(self, e: Expr) -> list[str]:
        if e.kind == "ident" and (var := self.peek(str(e.value))) is not None:
            return list(var.path or [])
        return list(self.paths.get(e.id, []))

    # sizes
    def estimate_size(self, path: list[str]) -> Range | None:
        """The size estimator of compilation.go: walk the declaration along the path."""
        if not path:
            return None
        node: Decl | None = self.root
        for name in path[1:]:
            if node is None:
                return None
            if name in ("@items", "@values"):
                node = node.elem
            elif name == "@keys":
                node = node.key
            else:
                node = node.fields.get(name)
        if node is None:
            return None
        return (0, node.max_elements)

    def compute_size(self, e: Expr) -> Range | None:
        if e.id in self.sizes:
            return self.sizes[e.id]
        literal = _expr_size(e)
        if literal is not None:
            return literal
        estimated = self.estimate_size(self.path_of(e))
        if estimated is not None:
            self.sizes[e.id] = estimated
            return estimated
        if self.type_of(e).kind in _SCALARS:
            return (1, 1)
        if e.kind == "ident" and (var := self.peek(str(e.value))) is not None and var.size:
            return var.size
        return None

    def size(self, e: Expr) -> Range:
        return self.compute_size(e) or _UNKNOWN

    def node_size(self, e: Expr) -> Range:
        """``sizeOrUnknown`` of an AstNode: its computed size, where the accumulator's path is
        dropped (``newAstNode``)."""
        path = self.path_of(e)
        if path and path[0] in _ACCUMULATORS:
            saved = self.paths.pop(e.id, None)
            try:
                found = self.compute_size(e)
            finally:
                if saved is not None:
                    self.paths[e.id] = saved
            return found or _UNKNOWN
        return self.size(e)

    def entry_of(self, e: Expr) -> tuple[str, Range, Range] | None:
        if e.id in self.entries:
            return self.entries[e.id]
        if e.kind == "ident" and (var := self.peek(str(e.value))) is not None and var.entry:
            return var.entry
        return None

    # the walk
    def cost(self, e: Expr | None) -> Range:
        if e is None:
            return (0, 0)
        self.depth += 1
        if self.depth > 200:
            raise ValueError("expression nests too deeply")
        try:
            if e.kind == "literal":
                self.types[e.id] = _T(e.literal_type)
                return (_CONST, _CONST)
            if e.kind == "ident":
                return self.cost_ident(e)
            if e.kind == "select":
                return self.cost_select(e)
            if e.kind == "call":
                return self.cost_call(e)
            if e.kind == "list":
                return self.cost_list(e)
            if e.kind == "map":
                return self.cost_map(e)
            if e.kind == "struct":
                total = (0, 0)
                for arg in e.args:
                    total = _radd(total, self.cost(arg))
                self.types[e.id] = _T("struct")
                return _radd(total, (_STRUCT_CREATE, _STRUCT_CREATE))
            if e.kind == "comprehension":
                return self.cost_bind(e) if _is_bind(e) else self.cost_comprehension(e)
            return (0, 0)
        finally:
            self.depth -= 1

    def cost_ident(self, e: Expr) -> Range:
        name = str(e.value)
        var = self.peek(name)
        if var is not None:
            self.paths[e.id] = list(var.path or [])
            self.types[e.id] = var.type
        else:
            self.paths[e.id] = [name]
            self.types[e.id] = _of(self.root) if name in ("self", "oldSelf") else _DYN
        return (_SELECT_AND_IDENT, _SELECT_AND_IDENT)

    def cost_select(self, e: Expr) -> Range:
        assert e.operand is not None
        operand = e.operand
        if e.test_only:
            total = self.cost(operand)  # presence tests are free (PresenceTestHasCost(false))
            self._select_type(e, operand)
            self.types[e.id] = _T("bool")
            return total
        total = self.cost(operand)
        if self.type_of(operand).kind in ("map", "struct"):
            total = _radd(total, (_SELECT_AND_IDENT, _SELECT_AND_IDENT))
        self.paths[e.id] = [*self.path_of(operand), str(e.value)]
        self.types[e.id] = self._select_type(e, operand)
        return total

    def _select_type(self, e: Expr, operand: Expr) -> _T:
        owner = self.type_of(operand)
        if owner.kind == "struct" and owner.decl is not None:
            name = str(e.value)
            found = owner.decl.fields.get(name)
            if found is None and name in RESERVED:
                # DeclTypeProvider.FindStructFieldType with recognizeKeywordAsFieldName (1.31+):
                # `self.namespace` reads the property CEL calls __namespace__.
                found = owner.decl.fields.get(f"__{name}__")
            if found is None:
                raise Refused(e, f"undefined field '{e.value}'")
            return _of(found)
        if owner.kind == "map":
            return owner.elem or _DYN
        return _DYN

    def cost_list(self, e: Expr) -> Range:
        total = (0, 0)
        item: Range = (_MAX, 0) if e.args else (0, 0)
        kinds = set()
        for element in e.args:
            total = _radd(total, self.cost(element))
            item = _union(item, self.node_size(element))
            kinds.add(self.type_of(element).kind)
        self.entries[e.id] = ("list", (1, 1), item)
        elem = self.type_of(e.args[0]) if len(kinds) == 1 and e.args else _DYN
        self.types[e.id] = _T("list", elem=elem)
        return _radd(total, (_LIST_CREATE, _LIST_CREATE))

    def cost_map(self, e: Expr) -> Range:
        total = (0, 0)
        keys: Range = (_MAX, 0) if e.args else (0, 0)
        values: Range = (_MAX, 0) if e.args else (0, 0)
        for i in range(0, len(e.args) - 1, 2):
            key, value = e.args[i], e.args[i + 1]
            total = _radd(_radd(total, self.cost(key)), self.cost(value))
            keys = _union(keys, self.node_size(key))
            values = _union(values, self.node_size(value))
        self.entries[e.id] = ("map", keys, values)
        elem = self.type_of(e.args[1]) if len(e.args) >= 2 else _DYN
        self.types[e.id] = _T("map", elem=elem, key=_T("string"))
        return _radd(total, (_MAP_CREATE, _MAP_CREATE))

    def _local(self, name: str, init: Expr) -> None:
        self.push(name, _Var(self.path_of(init), self.compute_size(init), self.entry_of(init),
                             self.type_of(init)))  # fmt: skip

    def _iter(self, name: str, over: Expr, part: str) -> None:
        """``pushIterSingle`` / ``pushIterKey`` / ``pushIterValue``."""
        entry = self.entry_of(over)
        container = (
            entry[0] if entry else {"list": "list", "map": "map"}.get(self.type_of(over).kind, "")
        )
        over_type = self.type_of(over)
        if part == "single":
            size = entry[1] if entry else None
            sub = "@keys"
            kind = over_type.key or _DYN
            if container == "list":
                size, sub, kind = (entry[2] if entry else None), "@items", over_type.elem or _DYN
        elif part == "key":
            size = entry[1] if entry else None
            sub = "@indices" if container == "list" else "@keys"
            kind = _T("int") if container == "list" else over_type.key or _DYN
        else:
            size = entry[2] if entry else None
            sub = "@items" if container == "list" else "@values"
            kind = over_type.elem or _DYN
        self.push(name, _Var([*self.path_of(over), sub], size, None, kind))

    def cost_comprehension(self, e: Expr) -> Range:
        assert e.iter_range is not None and e.accu_init is not None
        total = _radd(self.cost(e.iter_range), self.cost(e.accu_init))
        self._local(e.accu_var, e.accu_init)
        if e.iter_var2:
            self._iter(e.iter_var, e.iter_range, "key")
            self._iter(e.iter_var2, e.iter_range, "value")
        else:
            self._iter(e.iter_var, e.iter_range, "single")
        loop = self.cost(e.loop_condition)
        step = self.cost(e.loop_step)
        self.pop(e.iter_var)
        if e.iter_var2:
            self.pop(e.iter_var2)
        total = _radd(total, self.cost(e.result))
        self.pop(e.accu_var)
        count = self.size(e.iter_range)
        total = _radd(total, _rmul(count, _radd(step, loop)))
        if e.result is not None:
            self.types[e.id] = self.type_of(e.result)
        if e.accu_init.kind == "literal":
            if (found := self.compute_size(e.accu_init)) is not None:
                self.sizes[e.id] = found
        elif e.accu_init.kind in ("list", "map"):
            self.sizes[e.id] = count
            if e.loop_step is not None and (entry := self.entry_of(e.loop_step)) is not None:
                self.entries[e.id] = entry
        return total

    def cost_bind(self, e: Expr) -> Range:
        assert e.accu_init is not None
        total = _radd(self.cost(e.iter_range), self.cost(e.accu_init))
        self._local(e.accu_var, e.accu_init)
        total = _radd(total, self.cost(e.result))
        self.pop(e.accu_var)
        if e.result is not None:
            self.types[e.id] = self.type_of(e.result)
            if (found := self.compute_size(e.result)) is not None:
                self.sizes[e.id] = found
            if (entry := self.entry_of(e.result)) is not None:
                self.entries[e.id] = entry
        return total

    def cost_call(self, e: Expr) -> Range:
        if e.function == "dyn" and e.args:
            total = _radd((1, 1), self.cost(e.args[0]))
            if (found := self.compute_size(e.args[0])) is not None:
                self.sizes[e.id] = found
            if (entry := self.entry_of(e.args[0])) is not None:
                self.entries[e.id] = entry
            self.types[e.id] = _DYN
            return total
        arg_costs = [self.cost(arg) for arg in e.args]
        total = (0, 0)
        if e.target is not None:
            total = self.cost(e.target)
        self.types[e.id] = self._result_type(e)
        if e.function == "matches" and e.args:
            pattern = e.args[0]  # ValidateRegexLiterals checks the first argument
            if pattern.kind == "literal" and isinstance(pattern.value, str):
                try:
                    go_regex(pattern.value)
                except ValueError:
                    raise Refused(pattern, "invalid matches argument") from None
        fn_cost: Range = (_MAX, 0)
        result: Range | None = None
        for overload in self._overloads(e):
            cost, size = self.function_cost(e, overload, arg_costs)
            fn_cost = _union(fn_cost, cost)
            if size is not None:
                result = size if result is None else _union(result, size)
            if overload in ("index_list", "index_map") and e.args:
                entry = self.entry_of(e.args[0])
                result = entry[2] if entry else None
                sub = "@items" if overload == "index_list" else "@values"
                self.paths[e.id] = [*self.path_of(e.args[0]), sub]
            if result is None:
                result = self.compute_size(e)
        if result is not None:
            self.sizes[e.id] = result
        return _radd(total, fn_cost)

    def _result_type(self, e: Expr) -> _T:
        fn = e.function
        args = [self.type_of(a) for a in e.args]
        target = self.type_of(e.target) if e.target is not None else None
        if fn == "_[_]" and args:
            owner = args[0]
            if owner.kind in ("list", "map"):
                return owner.elem or _DYN
            return _DYN
        if fn == "_?_:_" and len(args) == 3:
            return args[1] if args[1].kind == args[2].kind else _DYN
        if fn in ("_+_", "_-_", "_*_", "_/_", "_%_") and args:
            return args[0] if args[0].kind != "dyn" else (args[-1] if fn == "_+_" else _DYN)
        if fn == "-_" and args:
            return args[0]
        if fn == "split":
            return _T("list", elem=_T("string"))
        if fn in ("indexOf", "lastIndexOf") and target is not None:
            return _T("int")
        if fn in ("sum", "min", "max") and target is not None and target.kind == "list":
            return target.elem or _DYN
        if fn in ("orValue", "value") and target is not None:
            return _DYN
        kind = _RESULT_KINDS.get(fn)
        return _T(kind) if kind else _DYN

    def _overloads(self, e: Expr) -> list[str]:
        """The overloads a call may resolve to, as the checker's reference map names those that
        matter to the cost (several where a type is only known at run time)."""
        fn = e.function
        kinds = [self.type_of(a).kind for a in e.args]
        target = self.type_of(e.target).kind if e.target is not None else ""

        def by_kind(kind: str, table: dict[str, str], other: str = "other") -> list[str]:
            if kind == "dyn":
                return sorted({*table.values(), other})
            return [table.get(kind, other)]

        if fn in ("_&&_", "_||_"):
            return ["logical_and" if fn == "_&&_" else "logical_or"]
        if fn == "_?_:_":
            return ["conditional"]
        if fn in ("_==_", "_!=_"):
            return ["equals"]
        if fn in ("_<_", "_<=_", "_>_", "_>=_") and kinds:
            return by_kind(kinds[0], {"string": "compare_string", "bytes": "compare_bytes"})
        if fn == "_+_" and kinds:
            kind = kinds[0] if kinds[0] != "dyn" else (kinds[-1] if len(kinds) > 1 else "dyn")
            table = {"string": "add_string", "bytes": "add_bytes", "list": "add_list"}
            return by_kind(kind, table)
        if fn == "@in" and len(kinds) == 2:
            return by_kind(kinds[1], {"list": "in_list", "map": "in_map"})
        if fn == "_[_]" and kinds:
            return by_kind(kinds[0], {"list": "index_list", "map": "index_map"})
        if e.target is not None:
            if fn == "matches":
                return ["matches_string"]
            if fn in ("contains", "startsWith", "endsWith") and target in ("string", "dyn"):
                return [{"contains": "contains_string", "startsWith": "starts_with_string",
                         "endsWith": "ends_with_string"}[fn]]  # fmt: skip
            if fn == "format":
                return ["string_format"]
        if fn == "bytes" and kinds == ["string"]:
            return ["string_to_bytes"]
        if fn == "string" and kinds == ["bytes"]:
            return ["bytes_to_string"]
        if fn == "strings.quote":
            return ["strings_quote"]
        return ["other"]

    def function_cost(
        self, e: Expr, overload: str, arg_costs: list[Range]
    ) -> tuple[Range, Range | None]:
        args = e.args
        arg_sum = (0, 0)
        for c in arg_costs:
            arg_sum = _radd(arg_sum, c)
        k8s = self._kubernetes_cost(e)
        if k8s is not None:
            return _radd(k8s[0], arg_sum), k8s[1]
        target = e.target
        if overload == "string_format" and target is not None:
            return _radd(_rfactor(self.node_size(target), _STRING_TRAVERSAL), arg_sum), None
        if overload in ("string_to_bytes", "bytes_to_string", "strings_quote") and len(args) == 1:
            size = self.node_size(args[0])
            cost = _radd(_rfactor(size, _STRING_TRAVERSAL), arg_sum)
            if overload == "string_to_bytes":
                return cost, (size[0], _mul(size[1], 4))
            if overload == "bytes_to_string":
                return cost, (size[0] // 4, size[1])
            return cost, (_add(size[0], 2), _add(_mul(size[1], 2), 2))
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return _radd(_rfactor(self.node_size(args[0]), _STRING_TRAVERSAL), arg_sum), None
        if overload == "in_list" and len(args) == 2:
            return _radd(_rfactor(self.node_size(args[1]), 1), arg_sum), None
        if overload == "matches_string" and target is not None and len(args) == 1:
            text = _rfactor(_radd(self.node_size(target), (1, 1)), _STRING_TRAVERSAL)
            regex = _rfactor(self.node_size(args[0]), _REGEX_STRING_LENGTH)
            return _radd(_rmul(text, regex), arg_sum), None
        if overload == "contains_string" and target is not None and len(args) == 1:
            text = _rfactor(self.node_size(target), _STRING_TRAVERSAL)
            sub = _rfactor(self.node_size(args[0]), _STRING_TRAVERSAL)
            return _radd(_rmul(text, sub), arg_sum), None
        if overload in ("logical_and", "logical_or") and len(arg_costs) == 2:
            lhs, rhs = arg_costs
            return (lhs[0], _radd(lhs, rhs)[1]), None
        if overload == "conditional" and len(args) == 3:
            size = _union(self.node_size(args[1]), self.node_size(args[2]))
            a, b = self.entry_of(args[1]), self.entry_of(args[2])
            if a is not None and b is not None:
                self.entries[e.id] = (a[0], _union(a[1], b[1]), _union(a[2], b[2]))
            return _radd(arg_costs[0], _union(arg_costs[1], arg_costs[2])), size
        if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            size = _radd(self.node_size(args[0]), self.node_size(args[1]))
            a, b = self.entry_of(args[0]), self.entry_of(args[1])
            if a is not None and b is not None:
                self.entries[e.id] = (a[0], _union(a[1], b[1]), _union(a[2], b[2]))
            if overload == "add_list":
                return _radd((1, 1), arg_sum), size
            return _radd(_rfactor(size, _STRING_TRAVERSAL), arg_sum), size
        if overload in ("compare_string", "compare_bytes", "equals") and len(args) == 2:
            lhs, rhs = self.node_size(args[0]), self.node_size(args[1])
            smallest = min(lhs[1], rhs[1])
            cost = _rfactor((1 if smallest > 0 else 0, smallest), _STRING_TRAVERSAL)
            return _radd(cost, arg_sum), None
        return _radd((1, 1), arg_sum), None

    def _kubernetes_cost(self, e: Expr) -> tuple[Range, Range | None] | None:
        """``library.CostEstimator.EstimateCallCost`` for the functions it prices."""
        fn, target, args = e.function, e.target, e.args
        if fn == "check":
            return (350_000, 350_000), None
        if fn in ("serviceAccount", "path", "group", "resource", "subresource", "namespace",
                  "name", "allowed", "reason", "error", "errored", "masked", "prefixLength",
                  "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast",
                  "isLinkLocalUnicast", "isGlobalUnicast", "format.named", "sign", "asInteger",
                  "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo",
                  "add", "sub", "major", "minor", "patch", "getScheme", "getHostname", "getHost",
                  "getPort", "getEscapedPath", "getQuery"):  # fmt: skip
            return (1, 1), None
        if fn in ("fieldSelector", "labelSelector") and len(args) == 1:
            length = self.node_size(args[0])
            parse_cost = _rfactor(length, _STRING_TRAVERSAL)
            requirements = _rfactor(_rfactor(length, 0.5), float(_LIST_CREATE + _STRUCT_CREATE))
            return _radd(_radd((_LIST_CREATE, _LIST_CREATE), parse_cost), requirements), None
        if fn in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf") and target is not None:
            owner = self.type_of(target)
            if owner.kind == "list":
                element: Range = (1, 1)
                elem = owner.elem or _DYN
                if elem.kind in ("string", "bytes"):
                    element = _radd(element, _rfactor(self._items_size(target), _STRING_TRAVERSAL))
                return _rmul(self.node_size(target), element), None
            return _rfactor(self.node_size(target), _STRING_TRAVERSAL), None
        if fn in ("url", "jsonpatch.escapeKey") and len(args) == 1:
            size = self.node_size(args[0])
            return _rfactor(size, _STRING_TRAVERSAL), size
        if fn in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            size = self.node_size(target)
            return _rfactor(size, _STRING_TRAVERSAL), size
        if fn == "replace" and target is not None and len(args) >= 2:
            return self._replace(target, args)
        if fn == "split" and target is not None:
            size = self.node_size(target)
            most = size[1]
            if len(args) > 1 and args[1].kind == "literal" and isinstance(args[1].value, int):
                most = args[1].value
            return _rfactor(size, 2 * _STRING_TRAVERSAL), (0, most)
        if fn == "join" and target is not None:
            listed = self.node_size(target)
            joined: Range = (0, 0)
            if self.type_of(target).kind == "list":
                joined = _rmul(listed, self._items_size(target))
            if args:
                sep = self.node_size(args[0])
                separators = (max(listed[0] - 1, 0), max(listed[1] - 1, 0))
                joined = _radd(joined, _rmul(sep, separators))
            return _rfactor(joined, _STRING_TRAVERSAL), joined
        if fn in ("find", "findAll") and target is not None and args:
            size = self.node_size(target)
            text = _rfactor(_radd(size, (1, 1)), _STRING_TRAVERSAL)
            regex = _rfactor(self.node_size(args[0]), _REGEX_STRING_LENGTH)
            return _rmul(text, regex), (0, size[1])
        if args and fn in ("cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver"):
            return _rfactor(self.node_size(args[0]), _STRING_TRAVERSAL), None
        if args and fn == "isSemver":
            return _rfactor(self.node_size(args[0]), _STRING_TRAVERSAL), None
        if fn == "ip" and args:
            if self.type_of(args[0]).kind == "struct":
                return (1, 1), None
            return _rfactor(self.node_size(args[0]), _STRING_TRAVERSAL), None
        if fn == "ip.isCanonical" and args:
            return _rfactor(self.node_size(args[0]), 2 * _STRING_TRAVERSAL), None
        if fn in ("containsIP", "containsCIDR") and args:
            ip: Range = (4, 16)
            cost = _rfactor(_radd(ip, ip), _STRING_TRAVERSAL)
            if fn == "containsCIDR":
                cost = _radd(_radd(cost, _rfactor(ip, _STRING_TRAVERSAL)), (1, 1))
            if self.type_of(args[0]).kind == "string":
                cost = _radd(cost, _rfactor(self.node_size(args[0]), _STRING_TRAVERSAL))
            return cost, None
        if fn == "validate" and args:
            text = _rfactor(self.node_size(args[0]), _STRING_TRAVERSAL)
            return _rfactor(text, _MAX_NAME_FORMAT_REGEX * _REGEX_STRING_LENGTH), None
        return None

    def _items_size(self, listed: Expr) -> Range:
        """The size of a list's items (``listElementNode``: the list's path and ``@items``)."""
        path = self.path_of(listed)
        return (self.estimate_size([*path, "@items"]) if path else None) or _UNKNOWN

    def _replace(self, target: Expr, args: list[Expr]) -> tuple[Range, Range]:
        size = self.node_size(target)
        old, new = self.node_size(args[0]), self.node_size(args[1])
        count_min = count_max = kept_min = kept_max = 0
        if old[0] == 0:
            count_max = size[1] + 1 if size[1] < _MAX else size[1]
            kept_max = size[1]
        elif new[1] <= old[0]:
            kept_max = size[1]
        else:
            count_max = math.ceil(size[1] / old[0])
        if old[1] == 0:
            count_min = size[0] + 1 if size[0] < _MAX else size[0]
            kept_min = size[0]
        elif old[1] <= new[0]:
            kept_min = size[0]
        else:
            count_min = math.ceil(size[0] / old[1])
        result = _radd(_rmul((count_min, count_max), new), (kept_min, kept_max))
        return _rfactor(size, 2 * _STRING_TRAVERSAL), result


def _is_bind(e: Expr) -> bool:
    rng, cond = e.iter_range, e.loop_condition
    return (
        rng is not None
        and rng.kind == "list"
        and not rng.args
        and cond is not None
        and cond.kind == "literal"
        and cond.value is False
        and e.accu_var not in _ACCUMULATORS
    )


def _expr_size(e: Expr) -> Range | None:
    """``computeExprSize``: the size of a literal, list or map written in the expression."""
    if e.kind == "literal":
        if e.literal_type in ("string", "bytes"):
            return (len(e.value), len(e.value))
        return (1, 1)
    if e.kind == "list":
        return (len(e.args), len(e.args))
    if e.kind == "map":
        return (len(e.args) // 2, len(e.args) // 2)
    return None


def estimate(serialized: bytes, root: Decl) -> int:
    """The estimated worst-case cost of one compiled expression whose ``self`` is ``root``
    (``Env.EstimateCost(...).Max``). Raises :class:`ValueError` with the compile-time error the
    API server reports (``compilation failed: ERROR: <input>:1:5: undefined field 'x'``)."""
    parsed = parse(serialized)
    coster = _Coster(root)
    try:
        return coster.cost(parsed.expr)[1]
    except Refused as exc:
        raise ValueError(f"compilation failed: ERROR: {parsed.location(exc.node)}: {exc}") from None


def cost_error_message(what: str, cost: int, limit: int) -> str:
    """``getCostErrorMessage``."""
    factor = cost / limit
    if factor > 100.0:
        shown = "more than 100x"
    elif factor < 1.5:
        shown = f"{factor:f}x"
    else:
        shown = f"{factor:.1f}x"
    return (
        f"{what} exceeds budget by factor of {shown} (try simplifying the rule, or adding "
        "maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
