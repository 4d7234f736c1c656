"""Pod Security Standards, as pod-security-admission of Kubernetes v1.36 checks them
(``policy/check_*.go``, read at the release tag): the ``baseline`` and ``restricted`` levels
of a pod or a pod template (``privileged`` allows everything).

Here, in the layer of Kubernetes itself, so that every place a pod may come from is judged by
the same checks: ``validate``'s ``pod-security`` rule (every pod and pod template of the
output), and the pods a TrainJob in operator mode will run, which the trainer builds in the
cluster from its runtime and its runtime patches (:mod:`kubetrain.builders.trainjob`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["pod_security_problems"]

Path = tuple[str | int, ...]
CONTAINER_FIELDS = ("initContainers", "containers", "ephemeralContainers")


def pod_security_problems(
    level: str, path: Path, meta: Mapping[str, Any], spec: Mapping[str, Any]
) -> list[tuple[Path, str]]:
    """What ``level`` refuses of the pod template at ``path`` (its ``metadata`` and ``spec``):
    (field path, message) pairs, paths below ``path``."""
    if level == "privileged":
        return []
    problems = list(_baseline(path, meta, spec))
    if level == "restricted":
        problems += _restricted(path, spec)
    return problems


def _mapping(value: Any) -> Mapping[str, Any]:
    if type(value) is dict:  # the common case, without the ABC check
        return value
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _containers(spec: Mapping[str, Any]) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    for fld in CONTAINER_FIELDS:
        items = spec.get(fld)
        if isinstance(items, list):
            for i, c in enumerate(items):
                if type(c) is dict or isinstance(c, Mapping):
                    yield (fld, i), c


_BASELINE_CAPABILITIES = {
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}  # fmt: skip
_SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}  # fmt: skip
_SELINUX_TYPES = {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
_RESTRICTED_VOLUMES = {
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
    "projected", "secret",
}  # fmt: skip
_APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"


def _baseline(
    path: Path, meta: Mapping[str, Any], spec: Mapping[str, Any]
) -> Iterator[tuple[Path, str]]:
    base = (*path, "spec")
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(key) is True:
            yield (*base, key), f"{key} must not be true (host namespaces)"
    pod_context = _mapping(spec.get("securityContext"))
    contexts: list[tuple[Path, Mapping[str, Any]]] = [((*base, "securityContext"), pod_context)]
    for cpath, c in _containers(spec):
        cbase = (*base, *cpath)
        context = _mapping(c.get("securityContext"))
        contexts.append(((*cbase, "securityContext"), context))
        if context.get("privileged") is True:
            yield (*cbase, "securityContext", "privileged"), "privileged containers are not allowed"
        for j, cap in enumerate(_list(_mapping(context.get("capabilities")).get("add"))):
            if cap not in _BASELINE_CAPABILITIES:
                yield (
                    (*cbase, "securityContext", "capabilities", "add", j),
                    f"capability {cap!r} is beyond the baseline set",
                )
        if context.get("procMount") not in (None, "Default"):
            yield (
                (*cbase, "securityContext", "procMount"),
                f"procMount must be Default, got {context['procMount']!r}",
            )
        for j, port in enumerate(_list(c.get("ports"))):
            if _mapping(port).get("hostPort"):
                yield (*cbase, "ports", j, "hostPort"), "host ports are not allowed"
    for cpath, context in contexts:
        if _mapping(context.get("windowsOptions")).get("hostProcess") is True:
            yield (
                (*cpath, "windowsOptions", "hostProcess"),
                "Windows HostProcess pods are not allowed",
            )
        profile = _mapping(context.get("seccompProfile")).get("type")
        if profile == "Unconfined":
            yield (*cpath, "seccompProfile", "type"), "seccomp profile Unconfined is not allowed"
        apparmor = _mapping(context.get("appArmorProfile")).get("type")
        if apparmor not in (None, "RuntimeDefault", "Localhost"):
            yield (
                (*cpath, "appArmorProfile", "type"),
                f"AppArmor profile {apparmor!r} is not allowed",
            )
        selinux = _mapping(context.get("seLinuxOptions"))
        if selinux.get("type", "") not in _SELINUX_TYPES:
            yield (
                (*cpath, "seLinuxOptions", "type"),
                f"SELinux type {selinux['type']!r} is not allowed",
            )
        for key in ("user", "role"):
            if selinux.get(key):
                yield (*cpath, "seLinuxOptions", key), f"SELinux {key} must not be set"
    for j, sysctl in enumerate(_list(pod_context.get("sysctls"))):
        name = _mapping(sysctl).get("name")
        if name not in _SAFE_SYSCTLS:
            yield (
                (*base, "securityContext", "sysctls", j, "name"),
                f"sysctl {name!r} is not in the safe set",
            )
    for j, volume in enumerate(_list(spec.get("volumes"))):
        if "hostPath" in _mapping(volume):
            yield (*base, "volumes", j, "hostPath"), "hostPath volumes are not allowed"
    for key, value in _mapping(meta.get("annotations")).items():
        if str(key).startswith(_APPARMOR_ANNOTATION) and not (
            value == "runtime/default" or str(value).startswith("localhost/")
        ):
            yield (
                (*path, "metadata", "annotations", key),
                f"AppArmor profile {value!r} is not allowed",
            )


def _restricted(path: Path, spec: Mapping[str, Any]) -> Iterator[tuple[Path, str]]:
    base = (*path, "spec")
    pod_context = _mapping(spec.get("securityContext"))
    windows = _mapping(spec.get("os")).get("name") == "windows"
    for j, volume in enumerate(_list(spec.get("volumes"))):
        kinds = [k for k in _mapping(volume) if k != "name"]
        for kind in kinds:
            if kind not in _RESTRICTED_VOLUMES and kind != "hostPath":  # hostPath: baseline says
                yield (*base, "volumes", j, kind), f"volume type {kind!r} is not allowed"
    if pod_context.get("runAsUser") == 0:
        yield (*base, "securityContext", "runAsUser"), "runAsUser must not be 0"
    pod_non_root = pod_context.get("runAsNonRoot") is True
    pod_seccomp = _mapping(pod_context.get("seccompProfile")).get("type")
    for cpath, c in _containers(spec):
        cbase = (*base, *cpath, "securityContext")
        context = _mapping(c.get("securityContext"))
        if not windows and context.get("allowPrivilegeEscalation") is not False:
            yield (*cbase, "allowPrivilegeEscalation"), "allowPrivilegeEscalation must be false"
        non_root = context.get("runAsNonRoot")
        if non_root is False or (non_root is None and not pod_non_root):
            yield (*cbase, "runAsNonRoot"), "runAsNonRoot must be true (here or on the pod)"
        if context.get("runAsUser") == 0:
            yield (*cbase, "runAsUser"), "runAsUser must not be 0"
        seccomp = _mapping(context.get("seccompProfile")).get("type") or pod_seccomp
        if not windows and seccomp not in ("RuntimeDefault", "Localhost"):
            yield (
                (*cbase, "seccompProfile", "type"),
                "seccompProfile.type must be RuntimeDefault or Localhost (here or on the pod)",
            )
        capabilities = _mapping(context.get("capabilities"))
        if not windows and "ALL" not in _list(capabilities.get("drop")):
            yield (*cbase, "capabilities", "drop"), "capabilities must drop ALL"
        for j, cap in enumerate(_list(capabilities.get("add"))):
            if cap != "NET_BIND_SERVICE" and cap in _BASELINE_CAPABILITIES:
                yield (
                    (*cbase, "capabilities", "add", j),
                    f"only NET_BIND_SERVICE may be added, got {cap!r}",
                )
