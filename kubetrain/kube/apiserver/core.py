"""The core/v1 kinds besides pods (upstream ``pkg/apis/core/validation``: ``ValidateService``,
``ValidateSecret``, ``ValidateConfigMap``, ``ValidateServiceAccount``, ``ValidateNamespace``,
``ValidatePersistentVolumeClaim``, ``ValidatePodTemplate``,
``ValidateReplicationController``)."""

from __future__ import annotations

import binascii
import ipaddress
import json
import re
import sys
from base64 import b64decode
from typing import Any

from ..names import DNS1123_LABEL, check_config_map_key, check_label_key
from .features import since
from .field import Errors, Path
from .meta import dns_subdomain, validate_labels
from .pods import validate_pod, validate_pod_template_spec, validate_port_number_or_name
from .values import as_int, as_list, as_map, as_str
from .volumes import pvc_prepared_for_create, validate_pvc_spec

__all__ = [
    "always_restarts",
    "nonnegative",
    "pod_security_label_problems",
    "validate_config_map",
    "validate_namespace",
    "validate_pod",
    "validate_pod_template",
    "validate_pvc",
    "validate_replication_controller",
    "validate_secret",
    "validate_service",
]

#: Upstream ``core.MaxSecretSize`` (also the limit of a ConfigMap's data).
MAX_DATA_SIZE = 1024 * 1024
_PROTOCOLS = {"TCP", "UDP", "SCTP"}
_SERVICE_TYPES = {"ClusterIP", "NodePort", "LoadBalancer", "ExternalName"}
#: The API server's default --service-node-port-range (a cluster can choose another).
_NODE_PORTS = (30000, 32767)
_TOPOLOGY_MODE = "service.kubernetes.io/topology-mode"
_TOPOLOGY_HINTS = "service.kubernetes.io/topology-aware-hints"
_SOURCE_RANGES = "service.beta.kubernetes.io/load-balancer-source-ranges"
_STANDARD_NAMESPACE_FINALIZERS = {"kubernetes"}


def _ip(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def _cidr_ok(value: str) -> bool:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    return True


def _service_port(
    errs: Errors, port: dict[str, Any], require_name: bool, names: set[str], path: Path
) -> None:
    # Upstream validateServicePort, after SetDefaults_Service (protocol TCP; a targetPort of 0
    # or "" becomes the port).
    name = as_str(port.get("name"))
    if require_name and not name:
        errs.required((*path, "name"))
    elif name:
        errs.problem((*path, "name"), DNS1123_LABEL.check(name))
        if name in names:
            errs.duplicate((*path, "name"), name)
        names.add(name)
    number = as_int(port.get("port"))
    if number is not None and not 1 <= number <= 65535:
        errs.invalid((*path, "port"), number, "must be between 1 and 65535, inclusive")
    protocol = port.get("protocol") or "TCP"
    if isinstance(protocol, str) and protocol not in _PROTOCOLS:
        errs.not_supported((*path, "protocol"), protocol, _PROTOCOLS)
    target = port.get("targetPort")
    if target in (None, 0, ""):
        target = port.get("port")
    if isinstance(target, str | int) and not isinstance(target, bool):
        validate_port_number_or_name(errs, target, (*path, "targetPort"))
    app = port.get("appProtocol")
    if isinstance(app, str):
        errs.problem((*path, "appProtocol"), check_label_key(app))


def _cluster_ips(errs: Errors, spec: dict[str, Any], ips: list[Any], headless: bool) -> None:
    # Upstream ValidateServiceClusterIPsRelatedFields.
    path = ("spec", "clusterIPs")
    seen: set[str] = set()
    for i, family in enumerate(as_list(spec.get("ipFamilies"))):
        if family not in ("IPv4", "IPv6"):
            errs.not_supported(("spec", "ipFamilies", i), family, ["IPv4", "IPv6"])
        if family in seen:
            errs.duplicate(("spec", "ipFamilies", i), family)
        seen.add(as_str(family))
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in ("SingleStack", "PreferDualStack", "RequireDualStack"):
        errs.not_supported(
            ("spec", "ipFamilyPolicy"),
            policy,
            ["PreferDualStack", "RequireDualStack", "SingleStack"],
        )
    bad = False
    for i, value in enumerate(ips):
        if i == 0 and value == "None":
            if len(ips) > 1:
                bad = True
                errs.invalid(path, ips, "'None' must be the first and only value")
            continue
        if _ip(as_str(value)) is None:
            bad = True
            errs.invalid((*path, i), value, "must be a valid IP address")
    if len(ips) > 2:
        errs.invalid(path, ips, "may only hold up to 2 values")
    if bad:
        return
    if len(ips) > 1:
        versions = {ip.version for ip in (_ip(as_str(v)) for v in ips) if ip is not None}
        if len(versions) != len(ips):
            errs.invalid(path, ips, "may specify no more than one IP for each IP family")
    families = as_list(spec.get("ipFamilies"))
    if not headless:
        for i, (value, family) in enumerate(zip(ips, families, strict=False)):
            ip = _ip(as_str(value))
            if ip is not None and family == "IPv4" and ip.version == 6:
                errs.invalid(
                    (*path, i), value, f"expected an IPv4 value as indicated by `ipFamilies[{i}]`"
                )
            if ip is not None and family == "IPv6" and ip.version == 4:
                errs.invalid(
                    (*path, i), value, f"expected an IPv6 value as indicated by `ipFamilies[{i}]`"
                )


def validate_service(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidateService`` on create, after ``SetDefaults_Service`` and the
    strategy's ``PrepareForCreate`` (clusterIP and clusterIPs made consistent)."""
    meta, spec = as_map(obj.get("metadata")), as_map(obj.get("spec"))
    annotations = as_map(meta.get("annotations"))
    if (
        _TOPOLOGY_MODE in annotations
        and _TOPOLOGY_HINTS in annotations
        and annotations[_TOPOLOGY_MODE] != annotations[_TOPOLOGY_HINTS]
    ):
        errs.invalid(
            ("metadata", "annotations", _TOPOLOGY_MODE),
            annotations[_TOPOLOGY_MODE],
            f"must match annotations[{_TOPOLOGY_HINTS}] when both are specified",
        )
    kind = spec.get("type") or "ClusterIP"
    ips = as_list(spec.get("clusterIPs"))
    cluster_ip = as_str(spec.get("clusterIP"))
    if not ips and cluster_ip:
        ips = [cluster_ip]  # PrepareForCreate: clusterIPs from clusterIP
    elif ips and not cluster_ip:
        cluster_ip = as_str(ips[0])
    headless = len(ips) == 1 and ips[0] == "None"
    ports = [as_map(p) for p in as_list(spec.get("ports"))]
    if not ports and not headless and kind != "ExternalName":
        errs.required(("spec", "ports"))
    if kind in ("LoadBalancer", "NodePort") and headless:
        errs.invalid(
            ("spec", "clusterIPs", 0), "None", f"may not be set to 'None' for {kind} services"
        )
    if kind == "ExternalName":
        if ips:
            errs.forbidden(("spec", "clusterIPs"), "may not be set for ExternalName services")
        if as_list(spec.get("ipFamilies")):
            errs.forbidden(("spec", "ipFamilies"), "may not be set for ExternalName services")
        if spec.get("ipFamilyPolicy") is not None:
            errs.forbidden(("spec", "ipFamilyPolicy"), "may not be set for ExternalName services")
        cname = as_str(spec.get("externalName")).removesuffix(".")
        if cname:
            errs.problem(("spec", "externalName"), dns_subdomain(cname))
        else:
            errs.required(("spec", "externalName"))
    names: set[str] = set()
    for i, port in enumerate(ports):
        _service_port(errs, port, len(ports) > 1, names, ("spec", "ports", i))
    if spec.get("selector") is not None:
        validate_labels(errs, spec["selector"], ("spec", "selector"))
    affinity = spec.get("sessionAffinity") or "None"
    if affinity not in ("ClientIP", "None"):
        errs.not_supported(("spec", "sessionAffinity"), affinity, ["ClientIP", "None"])
    config = spec.get("sessionAffinityConfig")
    if affinity == "ClientIP" and config is not None:
        # SetDefaults_Service sets a missing config (timeoutSeconds 10800).
        client = as_map(config).get("clientIP")
        cpath = ("spec", "sessionAffinityConfig", "clientIP")
        timeout = as_int(as_map(client).get("timeoutSeconds"))
        if client is None:
            errs.required(cpath, "when session affinity type is ClientIP")
        elif timeout is not None and not 0 < timeout <= 86400:
            errs.invalid(
                (*cpath, "timeoutSeconds"), timeout, "must be greater than 0 and at most 86400"
            )
    elif affinity == "None" and config is not None:
        errs.forbidden(
            ("spec", "sessionAffinityConfig"), "must not be set when session affinity is None"
        )
    if kind != "ExternalName":
        _cluster_ips(errs, spec, ips, headless)
    for i, value in enumerate(as_list(spec.get("externalIPs"))):
        ip = _ip(as_str(value))
        ipath = ("spec", "externalIPs", i)
        if ip is None:
            errs.invalid(ipath, value, "must be a valid IP address")
        elif (
            ip.is_unspecified
            or ip.is_loopback
            or ip.is_link_local
            or (ip.is_multicast and ip.version == 4 and ip in ipaddress.ip_network("224.0.0.0/24"))
        ):
            errs.invalid(ipath, value, "may not be unspecified, loopback or link-local")
    if not isinstance(kind, str) or kind not in _SERVICE_TYPES:
        errs.not_supported(("spec", "type"), kind, _SERVICE_TYPES)
    node_ports: set[tuple[str, int]] = set()
    port_keys: set[tuple[str, int]] = set()
    for i, port in enumerate(ports):
        protocol, node_port = as_str(port.get("protocol")) or "TCP", as_int(port.get("nodePort"))
        if node_port:
            if kind == "ClusterIP":
                errs.forbidden(
                    ("spec", "ports", i, "nodePort"), "may not be used when `type` is 'ClusterIP'"
                )
            elif kind in ("NodePort", "LoadBalancer") and not (
                _NODE_PORTS[0] <= node_port <= _NODE_PORTS[1]
            ):
                errs.invalid(
                    ("spec", "ports", i, "nodePort"),
                    node_port,
                    "is not in the default node port range, 30000-32767",
                )
            if (protocol, node_port) in node_ports:
                errs.duplicate(("spec", "ports", i, "nodePort"), node_port)
            node_ports.add((protocol, node_port))
        key = (protocol, as_int(port.get("port")) or 0)
        if key in port_keys:
            errs.duplicate(("spec", "ports", i), f"{key[1]}/{key[0]}")
        port_keys.add(key)
    ranges = as_list(spec.get("loadBalancerSourceRanges"))
    if ranges:
        rpath = ("spec", "LoadBalancerSourceRanges")  # upstream's spelling
        if kind != "LoadBalancer":
            errs.forbidden(rpath, "may only be used when `type` is 'LoadBalancer'")
        for i, value in enumerate(ranges):
            if not _cidr_ok(as_str(value).strip()):
                errs.invalid((*rpath, i), value, "must be a valid CIDR value (e.g. 10.9.8.0/24)")
    elif _SOURCE_RANGES in annotations:
        apath = ("metadata", "annotations", _SOURCE_RANGES)
        if kind != "LoadBalancer":
            errs.forbidden(apath, "may only be used when `type` is 'LoadBalancer'")
        for value in as_str(annotations[_SOURCE_RANGES]).strip().split(","):
            if value.strip() and not _cidr_ok(value.strip()):
                errs.invalid(apath, value, "must be a valid CIDR value (e.g. 10.9.8.0/24)")
    if spec.get("allocateLoadBalancerNodePorts") is not None and kind != "LoadBalancer":
        errs.forbidden(
            ("spec", "allocateLoadBalancerNodePorts"),
            "may only be used when `type` is 'LoadBalancer'",
        )
    lb_class = spec.get("loadBalancerClass")
    if lb_class is not None:
        if kind == "LoadBalancer":
            errs.problem(("spec", "loadBalancerClass"), check_label_key(as_str(lb_class)))
        else:
            errs.forbidden(
                ("spec", "loadBalancerClass"), "may only be used when `type` is 'LoadBalancer'"
            )
    external = kind in ("NodePort", "LoadBalancer") or (
        kind == "ClusterIP" and as_list(spec.get("externalIPs"))
    )
    policy = spec.get("externalTrafficPolicy")
    if not external and policy:
        errs.invalid(
            ("spec", "externalTrafficPolicy"),
            policy,
            "may only be set for externally-accessible services",
        )
    elif external and policy and policy not in ("Cluster", "Local"):
        errs.not_supported(("spec", "externalTrafficPolicy"), policy, ["Cluster", "Local"])
    health = as_int(spec.get("healthCheckNodePort"))
    if health and not (kind == "LoadBalancer" and policy == "Local"):
        errs.invalid(
            ("spec", "healthCheckNodePort"),
            health,
            "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
        )
    elif health is not None and not 1 <= health <= 65535:
        errs.invalid(
            ("spec", "healthCheckNodePort"), health, "must be between 1 and 65535, inclusive"
        )
    internal = spec.get("internalTrafficPolicy")
    if internal is not None and internal not in ("Cluster", "Local"):
        errs.not_supported(("spec", "internalTrafficPolicy"), internal, ["Cluster", "Local"])
    distribution = spec.get("trafficDistribution")
    if distribution is not None:
        allowed = ["PreferClose"]
        if since(errs.version, "PreferSameTrafficDistribution"):
            allowed += ["PreferSameNode", "PreferSameZone"]
        if distribution not in allowed:
            errs.not_supported(("spec", "trafficDistribution"), distribution, allowed)


def validate_secret(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidateSecret``: data keys, 1 MiB of data, and each type's required keys.
    ``stringData`` is merged into ``data`` first, as the server does. No value is ever quoted."""
    data = {str(k): v for k, v in as_map(obj.get("data")).items()}
    size = 0
    decoded: dict[str, bytes] = {}
    for key, value in data.items():
        try:
            decoded[key] = b64decode(as_str(value), validate=True)
        except (binascii.Error, ValueError):
            errs.add(("data", key), "must be base64-encoded (the value is not shown)")
    for key, value in as_map(obj.get("stringData")).items():
        decoded[str(key)] = as_str(value).encode()
        data[str(key)] = value
    for key, value in decoded.items():
        where = "stringData" if key in as_map(obj.get("stringData")) else "data"
        errs.problem((where, key), check_config_map_key(key))
        size += len(value)
    if size > MAX_DATA_SIZE:
        errs.too_long(("data",), MAX_DATA_SIZE)
    kind = obj.get("type") or "Opaque"  # SetDefaults_Secret
    annotations = as_map(as_map(obj.get("metadata")).get("annotations"))
    if kind == "kubernetes.io/service-account-token":
        if not as_str(annotations.get("kubernetes.io/service-account.name")):
            errs.required(("metadata", "annotations", "kubernetes.io/service-account.name"))
    elif kind in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        key = ".dockercfg" if kind.endswith("dockercfg") else ".dockerconfigjson"
        if key not in decoded:
            errs.required(("data", key))
        else:
            try:
                json.loads(decoded[key])
            except ValueError:
                errs.add(("data", key), "must be JSON (the value is not shown)")
            except RecursionError:  # Go reads 10,000 levels; Python's recursion limit fewer
                errs.add(
                    ("data", key),
                    f"must be JSON nested at most {sys.getrecursionlimit()} levels deep, which "
                    "kubetrain reads (the value is not shown)",
                )
    elif kind == "kubernetes.io/basic-auth":
        if "username" not in decoded and "password" not in decoded:
            errs.required(("data", "username"))
            errs.required(("data", "password"))
    elif kind == "kubernetes.io/ssh-auth":
        if not decoded.get("ssh-privatekey"):
            errs.required(("data", "ssh-privatekey"))
    elif kind == "kubernetes.io/tls":
        for key in ("tls.crt", "tls.key"):
            if key not in decoded:
                errs.required(("data", key))


def validate_config_map(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidateConfigMap``."""
    data, binary = as_map(obj.get("data")), as_map(obj.get("binaryData"))
    size = 0
    for key, value in data.items():
        errs.problem(("data", key), check_config_map_key(str(key)))
        if key in binary:
            errs.invalid(("data", key), key, "duplicate of key present in binaryData")
        size += len(as_str(value).encode())
    for key, value in binary.items():
        errs.problem(("binaryData", key), check_config_map_key(str(key)))
        try:
            size += len(b64decode(as_str(value), validate=True))
        except (binascii.Error, ValueError):
            errs.add(("binaryData", key), "must be base64-encoded")
    if size > MAX_DATA_SIZE:
        errs.too_long((), MAX_DATA_SIZE)


_PSA_LEVELS = ("privileged", "baseline", "restricted")
#: The Pod Security labels in the order ``PolicyToEvaluate`` reads them, and what each holds.
_PSA_LABELS = tuple(
    (f"pod-security.kubernetes.io/{mode}{suffix}", suffix == "-version")
    for mode in ("enforce", "audit", "warn")
    for suffix in ("", "-version")
)
_PSA_VERSION = re.compile(r"v1\.(?:[0-9]|[1-9][0-9]*)")


def pod_security_label_problems(labels: Any) -> list[tuple[str, str, str]]:
    """(label, value, message) for each Pod Security label of a Namespace the PodSecurity
    admission plugin refuses (Kubernetes v1.36 ``pod-security-admission/api/helpers.go``
    ``PolicyToEvaluate``: ``ParseLevel`` and ``ParseVersion``): a
    level other than privileged, baseline or restricted, a version other than ``latest`` or
    ``v1.<minor>``."""
    found = []
    labels = as_map(labels)
    for key, is_version in _PSA_LABELS:
        if key not in labels:
            continue
        value = as_str(labels[key])
        if is_version:
            if value != "latest" and not _PSA_VERSION.fullmatch(value):
                found.append((key, value, 'must be "latest" or "v1.x"'))
        elif value not in _PSA_LEVELS:
            found.append((key, value, f"must be one of {', '.join(_PSA_LEVELS)}"))
    return found


def validate_namespace(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidateNamespace``: spec.finalizers are qualified or standard names; and the
    PodSecurity admission plugin (on by default, ``Admission.ValidateNamespace`` on create):
    its labels hold valid levels and versions."""
    labels = as_map(obj.get("metadata")).get("labels")
    for key, value, message in pod_security_label_problems(labels):
        errs.invalid(("metadata", "labels", key), value, message)
    for finalizer in as_list(as_map(obj.get("spec")).get("finalizers")):
        name, path = as_str(finalizer), ("spec", "finalizers")
        if problem := check_label_key(name):
            errs.add(path, f"finalizer {problem}")
        elif "/" not in name and name not in _STANDARD_NAMESPACE_FINALIZERS:
            errs.invalid(
                path, name, "is neither a standard finalizer name nor a domain-qualified one"
            )


def validate_pvc(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidatePersistentVolumeClaim``, of the claim as its strategy prepares it
    (``PrepareForCreate``: a dataSource of another kind is dropped, not refused)."""
    validate_pvc_spec(errs, pvc_prepared_for_create(obj.get("spec")), ("spec",))


def validate_pod_template(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidatePodTemplate``."""
    validate_pod_template_spec(errs, obj.get("template"), ("template",))


def validate_replication_controller(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidateReplicationController``, after ``SetDefaults_ReplicationController``
    (an empty selector becomes the template's labels)."""
    spec = as_map(obj.get("spec"))
    template = spec.get("template")
    labels = as_map(as_map(as_map(template).get("metadata")).get("labels"))
    selector = as_map(spec.get("selector")) or labels
    minimum = as_int(spec.get("minReadySeconds"))
    if minimum is not None and minimum < 0:
        errs.invalid(("spec", "minReadySeconds"), minimum, "must be greater than or equal to 0")
    if not selector:
        errs.required(("spec", "selector"))
    replicas = as_int(spec.get("replicas"))
    if replicas is not None and replicas < 0:
        errs.invalid(("spec", "replicas"), replicas, "must be greater than or equal to 0")
    if template is None:
        errs.required(("spec", "template"))
        return
    if selector and any(labels.get(k) != v for k, v in selector.items()):
        errs.invalid(
            ("spec", "template", "metadata", "labels"),
            labels,
            "`selector` does not match template `labels`",
        )
    validate_pod_template_spec(errs, template, ("spec", "template"))
    always_restarts(errs, template, ("spec", "template"), "ReplicationController")


def always_restarts(errs: Errors, template: Any, path: Path, kind: str) -> None:
    """The checks every controller that keeps pods running makes of its template
    (``ValidatePodTemplateSpecForReplicaSet`` and its siblings)."""
    spec = as_map(as_map(template).get("spec"))
    restart = spec.get("restartPolicy") or "Always"
    if restart != "Always":
        errs.not_supported((*path, "spec", "restartPolicy"), restart, ["Always"])
    if spec.get("activeDeadlineSeconds") is not None:
        errs.forbidden(
            (*path, "spec", "activeDeadlineSeconds"),
            f"activeDeadlineSeconds in {kind} is not Supported",
        )


def nonnegative(errs: Errors, spec: dict[str, Any], keys: tuple[str, ...], path: Path) -> None:
    """Upstream ``ValidateNonnegativeField`` for each of ``keys`` of ``spec``."""
    for key in keys:
        value = as_int(spec.get(key))
        if value is not None and value < 0:
            errs.invalid((*path, key), value, "must be greater than or equal to 0")
