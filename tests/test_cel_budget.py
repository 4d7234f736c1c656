"""CEL rules as the API server judges them when a CRD is created (types, regex literals, the
estimated cost against the per-rule and per-schema budgets, kubetrain/kube/apiextensions/
celcost.py) and when a custom resource is validated (the runtime's iteration limit, what a
messageExpression may print)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetrain.kube.apiextensions import celcost, compile_schema, validate_crd

RULES = "x-kubernetes-validations"


def crd(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets", "listKind": "WidgetList"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": {"type": "object", **spec}},
                        }
                    },
                }
            ],
        },
    }


SPEC_RULE = "spec.versions.0.schema.openAPIV3Schema.properties.spec.x-kubernetes-validations"


def refusals(spec: dict[str, Any]) -> list[str]:
    return [".".join(map(str, i.path)) + ": " + i.message for i in validate_crd(crd(spec))]


def cost(schema: dict[str, Any], rule: str) -> int:
    node = compile_schema({**schema, RULES: [{"rule": rule}]})
    decl = celcost.decl_of(node, False)
    assert decl is not None
    return celcost.estimate(node.rules[0].program.serialize(), decl)


STRINGS = {"type": "array", "items": {"type": "string"}}


# --- the estimate ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "rule", "expected"),
    [
        # An ident costs 1, a constant 0, a comparison of scalars 1 (cel-go checker/cost.go).
        ({"type": "integer"}, "self > 1", 2),
        # startsWith costs the length of its argument times 0.1, rounded up.
        ({"type": "string"}, "self.startsWith('a')", 2),
        # A string of at most 10 characters is 40 bytes (maxLength x 4, schemas.go): equality
        # against a one-character literal costs ceil(1 x 0.1).
        ({"type": "string", "maxLength": 10}, "self == 'x'", 2),
        # 25 items of at most 40 bytes: each contains() is ceil(4) x ceil(0.8) ...
        (
            {"type": "array", "maxItems": 25, "items": {"type": "string", "maxLength": 10}},
            "self.all(x, x.contains('a string'))",
            202,
        ),
        # ... and without maxLength each item may be the whole 3 MiB request.
        (
            {"type": "array", "maxItems": 25, "items": {"type": "string"}},
            "self.all(x, x.contains('a string'))",
            7_864_427,
        ),
    ],
)
def test_the_estimate_follows_cel_go_and_the_schemas_bounds(
    schema: dict[str, Any], rule: str, expected: int
) -> None:
    assert cost(schema, rule) == expected


def test_a_rule_over_an_unbounded_list_is_refused_with_the_servers_message() -> None:
    found = refusals(
        {"properties": {"names": STRINGS}, RULES: [{"rule": "self.names.all(x, x.contains('a'))"}]}
    )
    assert found[0] == (
        f"{SPEC_RULE}.0.rule: Forbidden: estimated rule cost exceeds budget by factor of more "
        "than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength "
        "where arrays, maps, and strings are declared)"
    )
    assert found[-1].startswith(
        "spec.versions.0.schema.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated "
        "rule cost total for entire OpenAPIv3 schema exceeds budget"
    )
    # Bounded, it is accepted.
    bounded = {"type": "array", "maxItems": 25, "items": {"type": "string", "maxLength": 10}}
    assert (
        refusals(
            {
                "properties": {"names": bounded},
                RULES: [{"rule": "self.names.all(x, x.contains('a'))"}],
            }
        )
        == []
    )


def test_a_message_expression_of_unknown_size_is_refused() -> None:
    # kubernetes/kubernetes#124234: string(int) has no size estimate, so concatenating it is
    # priced at the largest string; the real server refuses this CRD.
    found = refusals(
        {
            "properties": {"attempts": {"type": "integer"}},
            RULES: [
                {
                    "rule": "self.attempts >= 0",
                    "messageExpression": "'invalid attempts: ' + string(self.attempts)",
                }
            ],
        }
    )
    assert found[0].startswith(
        f"{SPEC_RULE}.0.messageExpression: Forbidden: estimated messageExpression cost exceeds "
        "budget by factor of more than 100x"
    )


def test_a_rule_counts_once_per_place_its_node_can_be() -> None:
    # A cheap rule (about 30) on the items of an unbounded list of objects: the item's
    # smallest serialized form ({}) fits about a million times in a request.
    items = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"s": {"type": "string", "maxLength": 64}},
            RULES: [{"rule": "self.s.contains('abc')"}],
        },
    }
    found = refusals({"properties": {"list": items}})
    assert any("estimated rule cost exceeds budget" in f for f in found), found
    assert refusals({"properties": {"list": {**items, "maxItems": 100}}}) == []


def test_doubling_a_string_with_bind_is_refused_before_anything_evaluates() -> None:
    """``cel.bind`` is not in Kubernetes' base CEL environment (no version declares the
    bindings extension, k8s.io/apiserver v0.36.2 environment/base.go): the chain is refused as
    the API server refuses it, at compile time, and never evaluates."""
    expression = "self.s"
    for i in range(28):
        expression = f"cel.bind(x{i}, {expression}, x{i} + x{i})"
    spec = {
        "properties": {"s": {"type": "string", "maxLength": 10}},
        RULES: [{"rule": f"size({expression}) > 0"}],
    }
    assert any("undeclared reference to 'cel'" in f for f in refusals(spec)), refusals(spec)


def test_nested_comprehensions_are_refused_for_their_cost() -> None:
    nested = "self.l.all(a, self.l.all(b, self.l.all(c, self.l.all(d, a + b + c + d != ''))))"
    spec = {
        "properties": {
            "l": {"type": "array", "maxItems": 1000, "items": {"type": "string", "maxLength": 64}}
        },
        RULES: [{"rule": nested}],
    }
    assert any("estimated rule cost exceeds budget" in f for f in refusals(spec)), refusals(spec)


# --- compile-time refusals -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("self.nosuch == 1", "compilation failed: ERROR: <input>:1:5: undefined field 'nosuch'"),
        # Only a resource's root shows metadata.
        ("self.metadata.name == 'x'", "undefined field 'metadata'"),
        ("has(self.nosuch)", "undefined field 'nosuch'"),
        ("self.a.matches('(?=x)')", "compilation failed: ERROR: <input>:1:16: invalid matches"),
    ],
)
def test_compile_time_refusals(rule: str, expected: str) -> None:
    found = refusals(
        {"properties": {"a": {"type": "string", "maxLength": 5}}, RULES: [{"rule": rule}]}
    )
    assert len(found) == 1 and found[0].startswith(f"{SPEC_RULE}.0.rule: Invalid value: ")
    assert expected in found[0]


def test_the_root_shows_name_and_a_reserved_word_reads_its_escaped_property() -> None:
    definition = crd({"properties": {"namespace": {"type": "string", "maxLength": 5}}})
    schema = definition["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema[RULES] = [{"rule": "self.metadata.name != self.spec.namespace"}]
    assert validate_crd(definition) == []


# --- evaluation --------------------------------------------------------------------------------


LOGIN_CRD = crd(
    {
        "properties": {
            "password": {"type": "string", "maxLength": 64},
            "replicas": {"type": "integer"},
        },
        RULES: [
            {
                "rule": "size(self.password) > 20",
                "messageExpression": "'password ' + self.password + ' is too short'",
            },
            {
                "rule": "self.replicas < 3",
                "messageExpression": "'at most 2 replicas' + (self.replicas > 9 ? '!' : '')",
            },
        ],
    }
)


def test_a_message_expression_never_prints_the_objects_values(tmp_path: Path, run) -> None:
    login = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "l", "namespace": "ml"},
        "spec": {"password": "hunter2-the-secret", "replicas": 5},
    }
    (tmp_path / "all.yaml").write_text(yaml.safe_dump_all([LOGIN_CRD, login]))
    for output in ("text", "json", "junit"):
        done = run("validate", "all.yaml", "--output", output, cwd=tmp_path)
        assert done.exit_code == 1
        assert "hunter2" not in done.stdout + done.stderr
    text = run("validate", "all.yaml", cwd=tmp_path).stdout
    assert "failed rule: size(self.password) > 20 (the rule's messageExpression prints" in text
    # A message that quotes nothing of the object is shown as the server shows it.
    assert 'spec: Invalid value: "object": at most 2 replicas' in text


def test_a_rule_past_the_runtimes_iteration_limit_is_a_warning(tmp_path: Path, run) -> None:
    definition = crd(
        {
            "properties": {
                "nums": {"type": "array", "maxItems": 20_000, "items": {"type": "integer"}}
            },
            RULES: [{"rule": "self.nums.all(x, x >= 0)"}],
        }
    )
    long = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ml"},
        "spec": {"nums": list(range(15_000))},
    }
    (tmp_path / "all.yaml").write_text(yaml.safe_dump_all([definition, long]))
    done = run("validate", "all.yaml", cwd=tmp_path)
    assert done.exit_code == 0, done.stdout
    assert "warning: not checked: the rule needs more than the 10,000 iterations" in done.stdout
    assert run("validate", "all.yaml", "--strict", cwd=tmp_path).exit_code == 1


# --- property: any rule ends in a verdict, within bounds ---------------------------------------

_ATOMS = st.sampled_from(["self.s", "self.n", "self.l", "'abc'", "1", "self.l[0]", "x"])


def _expression(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return _ATOMS
    inner = _expression(depth - 1)
    return st.one_of(
        inner,
        st.tuples(inner, inner).map(lambda p: f"({p[0]} + {p[1]})"),
        st.tuples(inner, inner).map(lambda p: f"[{p[0]}].map(x, {p[1]})"),
        inner.map(lambda e: f"self.l.all(x, {e} == {e})"),
        inner.map(lambda e: f"self.l.map(x, {e})"),
        inner.map(lambda e: f"size({e})"),
        inner.map(lambda e: f"{e}.contains('a')"),
    )


@settings(max_examples=150, deadline=None)
@given(_expression(4))
def test_any_rule_is_accepted_or_refused_with_a_message(expression: str) -> None:
    spec = {
        "properties": {
            "s": {"type": "string", "maxLength": 8},
            "n": {"type": "integer"},
            "l": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 8}},
        },
        RULES: [{"rule": f"size(string({expression})) >= 0"}],
    }
    found = refusals(spec)
    assert all(": " in f for f in found)
    if not found:
        # Accepted: then its estimated cost is within the budget, so evaluating it is bounded.
        assert (
            cost({"type": "object", **spec}, spec[RULES][0]["rule"]) <= celcost.PER_EXPRESSION_LIMIT
        )


@settings(max_examples=60, deadline=None)
@given(
    st.text(
        alphabet=st.characters(codec="ascii", categories=["L", "N", "P"]), min_size=3, max_size=40
    ),
    st.sampled_from(
        [
            "'bad: ' + self.password",
            "self.password + ' is wrong'",
            "'x' + self.password.substring(1)",
            "self.password.upperAscii()",
            "'%s!'.format([self.password])",
        ]
    ),
)
def test_no_message_expression_prints_a_value_of_the_object(secret: str, expression: str) -> None:
    from kubetrain.kube.apiextensions import validate_custom_resource

    node = compile_schema(
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {"password": {"type": "string", "maxLength": 64}},
                    RULES: [{"rule": "size(self.password) > 100", "messageExpression": expression}],
                }
            },
        }
    )
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ml"},
        "spec": {"password": secret},
    }
    issues = validate_custom_resource(node, obj)
    assert issues, "the rule fails: size is at most 40"
    for issue in issues:
        # Not the value, nor any transformation of it (a substring, its upper case).
        assert secret not in issue.message
        assert "messageExpression prints a value of the object" in issue.message
