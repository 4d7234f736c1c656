"""What of ``self`` a CEL rule can read: the value handed to the runtime cut down to it.

The CEL runtime converts every value it is given, all of it, before it evaluates: a rule on a
JobSet's ``spec`` that reads ``startupPolicy`` and whether each replicated job has a
``dependsOn`` was handed six pod templates each time (a sixth of the time a JobSet's checks
took). :func:`demand` reads the rule's parsed expression (:func:`.celcost.parse`, the runtime's
own parse) and says which fields it can reach; :func:`cut` keeps only those of a value.

The reading is conservative: a field is left out only where nothing in the expression can
observe it. Selections from ``self`` (``self.a.b``) and presence tests (``has(self.a.b)``)
name their fields; a comprehension (``all``, ``exists``, ``map``, ``filter``, ``cel.bind``)
over a selected list or map keeps every item (so counts, order and iteration limits are those
of the whole value) and what its variable reads of each; ``size()`` keeps every item or key.
Any other use of a value (compared, passed to a function, indexed, returned) keeps the whole of
it, and an expression of a kind not handled here keeps all of ``self``. A kept item whose
value is never read is replaced by ``null`` (its presence is what is read).

The rules run on the value cut down; where the result is not ``true``, the rule is evaluated
again on the whole value (:func:`kubetrain.kube.apiextensions.validation._rule_failures`), so
a failure, its message and an evaluation error are those of the whole value in any case.
"""

from __future__ import annotations

from typing import Any

from .celcost import Expr, parse

__all__ = ["ALL", "EACH", "PRESENT", "Demand", "below", "cut", "demand", "merge"]

#: The whole value is needed.
ALL = "all"
#: Only that the value is there (a presence test, a count).
PRESENT = "present"
#: The key under which a demand covers every item of a list, or every key of a map.
EACH = "*"

#: ``ALL``, ``PRESENT``, or per field (or ``EACH``) what is needed below it.
Demand = Any


class _Unknown(Exception):
    """An expression this reading does not follow: all of ``self`` is needed."""


#: The variable of a binding that holds no value of the object (an accumulator, a map's key, a
#: list's index).
_LOCAL = None


def demand(serialized: bytes) -> Demand:
    """What of ``self`` the compiled expression ``serialized`` (``Expression.serialize()``) can
    read; :data:`ALL` when it is not known."""
    try:
        expr = parse(serialized).expr
        found: dict[str, Any] = {}
        _visit(expr, {"self": ()}, found)
    except (_Unknown, RecursionError, ValueError, IndexError, KeyError, UnicodeDecodeError):
        return ALL
    return found.get("", PRESENT) if found else PRESENT


def merge(a: Demand, b: Demand) -> Demand:
    """What is needed for both ``a`` and ``b``."""
    if a == ALL or b == ALL:
        return ALL
    if a == PRESENT:
        return b
    if b == PRESENT:
        return a
    out = dict(a)
    for key, need in b.items():
        out[key] = merge(out[key], need) if key in out else need
    return out


def below(need: Demand, key: str) -> Demand | None:
    """What ``need`` (of a mapping) reads of its entry ``key``: that key's demand and the one
    of every key (:data:`EACH`) together; ``None`` when it reads nothing of it."""
    here, each = need.get(key), need.get(EACH)
    if here is None or each is None:
        return each if here is None else here
    return merge(here, each)


def _need(found: dict[str, Any], path: tuple[str, ...], need: Demand) -> None:
    """Record that ``need`` is needed at ``path`` of ``self`` (the root under key ``""``)."""
    tree: Demand = need
    for step in reversed(path):
        tree = {step: tree}
    found[""] = merge(found[""], tree) if "" in found else tree


def _path(e: Expr | None, env: dict[str, tuple[str, ...] | None]) -> tuple[str, ...] | None:
    """The path of ``self`` that ``e`` denotes, when it is a variable bound to one, or a
    selection (not a presence test) from such a path; else ``None``."""
    if e is None:
        return None
    if e.kind == "ident":
        return env.get(e.value) if isinstance(e.value, str) else None
    if e.kind == "select" and not e.test_only and isinstance(e.value, str):
        base = _path(e.operand, env)
        return None if base is None else (*base, e.value)
    return None


def _visit(e: Expr | None, env: dict[str, tuple[str, ...] | None], found: dict[str, Any]) -> None:
    """Record what evaluating ``e`` as a value can read of ``self``."""
    if e is None:
        return
    kind = e.kind
    if kind == "literal":
        return
    if kind in ("ident", "select"):
        path = _path(e, env)
        if path is not None:
            _need(found, path, ALL)
            return
        if kind == "ident":
            return  # a local variable, or a name that is no value of the object
        base = _path(e.operand, env)
        if e.test_only and base is not None:
            _need(found, (*base, e.value), PRESENT)
        else:
            _visit(e.operand, env, found)
        return
    if kind == "call":
        args = [a for a in (e.target, *e.args) if a is not None]
        if e.function == "size" and len(args) == 1 and (path := _path(args[0], env)) is not None:
            _need(found, path, {EACH: PRESENT})
            return
        for arg in args:
            _visit(arg, env, found)
        return
    if kind in ("list", "map"):
        for arg in e.args:
            _visit(arg, env, found)
        return
    if kind == "comprehension":
        _comprehension(e, env, found)
        return
    raise _Unknown(kind)


def _comprehension(e: Expr, env: dict[str, tuple[str, ...] | None], found: dict[str, Any]) -> None:
    inner = dict(env)
    over = _path(e.iter_range, env)
    if over is None:
        _visit(e.iter_range, env, found)
        item: tuple[str, ...] | None = _LOCAL
    else:
        _need(found, over, {EACH: PRESENT})  # every item (or key) is iterated over
        item = (*over, EACH)
    if e.iter_var2:
        # all(i, v, ...) and the like: the index (a list's) or the key (a map's), and the value.
        inner[e.iter_var] = _LOCAL
        inner[e.iter_var2] = item
    elif e.iter_var:
        inner[e.iter_var] = item
    _visit(e.accu_init, env, found)
    if e.accu_var:
        inner[e.accu_var] = _LOCAL
    for part in (e.loop_condition, e.loop_step, e.result):
        _visit(part, inner, found)


def cut(value: Any, need: Demand) -> Any:
    """``value`` with only what ``need`` reads of it (``need`` over CEL's names of fields: the
    value must already be as CEL sees it)."""
    if need == ALL:
        return value
    if need == PRESENT:
        return None
    if type(value) is dict:
        out: dict[str, Any] = {}
        for key, item in value.items():
            if (part := below(need, key)) is not None:
                out[key] = cut(item, part)
        return out
    if type(value) is list:
        each = need.get(EACH)
        if each is None or len(need) > 1:
            return value  # a field selected from a list: an error, which the whole list gives
        return [cut(item, each) for item in value]
    return value
