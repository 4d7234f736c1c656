"""NetworkPolicy (what a Volcano Job's svc plugin renders) as kube-apiserver v1.36.2 validates it,
pkg/apis/networking/validation/validation.go, read at the tag; and a LimitRange whose bound is
null (Go decodes it as the zero Quantity). make e2e's validation oracle found both accepted."""

from __future__ import annotations

from typing import Any

import pytest

from kubetrain.kube import apiserver


def _issues(obj: dict[str, Any]) -> set[tuple[Any, ...]]:
    return {i.path for i in apiserver.object_issues(obj, (1, 36))}


def policy(**spec: Any) -> dict[str, Any]:
    base = {"podSelector": {"matchLabels": {"volcano.sh/job-name": "j"}}}
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "j", "namespace": "ml"},
        "spec": {**base, **spec},
    }


def test_the_policy_the_svc_plugin_renders_is_accepted() -> None:
    peer = {"podSelector": {"matchLabels": {"volcano.sh/job-name": "j"}}}
    assert _issues(policy(ingress=[{"from": [peer]}], policyTypes=["Ingress"])) == set()


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        ({"podSelector": {"matchLabels": {"volcano.sh/job-namespace": "ml-dev-"}}},
         ("spec", "podSelector", "matchLabels")),
        ({"podSelector": {"matchLabels": {"k": "a" * 64}}}, ("spec", "podSelector", "matchLabels")),
        ({"ingress": [{"from": [{"podSelector": {"matchLabels": {"k": " v"}}}]}]},
         ("spec", "ingress", 0, "from", 0, "podSelector", "matchLabels")),
        ({"ingress": [{"from": [{}]}]}, ("spec", "ingress", 0, "from", 0)),
        ({"egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}]}]},
         ("spec", "egress", 0, "to", 0)),
        ({"egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.0.0.0/8"]}}]}]},
         ("spec", "egress", 0, "to", 0, "ipBlock", "except", 0)),
        ({"egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/40"}}]}]},
         ("spec", "egress", 0, "to", 0, "ipBlock", "cidr")),
        ({"ingress": [{"ports": [{"port": 80, "endPort": 79}]}]},
         ("spec", "ingress", 0, "ports", 0, "endPort")),
        ({"ingress": [{"ports": [{"port": "http", "endPort": 90}]}]},
         ("spec", "ingress", 0, "ports", 0, "endPort")),
        ({"ingress": [{"ports": [{"endPort": 90}]}]}, ("spec", "ingress", 0, "ports", 0, "endPort")),
        ({"ingress": [{"ports": [{"port": 0}]}]}, ("spec", "ingress", 0, "ports", 0, "port")),
        ({"ingress": [{"ports": [{"protocol": "ICMP"}]}]},
         ("spec", "ingress", 0, "ports", 0, "protocol")),
        ({"policyTypes": ["Ingress", "Sideways"]}, ("spec", "policyTypes", 1)),
        ({"policyTypes": ["Ingress", "Egress", "Ingress"]}, ("spec", "policyTypes")),
    ],
)  # fmt: skip
def test_what_validate_network_policy_spec_refuses(spec: dict[str, Any], path: tuple) -> None:
    assert path in _issues(policy(**spec))


def test_a_null_bound_of_a_limit_range_is_zero() -> None:
    limits = {
        "type": "Container",
        "default": {"memory": None},
        "defaultRequest": {"memory": "512Mi"},
        "min": {"memory": "64Mi"},
    }
    obj = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "l", "namespace": "ml"},
        "spec": {"limits": [limits]},
    }
    issues = {(i.path, i.message) for i in apiserver.object_issues(obj, (1, 36))}
    assert (
        ("spec", "limits", 0, "defaultRequest", "memory"),
        "invalid value '512Mi': default request value 512Mi is greater than default limit value 0",
    ) in issues
    assert ("spec", "limits", 0, "default", "memory") in {p for p, _ in issues}
