"""CEL rules run on what of ``self`` they can read (kubetrain.kube.apiextensions.celdemand).

The reading of an expression says which fields it can reach; the value handed to the runtime
keeps only those. Every rule of every real CRD here, and rules written to reach each kind of
expression, give the same result on the value cut down as on the whole value: the same value,
the same type, the same error.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetrain.kube.apiextensions import cel, celdemand
from kubetrain.kube.apiextensions.celdemand import ALL, EACH, PRESENT, cut, demand
from kubetrain.kube.apiextensions.definition import crd_versions
from kubetrain.kube.apiextensions.schema import Node
from kubetrain.kube.apiextensions.validation import _cel_value

from conftest import UPSTREAM_CRDS, needs_upstream_crds

JOBSET_RULE = (
    "!(has(self.startupPolicy) && self.startupPolicy.startupPolicyOrder == 'InOrder' && "
    "self.replicatedJobs.exists(x, has(x.dependsOn)))"
)


def _demand(rule: str) -> Any:
    return demand(cel._env().compile(rule).serialize())


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (
            JOBSET_RULE,
            {
                "startupPolicy": {"startupPolicyOrder": ALL},
                "replicatedJobs": {EACH: {"dependsOn": PRESENT}},
            },
        ),
        ("has(self.a)", {"a": PRESENT}),
        ("self.a.b == 'x'", {"a": {"b": ALL}}),
        ("size(self.items) <= 3", {"items": {EACH: PRESENT}}),
        ("self.items.size() <= 3", {"items": {EACH: PRESENT}}),
        ("self.items.all(i, i.name != '')", {"items": {EACH: {"name": ALL}}}),
        ("self.items.map(i, i.port).exists(p, p > 80)", {"items": {EACH: {"port": ALL}}}),
        ("cel.bind(x, self.a, x.b == 1)", {"a": ALL}),
        ("self.a == self.b", {"a": ALL, "b": ALL}),
        ("self.x[0] == 1", {"x": ALL}),
        ("self == {}", ALL),
        ("type(self) == map", ALL),
        ("true", PRESENT),
    ],
)
def test_what_a_rule_reads(rule: str, expected: Any) -> None:
    assert _demand(rule) == expected


def test_cut_keeps_what_is_read_and_every_item() -> None:
    spec = {
        "startupPolicy": {"startupPolicyOrder": "AnyOrder", "other": 1},
        "replicatedJobs": [{"name": "a", "template": {"big": 1}}, {"dependsOn": [], "x": 2}],
        "network": {"enableDNSHostnames": True},
    }
    assert cut(spec, _demand(JOBSET_RULE)) == {
        "startupPolicy": {"startupPolicyOrder": "AnyOrder"},
        "replicatedJobs": [{}, {"dependsOn": None}],
    }
    # A field selected from a list (an error) keeps the list whole, to give the same error.
    assert cut({"a": [1, 2]}, {"a": {"b": PRESENT}}) == {"a": [1, 2]}
    assert cut({"a": 1}, ALL) == {"a": 1} and cut({"a": 1}, PRESENT) is None


# --- every rule, on the whole value and on the value cut down ----------------------------------


def _crd_nodes() -> Iterator[tuple[str, Node]]:
    for path in sorted(UPSTREAM_CRDS.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            for version in crd_versions(doc):
                yield from _nodes(f"{path.name}/{version.version}", version.node, ())


def _nodes(where: str, node: Node, path: tuple[Any, ...]) -> Iterator[tuple[str, Node]]:
    if node.create_rules:
        yield f"{where}:{'.'.join(map(str, path))}", node
    for key, child in node.properties.items():
        yield from _nodes(where, child, (*path, key))
    for key, child in (("*", node.additional), ("[]", node.items)):
        if child is not None:
            yield from _nodes(where, child, (*path, key))


_RULED = list(_crd_nodes()) if UPSTREAM_CRDS.is_dir() else []
_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _names(node: Node) -> list[str]:
    """Field names a value for ``node`` is drawn from: the schema's, and every word of its
    rules (so selections find what they select)."""
    words = {w for r in node.create_rules for w in _WORDS.findall(r.rule)}
    return sorted(words | set(node.properties) | {"x", "name"})


def _values(names: list[str]) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 3),
        st.sampled_from(["", "InOrder", "AnyOrder", "a", "x", "Always", "default"]),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.sampled_from(names), inner, max_size=4),
        ),
        max_leaves=12,
    )


def _result(program: Any, value: Any) -> tuple[str, str]:
    try:
        out = program.eval(data={"self": value})
    except RuntimeError as exc:
        return "raised", str(exc)
    return out.type().name(), str(out.value())


@needs_upstream_crds
def test_the_real_crds_have_rules_read_in_part() -> None:
    # The loop below runs over real rules, and some of them are cut down (not all of self).
    assert len(_RULED) > 10
    assert any(node.create_demand not in (ALL, PRESENT) for _, node in _RULED)


@needs_upstream_crds
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_rule_gives_the_same_result_on_the_value_cut_down(data: st.DataObject) -> None:
    where, node = data.draw(st.sampled_from(_RULED), label="node")
    names = _names(node)
    # A value of the node's type most of the time, anything some of the time.
    value = data.draw(
        st.one_of(
            st.dictionaries(st.sampled_from(names), _values(names), max_size=6), _values(names)
        ),
        label="value",
    )
    whole = _cel_value(node, value)
    part = _cel_value(node, value, node.create_demand)
    checked = 0
    for rule in node.create_rules:
        if rule.program is None:
            continue
        checked += 1
        assert _result(rule.program, part) == _result(rule.program, whole), (where, rule.rule)
    assert checked or all(r.program is None for r in node.create_rules)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_written_rules_give_the_same_result_on_the_value_cut_down(data: st.DataObject) -> None:
    rules = [
        JOBSET_RULE,
        "has(self.a) && self.a.b == 'x'",
        "size(self.items) <= 2",
        "self.items.all(i, has(i.name) && i.name != '')",
        "self.items.map(i, i.x).exists(p, p == 1)",
        "self.items.filter(i, has(i.x)).size() == 1",
        "cel.bind(v, self.a, has(v.b))",
        "self.a.exists_one(k, k == 'name')",
        "!has(self.x) || self.x.name.startsWith('a')",
    ]
    rule = data.draw(st.sampled_from(rules), label="rule")
    program = cel._env().compile(rule)
    need = demand(program.serialize())
    names = ["a", "b", "items", "name", "x", "startupPolicy", "startupPolicyOrder",
             "replicatedJobs", "dependsOn"]  # fmt: skip
    value = data.draw(st.dictionaries(st.sampled_from(names), _values(names), max_size=6))
    assert _result(program, cut(value, need)) == _result(program, value)


def test_a_failing_rule_is_judged_on_the_whole_value() -> None:
    # Cut down, a rule cannot say why it fails: its messageExpression may read what the rule
    # does not (here the size of `big`). It is evaluated again on the whole value, whose
    # failure and message are what is reported.
    from kubetrain.kube.apiextensions.schema import compile_schema
    from kubetrain.kube.apiextensions.validation import _rule_failures

    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "big": {"type": "object",
                       "x-kubernetes-preserve-unknown-fields": True}},
        "x-kubernetes-validations": [
            {"rule": "self.a != 'no'", "messageExpression": "'size ' + string(size(self.big))"}
        ],
    }  # fmt: skip
    node = compile_schema(schema)
    assert node.create_demand == {"a": ALL}
    failures = list(_rule_failures(node, {"a": "no", "big": {"y": 1, "z": 2}}, ("spec",)))
    assert [(f.path, f.message) for f in failures] == [
        (("spec",), 'Invalid value: "object": size 2')
    ]
    assert list(_rule_failures(node, {"a": "ok", "big": {"y": 1}}, ())) == []


def test_demand_of_what_cannot_be_read_is_all() -> None:
    assert demand(b"\xff\xff") == ALL
    assert celdemand.merge({"a": PRESENT}, {"a": {"b": ALL}}) == {"a": {"b": ALL}}
    assert celdemand.merge({"a": PRESENT}, ALL) == ALL


_ESCAPED_RULES = [
    "self.x__dash__y == 'a'",
    "has(self.__namespace__) && self.namespace != ''",
    "self.a__dot__b.all(i, !has(i.x__dash__y) || i.x__dash__y == 1)",
    "size(self.a__dot__b) <= 2",
    "has(self.plain) && self.plain.m.exists(k, k == 'a')",
]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_escaped_names_are_cut_as_cel_names_them(data: st.DataObject) -> None:
    """A schema whose property names CEL spells otherwise (``x-y`` as ``x__dash__y``, a
    reserved ``namespace`` as ``__namespace__`` too): the value as CEL sees it, cut down to
    what the rules read, gives each rule the result of the whole value as CEL sees it."""
    from kubetrain.kube.apiextensions.schema import compile_schema

    item = {"type": "object", "properties": {"x-y": {"type": "integer"}, "z": {"type": "string"}}}
    schema = {
        "type": "object",
        "properties": {
            "x-y": {"type": "string"},
            "namespace": {"type": "string"},
            "a.b": {"type": "array", "items": item},
            "plain": {"type": "object", "properties": {"m": {
                "type": "object", "additionalProperties": {"type": "string"}}}},
        },
        "x-kubernetes-validations": [{"rule": r} for r in _ESCAPED_RULES],
    }  # fmt: skip
    node = compile_schema(schema)
    assert node.subtree_escapes and node.create_demand not in (ALL, PRESENT)
    scalars = st.one_of(st.none(), st.integers(0, 2), st.sampled_from(["", "a", "b"]))
    items = st.lists(st.dictionaries(st.sampled_from(["x-y", "z", "q"]), scalars, max_size=3),
                     max_size=3)  # fmt: skip
    value = data.draw(
        st.fixed_dictionaries(
            {},
            optional={
                "x-y": scalars,
                "namespace": scalars,
                "a.b": items,
                "plain": st.fixed_dictionaries(
                    {}, optional={"m": st.dictionaries(st.sampled_from("ab"), scalars)}
                ),
                "other": scalars,
            },
        )
    )
    whole = _cel_value(node, value)
    part = _cel_value(node, value, node.create_demand)
    checked = 0
    for rule in node.create_rules:
        assert rule.program is not None, rule.rule
        checked += 1
        assert _result(rule.program, part) == _result(rule.program, whole), rule.rule
    assert checked == len(_ESCAPED_RULES)
