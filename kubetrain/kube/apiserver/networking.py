"""networking.k8s.io/v1 NetworkPolicy, as kube-apiserver v1.36.2 validates it
(``pkg/apis/networking/validation/validation.go``: ValidateNetworkPolicy,
ValidateNetworkPolicySpec, ValidateNetworkPolicyPort, ValidateNetworkPolicyPeer,
ValidateIPBlock). What kubetrain renders one for: a Volcano Job's svc plugin."""

from __future__ import annotations

import ipaddress
from typing import Any

from .field import Errors, Path
from .meta import validate_label_selector
from .pods import validate_port_number_or_name
from .values import as_int, as_list, as_map, as_str

__all__ = ["validate_network_policy"]

_PROTOCOLS = ("TCP", "UDP", "SCTP")
_POLICY_TYPES = ("Ingress", "Egress")


def _network(value: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    # netutils.ParseCIDRSloppy: host bits may be set (10.0.0.1/8).
    try:
        return ipaddress.ip_network(value.strip(), strict=False)
    except ValueError:
        return None


def _ip_block(errs: Errors, block: dict[str, Any], path: Path) -> None:
    """ValidateIPBlock: a CIDR, and each exception a strict subset of it."""
    cidr = as_str(block.get("cidr"))
    if not cidr:
        errs.required((*path, "cidr"))
        return
    net = _network(cidr)
    if net is None:
        errs.invalid((*path, "cidr"), cidr, "must be a valid CIDR value, (e.g. 10.9.8.0/24)")
        return
    for i, raw in enumerate(as_list(block.get("except"))):
        text = as_str(raw)
        sub = _network(text)
        if sub is None:
            errs.invalid((*path, "except", i), text, "must be a valid CIDR value")
            continue
        inside = sub.version == net.version and sub.network_address in net
        if not inside or net.prefixlen >= sub.prefixlen:
            errs.invalid((*path, "except", i), text, "must be a strict subset of `cidr`")


def _peer(errs: Errors, peer: dict[str, Any], path: Path) -> None:
    """ValidateNetworkPolicyPeer: a pod or namespace selector (or both), or an ipBlock alone."""
    count = 0
    for key in ("podSelector", "namespaceSelector"):
        if peer.get(key) is not None:
            count += 1
            validate_label_selector(errs, peer[key], (*path, key))
    if peer.get("ipBlock") is not None:
        count += 1
        _ip_block(errs, as_map(peer["ipBlock"]), (*path, "ipBlock"))
    if count == 0:
        errs.required(path, "must specify a peer")
    elif count > 1 and peer.get("ipBlock") is not None:
        errs.forbidden(path, "may not specify both ipBlock and another peer")


def _port(errs: Errors, port: dict[str, Any], path: Path) -> None:
    """ValidateNetworkPolicyPort: the protocol; a number (with an endPort at least it) or a
    named port (without an endPort)."""
    protocol = port.get("protocol")
    if protocol is not None and protocol not in _PROTOCOLS:
        errs.not_supported((*path, "protocol"), protocol, _PROTOCOLS)
    number, end = port.get("port"), as_int(port.get("endPort"))
    if number is None:
        if end is not None:
            errs.invalid((*path, "endPort"), end,
                         "may not be specified when `port` is not specified")  # fmt: skip
        return
    if isinstance(number, str):
        if end is not None:
            errs.invalid((*path, "endPort"), end,
                         "may not be specified when `port` is non-numeric")  # fmt: skip
        validate_port_number_or_name(errs, number, (*path, "port"))
        return
    validate_port_number_or_name(errs, number, (*path, "port"))
    if end is not None and isinstance(number, int):
        if end < number:
            errs.invalid((*path, "endPort"), number, "must be greater than or equal to `port`")
        validate_port_number_or_name(errs, end, (*path, "endPort"))


def validate_network_policy(errs: Errors, obj: dict[str, Any]) -> None:
    """ValidateNetworkPolicySpec: the pod selector, each rule's ports and peers, and at most
    the two policy types."""
    spec, base = as_map(obj.get("spec")), ("spec",)
    validate_label_selector(errs, spec.get("podSelector") or {}, (*base, "podSelector"))
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(as_list(spec.get(direction))):
            rule, rpath = as_map(rule), (*base, direction, i)
            for j, port in enumerate(as_list(rule.get("ports"))):
                _port(errs, as_map(port), (*rpath, "ports", j))
            for j, peer in enumerate(as_list(rule.get(peers))):
                _peer(errs, as_map(peer), (*rpath, peers, j))
    types = as_list(spec.get("policyTypes"))
    if len(types) > len(_POLICY_TYPES):
        errs.invalid((*base, "policyTypes"), types, "may not specify more than two policyTypes")
        return
    for i, kind in enumerate(types):
        if kind not in _POLICY_TYPES:
            errs.not_supported((*base, "policyTypes", i), kind, _POLICY_TYPES)
