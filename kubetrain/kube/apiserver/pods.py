"""Pods and pod templates as kube-apiserver validates them on create (upstream
``pkg/apis/core/validation``: ``ValidatePodCreate``, ``ValidatePodTemplateSpec``,
``ValidatePodSpec`` and the container, probe, security-context, affinity and toleration checks
they call).

The server defaults fields before it validates them (``SetDefaults_PodSpec``,
``SetDefaults_Container``, ...); where a check depends on a default, the default is applied in
place, with a comment, instead of copying the object.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from ..names import (
    DNS1123_LABEL,
    LABEL_VALUE,
    PORT_NAME,
    check_config_map_key,
    check_env_var_name,
    check_label_key,
)
from .features import since
from .field import Errors, Path
from .meta import (
    dns_label,
    dns_subdomain,
    validate_annotations,
    validate_label_selector,
    validate_labels,
)
from .resources import (
    validate_container_resource_requirements,
    validate_pod_resource_consistency,
    validate_pod_resource_requirements,
)
from .values import MAX_INT32, among, as_int, as_list, as_map, as_str, is_set
from .volumes import (
    ObjectFieldSelector,
    local_descending_path,
    resource_field_selector,
    validate_volume_devices,
    validate_volume_mounts,
    validate_volumes,
)

__all__ = [
    "CONTAINER_LISTS",
    "validate_pod",
    "validate_pod_spec",
    "validate_pod_template_spec",
    "validate_port_number_or_name",
    "validate_tolerations",
]

#: The container lists of a pod spec.
CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
_PROTOCOLS = {"TCP", "UDP", "SCTP"}
_PULL_POLICIES = {"Always", "IfNotPresent", "Never"}
_RESTART_POLICIES = {"Always", "OnFailure", "Never"}
_DNS_POLICIES = {"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"}
_ENV_FIELDS = {
    "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
    "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP",
    "status.podIPs",
}  # fmt: skip
_SYSCTL = re.compile(r"([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?")
_HTTP_HEADER = re.compile(r"[-A-Za-z0-9!#$%&'*+.^_`|~]+")
_TAINT_EFFECTS = {"NoSchedule", "PreferNoSchedule", "NoExecute"}
_SECCOMP_TYPES = {"Localhost", "RuntimeDefault", "Unconfined"}
_SECCOMP_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_CONTAINER_ANNOTATION = "container.seccomp.security.alpha.kubernetes.io/"
_APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"
_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
_MIRROR_POD = "kubernetes.io/config.mirror"
_GRACE_DEFAULT = 30  # SetDefaults_PodSpec: terminationGracePeriodSeconds
_HANDLERS = {"lifecycle", "livenessProbe", "readinessProbe", "startupProbe"}


def _range(errs: Errors, value: Any, low: int, high: int, path: Path) -> None:
    number = as_int(value)
    if number is not None and not low <= number <= high:
        errs.invalid(path, number, f"must be between {low} and {high}, inclusive")


def _nonnegative(errs: Errors, value: Any, path: Path) -> None:
    number = as_int(value)
    if number is not None and number < 0:
        errs.invalid(path, number, "must be greater than or equal to 0")


def validate_port_number_or_name(errs: Errors, port: Any, path: Path) -> None:
    """Upstream ``ValidatePortNumOrName``: 1-65535 or an IANA service name."""
    if isinstance(port, str):
        errs.problem(path, PORT_NAME.check(port))
    else:
        _range(errs, port, 1, 65535, path)


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


# --- containers ---------------------------------------------------------------------------------


def _container_ports(errs: Errors, ports: Any, path: Path) -> None:
    # Upstream validateContainerPorts.
    names: set[str] = set()
    for i, port in enumerate(as_list(ports)):
        port = as_map(port)
        ppath = (*path, i)
        name = as_str(port.get("name"))
        if name:
            if problem := PORT_NAME.check(name):
                errs.add((*ppath, "name"), problem)
            elif name in names:
                errs.duplicate((*ppath, "name"), name)
            names.add(name)
        container_port = as_int(port.get("containerPort"))
        if container_port == 0:
            errs.required((*ppath, "containerPort"))
        else:
            _range(errs, container_port, 1, 65535, (*ppath, "containerPort"))
        if as_int(port.get("hostPort")):
            _range(errs, port.get("hostPort"), 1, 65535, (*ppath, "hostPort"))
        protocol = port.get("protocol") or "TCP"  # SetDefaults_ContainerPort
        if isinstance(protocol, str) and protocol not in _PROTOCOLS:
            errs.not_supported((*ppath, "protocol"), protocol, _PROTOCOLS)


def _env(errs: Errors, env: Any, path: Path) -> None:
    # Upstream ValidateEnv and validateEnvVarValueFrom (values are never quoted: secrets).
    relaxed = since(errs.version, "RelaxedEnvironmentVariableValidation")
    fields = set(_ENV_FIELDS)
    if not since(errs.version, "PodHostIPs"):
        fields.discard("status.hostIPs")
    sources = ["fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef"]
    if since(errs.version, "EnvFiles"):
        sources.append("fileKeyRef")
    for i, var in enumerate(as_list(env)):
        var = as_map(var)
        vpath = (*path, i)
        name = as_str(var.get("name"))
        if not name:
            errs.required((*vpath, "name"))
        else:
            errs.problem((*vpath, "name"), check_env_var_name(name, relaxed))
        if var.get("valueFrom") is None:
            continue
        source = as_map(var.get("valueFrom"))
        fpath = (*vpath, "valueFrom")
        given = [key for key in sources if is_set(source, key)]
        if "fieldRef" in given:
            ObjectFieldSelector.validate(errs, source["fieldRef"], fields, (*fpath, "fieldRef"))
        if "resourceFieldRef" in given:
            resource_field_selector(
                errs, source["resourceFieldRef"], (*fpath, "resourceFieldRef"), False
            )
        for key in ("configMapKeyRef", "secretKeyRef"):
            if key in given:
                _key_selector(errs, as_map(source[key]), (*fpath, key))
        if not given:
            errs.invalid(fpath, "", f"must specify one of: {', '.join(sources)}")
        elif var.get("value"):
            errs.invalid(fpath, "", "may not be specified when `value` is not empty")
        elif len(given) > 1:
            errs.invalid(fpath, "", "may not have more than one field specified at a time")


def _key_selector(errs: Errors, ref: dict[str, Any], path: Path) -> None:
    # Upstream validateConfigMapKeySelector / validateSecretKeySelector.
    errs.problem((*path, "name"), dns_subdomain(as_str(ref.get("name"))))
    key = as_str(ref.get("key"))
    if not key:
        errs.required((*path, "key"))
    else:
        errs.problem((*path, "key"), check_config_map_key(key))


def _env_from(errs: Errors, items: Any, path: Path) -> None:
    # Upstream ValidateEnvFrom (the "exactly one source" errors sit at the list, as upstream).
    relaxed = since(errs.version, "RelaxedEnvironmentVariableValidation")
    for i, item in enumerate(as_list(items)):
        item = as_map(item)
        prefix = as_str(item.get("prefix"))
        if prefix:
            errs.problem((*path, i, "prefix"), check_env_var_name(prefix, relaxed))
        given = [key for key in ("configMapRef", "secretRef") if is_set(item, key)]
        for key in given:
            name = as_str(as_map(item[key]).get("name"))
            if not name:
                errs.required((*path, i, key, "name"))
            else:
                errs.problem((*path, i, key, "name"), dns_subdomain(name, True))
        if not given:
            errs.invalid(path, "", "must specify one of: configMapRef, secretRef")
        elif len(given) > 1:
            errs.invalid(path, "", "may not have more than one field specified at a time")


def _handler(errs: Errors, handler: Any, path: Path, grace: int | None, lifecycle: bool) -> None:
    # Upstream validateHandler: exactly one action.
    handler = as_map(handler)
    kinds = ["exec", "httpGet", "tcpSocket", "sleep" if lifecycle else "grpc"]
    found = False
    for key in kinds:
        if not is_set(handler, key):
            continue
        if found:
            errs.forbidden((*path, key), "may not specify more than 1 handler type")
            continue
        found = True
        action, apath = as_map(handler[key]), (*path, key)
        if key == "exec" and not as_list(action.get("command")):
            errs.required((*apath, "command"))
        elif key == "httpGet":
            # SetDefaults_HTTPGetAction: path "/", scheme HTTP.
            validate_port_number_or_name(errs, action.get("port"), (*apath, "port"))
            scheme = action.get("scheme") or "HTTP"
            if isinstance(scheme, str) and scheme not in ("HTTP", "HTTPS"):
                errs.not_supported((*apath, "scheme"), scheme, ["HTTP", "HTTPS"])
            for header in as_list(action.get("httpHeaders")):
                name = as_str(as_map(header).get("name"))
                if not _HTTP_HEADER.fullmatch(name):
                    errs.invalid((*apath, "httpHeaders"), name, "must be a valid HTTP header name")
        elif key == "tcpSocket":
            validate_port_number_or_name(errs, action.get("port"), (*apath, "port"))
        elif key == "grpc":
            _range(errs, action.get("port"), 1, 65535, (*apath, "port"))
        elif key == "sleep":
            # Upstream validateSleepAction; `sleep: {}` is 0 seconds (the Go zero value).
            seconds = as_int(action.get("seconds", 0))
            if seconds is None or grace is None:
                pass
            elif since(errs.version, "PodLifecycleSleepActionAllowZero"):
                if not 0 <= seconds <= grace:
                    errs.invalid(
                        apath,
                        seconds,
                        "must be non-negative and less than terminationGracePeriodSeconds "
                        f"({grace})",
                    )
            elif not 0 < seconds <= grace:
                errs.invalid(
                    apath,
                    seconds,
                    f"must be greater than 0 and less than terminationGracePeriodSeconds ({grace})."
                    " Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep.",
                )
    if not found:
        errs.required(path, "must specify a handler type")


def _probe(errs: Errors, probe: Any, path: Path, grace: int | None, kind: str) -> None:
    # Upstream validateProbe and validate{Liveness,Readiness,Startup}Probe; zero counts are
    # defaulted (SetDefaults_Probe), so only negative ones are refused.
    if probe is None:
        return
    probe = as_map(probe)
    _handler(errs, probe, path, grace, False)
    for key in (
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ):
        _nonnegative(errs, probe.get(key), (*path, key))
    term = as_int(probe.get("terminationGracePeriodSeconds"))
    if term is not None and term <= 0:
        errs.invalid((*path, "terminationGracePeriodSeconds"), term, "must be greater than 0")
    success = as_int(probe.get("successThreshold")) or 1
    if kind in ("livenessProbe", "startupProbe") and success != 1:
        errs.invalid((*path, "successThreshold"), success, "must be 1")
    if kind == "readinessProbe" and term is not None:
        errs.invalid(
            (*path, "terminationGracePeriodSeconds"), term, "must not be set for readinessProbes"
        )


def _lifecycle_and_probes(
    errs: Errors, container: dict[str, Any], path: Path, grace: int | None
) -> None:
    if not _HANDLERS.intersection(container):
        return
    lifecycle = as_map(container.get("lifecycle"))
    for key in ("postStart", "preStop"):
        if is_set(lifecycle, key):
            _handler(errs, lifecycle[key], (*path, "lifecycle", key), grace, True)
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        _probe(errs, container.get(key), (*path, key), grace, key)


def _seccomp_profile(errs: Errors, profile: Any, path: Path) -> None:
    # Upstream validateSeccompProfileField.
    if profile is None:
        return
    profile = as_map(profile)
    kind = profile.get("type")
    if not kind:
        errs.required((*path, "type"), "type is required when seccompProfile is set")
    elif kind not in _SECCOMP_TYPES:
        errs.not_supported((*path, "type"), kind, _SECCOMP_TYPES)
    local = profile.get("localhostProfile")
    if kind == "Localhost":
        if local is None:
            errs.required((*path, "localhostProfile"), "must be set when seccomp type is Localhost")
        else:
            local_descending_path(errs, as_str(local), (*path, "localhostProfile"))
    elif local is not None:
        errs.invalid(
            (*path, "localhostProfile"), local, "can only be set when seccomp type is Localhost"
        )


def _apparmor_profile(errs: Errors, profile: Any, path: Path) -> None:
    # Upstream ValidateAppArmorProfileField.
    if profile is None:
        return
    profile = as_map(profile)
    kind, local = profile.get("type"), profile.get("localhostProfile")
    if kind == "Localhost":
        if local is None or not as_str(local).strip():
            errs.required(
                (*path, "localhostProfile"), "must be set when AppArmor type is Localhost"
            )
        elif as_str(local).strip() != local:
            errs.invalid((*path, "localhostProfile"), local, "must not be padded with whitespace")
        elif len(as_str(local)) > 4095:
            errs.too_long((*path, "localhostProfile"), 4095, "characters")
    elif kind in ("RuntimeDefault", "Unconfined"):
        if local is not None:
            errs.invalid(
                (*path, "localhostProfile"),
                local,
                "can only be set when AppArmor type is Localhost",
            )
    elif not kind:
        errs.required((*path, "type"), "type is required when appArmorProfile is set")
    else:
        errs.not_supported((*path, "type"), kind, ["Localhost", "RuntimeDefault", "Unconfined"])


_RUN_AS_USER_NAME = re.compile(r'["/\\:;|=,+*?<>@\[\]]')


def _windows_options(errs: Errors, options: Any, path: Path) -> None:
    # Upstream validateWindowsSecurityContextOptions.
    options = as_map(options)
    name = options.get("gmsaCredentialSpecName")
    if isinstance(name, str):
        errs.problem((*path, "gmsaCredentialSpecName"), dns_subdomain(name))
    spec = options.get("gmsaCredentialSpec")
    if isinstance(spec, str) and not spec:
        errs.invalid((*path, "gmsaCredentialSpec"), spec, "cannot be an empty string")
    elif isinstance(spec, str) and len(spec) > 64 * 1024:
        errs.invalid((*path, "gmsaCredentialSpec"), "(not shown)", "must be under 64 KiB")
    user = options.get("runAsUserName")
    if isinstance(user, str):
        upath = (*path, "runAsUserName")
        domain, _, account = user.rpartition("\\")
        if not user:
            errs.invalid(upath, user, "cannot be an empty string")
        elif any(ord(c) < 32 or ord(c) == 127 for c in user):
            errs.invalid(upath, user, "cannot contain control characters")
        elif user.count("\\") > 1:
            errs.invalid(upath, user, "cannot contain more than one backslash")
        elif len(domain) >= 256:
            errs.invalid(upath, user, "the domain must be under 256 characters")
        elif not account or len(account) > 104:
            errs.invalid(upath, user, "the user must be 1 to 104 characters")
        elif _RUN_AS_USER_NAME.search(account) or not account.strip(". "):
            errs.invalid(
                upath,
                user,
                'the user may not contain "/\\:;|=,+*?<>@[] or be only periods and spaces',
            )


def _container_security(errs: Errors, context: Any, path: Path, host_users: bool) -> None:
    # Upstream ValidateSecurityContext (privileged containers are allowed, as on the corpus'
    # cluster and by default: --allow-privileged is the cluster's setting, not the object's).
    if context is None:
        return
    context = as_map(context)
    for key in ("runAsUser", "runAsGroup"):
        _range(errs, context.get(key), 0, MAX_INT32, (*path, key))
    proc = context.get("procMount")
    if isinstance(proc, str):
        if proc not in ("Default", "Unmasked"):
            errs.not_supported((*path, "procMount"), proc, ["Default", "Unmasked"])
        elif proc == "Unmasked" and host_users and since(errs.version, "ProcMountType"):
            errs.invalid((*path, "procMount"), proc, "`hostUsers` must be false to use `Unmasked`")
    _seccomp_profile(errs, context.get("seccompProfile"), (*path, "seccompProfile"))
    if context.get("allowPrivilegeEscalation") is False:
        if context.get("privileged") is True:
            errs.invalid(
                path,
                "allowPrivilegeEscalation",
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            )
        if "CAP_SYS_ADMIN" in as_list(as_map(context.get("capabilities")).get("add")):
            errs.invalid(
                path,
                "allowPrivilegeEscalation",
                "cannot set `allowPrivilegeEscalation` to false and add CAP_SYS_ADMIN",
            )
    _windows_options(errs, context.get("windowsOptions"), (*path, "windowsOptions"))
    _apparmor_profile(errs, context.get("appArmorProfile"), (*path, "appArmorProfile"))


def _resize_policy(errs: Errors, policies: Any, path: Path, restart: str) -> None:
    # Upstream validateResizePolicy.
    seen: set[str] = set()
    for i, policy in enumerate(as_list(policies)):
        policy = as_map(policy)
        name, rule = policy.get("resourceName"), policy.get("restartPolicy")
        if name in seen:
            errs.duplicate((*path, i), name)
        seen.add(as_str(name))
        if not name:
            errs.required(path)
        elif name not in ("cpu", "memory"):
            errs.not_supported(path, name, ["cpu", "memory"])
        if not rule:
            errs.required(path)
        elif rule not in ("NotRequired", "RestartContainer"):
            errs.not_supported(path, rule, ["NotRequired", "RestartContainer"])
        if restart == "Never" and rule != "NotRequired":
            errs.invalid(path, rule, "must be 'NotRequired' when `restartPolicy` is 'Never'")


def _container_common(
    errs: Errors,
    container: dict[str, Any],
    path: Path,
    volumes: dict[str, dict[str, Any]],
    claims: set[str],
    restart: str,
    host_users: bool,
) -> None:
    # Upstream validateContainerCommon.
    name = as_str(container.get("name"))
    if not name:
        errs.required((*path, "name"))
    else:
        errs.problem((*path, "name"), DNS1123_LABEL.check(name))
    if not as_str(container.get("image")):
        errs.required((*path, "image"))
    policy = container.get("terminationMessagePolicy") or "File"  # SetDefaults_Container
    if isinstance(policy, str) and policy not in ("File", "FallbackToLogsOnError"):
        errs.not_supported(
            (*path, "terminationMessagePolicy"), policy, ["FallbackToLogsOnError", "File"]
        )
    # Each check runs only when its field is given (an absent field passes every check).
    get = container.get
    if get("ports") is not None:
        _container_ports(errs, get("ports"), (*path, "ports"))
    if get("env") is not None:
        _env(errs, get("env"), (*path, "env"))
    if get("envFrom") is not None:
        _env_from(errs, get("envFrom"), (*path, "envFrom"))
    mounts, devices = get("volumeMounts"), get("volumeDevices")
    if mounts is not None:
        privileged = as_map(get("securityContext")).get("privileged") is True
        mpath = (*path, "volumeMounts")
        validate_volume_mounts(errs, mounts, devices, volumes, privileged, mpath)
    if devices is not None:
        validate_volume_devices(errs, devices, mounts, volumes, (*path, "volumeDevices"))
    pull = get("imagePullPolicy")  # "" is defaulted from the image's tag
    if pull and isinstance(pull, str) and pull not in _PULL_POLICIES:
        errs.not_supported((*path, "imagePullPolicy"), pull, _PULL_POLICIES)
    if get("resources") is not None:
        validate_container_resource_requirements(
            errs, get("resources"), (*path, "resources"), claims
        )
    if get("resizePolicy") is not None:
        _resize_policy(errs, get("resizePolicy"), (*path, "resizePolicy"), restart)
    _container_security(
        errs, container.get("securityContext"), (*path, "securityContext"), host_users
    )


def _host_port_conflicts(errs: Errors, containers: list[Any], path: Path, start: int = 0) -> None:
    # Upstream checkHostPortConflicts (protocol/hostIP/hostPort).
    seen: set[str] = set()
    for ci, container in enumerate(containers, start):
        for pi, port in enumerate(as_list(as_map(container).get("ports"))):
            port = as_map(port)
            host_port = as_int(port.get("hostPort"))
            if not host_port:
                continue
            key = f"{port.get('protocol') or 'TCP'}/{as_str(port.get('hostIP'))}/{host_port}"
            if key in seen:
                errs.duplicate((*path, ci, "ports", pi, "hostPort"), key)
            seen.add(key)


def _containers(
    errs: Errors,
    spec: dict[str, Any],
    path: Path,
    volumes: dict[str, dict[str, Any]],
    claims: set[str],
    restart: str,
    host_users: bool,
    grace: int | None,
) -> None:
    # Upstream validateContainers and validateInitContainers.
    containers = as_list(spec.get("containers"))
    cpath = (*path, "containers")
    if not containers:
        errs.required(cpath)
    names: set[str] = set()
    for i, container in enumerate(containers):
        container = as_map(container)
        ipath = (*cpath, i)
        _container_common(errs, container, ipath, volumes, claims, restart, host_users)
        name = as_str(container.get("name"))
        if name in names:
            errs.duplicate((*ipath, "name"), name)
        names.add(name)
        _lifecycle_and_probes(errs, container, ipath, grace)
        policy = container.get("restartPolicy")
        if policy is not None:
            if not since(errs.version, "ContainerRestartRules"):
                errs.forbidden((*ipath, "restartPolicy"), "may not be set for non-init containers")
            elif policy not in _RESTART_POLICIES:
                errs.not_supported((*ipath, "restartPolicy"), policy, _RESTART_POLICIES)
    _host_port_conflicts(errs, containers, cpath)
    ipath_root = (*path, "initContainers")
    for i, container in enumerate(as_list(spec.get("initContainers"))):
        container = as_map(container)
        ipath = (*ipath_root, i)
        _container_common(errs, container, ipath, volumes, claims, restart, host_users)
        policy = container.get("restartPolicy")
        sidecar = False
        if policy is not None and since(errs.version, "SidecarContainers"):
            # validateInitContainerRestartPolicy: Always only, unless ContainerRestartRules
            # (beta, on from 1.35) lets an init container say OnFailure or Never too.
            allowed = (
                _RESTART_POLICIES if since(errs.version, "ContainerRestartRules") else ["Always"]
            )
            if policy not in allowed:
                errs.not_supported((*ipath, "restartPolicy"), policy, allowed)
            sidecar = policy == "Always"
        name = as_str(container.get("name"))
        if name in names:
            errs.duplicate((*ipath, "name"), name)
        elif name:
            names.add(name)
        _host_port_conflicts(errs, [container], ipath_root, i)
        if sidecar:
            _lifecycle_and_probes(errs, container, ipath, grace)
        else:
            for key in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
                if container.get(key) is not None:
                    errs.forbidden(
                        (*ipath, key),
                        "may not be set for init containers without restartPolicy=Always",
                    )
            if as_list(container.get("resizePolicy")):
                errs.invalid(
                    (*ipath, "resizePolicy"),
                    container["resizePolicy"],
                    "must not be set for init containers",
                )


# --- the pod spec -------------------------------------------------------------------------------


def _pod_security(errs: Errors, spec: dict[str, Any], path: Path) -> None:
    # Upstream validatePodSpecSecurityContext.
    if spec.get("securityContext") is None:
        return
    context = as_map(spec.get("securityContext"))
    for key in ("fsGroup", "runAsUser", "runAsGroup"):
        _range(errs, context.get(key), 0, MAX_INT32, (*path, key))
    for i, gid in enumerate(as_list(context.get("supplementalGroups"))):
        _range(errs, gid, 0, MAX_INT32, (*path, "supplementalGroups", i))
    if context.get("shareProcessNamespace") is True and spec.get("hostPID") is True:
        errs.invalid(
            (*path, "shareProcessNamespace"),
            True,
            "ShareProcessNamespace and HostPID cannot both be enabled",
        )
    names: set[str] = set()
    for i, sysctl in enumerate(as_list(context.get("sysctls"))):
        name = as_str(as_map(sysctl).get("name"))
        npath = (*path, "sysctls", i, "name")
        if not name:
            errs.required(npath)
        elif len(name) > 253 or not _SYSCTL.fullmatch(name):
            errs.invalid(
                npath,
                name,
                "must be at most 253 characters of dot- or slash-separated "
                "segments of lower-case letters, digits, '-' and '_'",
            )
        elif name in names:
            errs.duplicate(npath, name)
        names.add(name)
        dotted = name.replace("/", ".")
        if spec.get("hostNetwork") is True and dotted.startswith("net."):
            errs.invalid(npath, name, "may not be specified when 'hostNetwork' is true")
        elif spec.get("hostIPC") is True and (
            dotted.startswith(("kernel.shm", "kernel.msg", "fs.mqueue.")) or dotted == "kernel.sem"
        ):
            errs.invalid(npath, name, "may not be specified when 'hostIPC' is true")
    for key, allowed in (
        ("fsGroupChangePolicy", ["Always", "OnRootMismatch"]),
        ("supplementalGroupsPolicy", ["Merge", "Strict"]),
        ("seLinuxChangePolicy", ["MountOption", "Recursive"]),
    ):
        value = context.get(key)
        if value is not None and value not in allowed:
            errs.not_supported((*path, key), value, allowed)
    _seccomp_profile(errs, context.get("seccompProfile"), (*path, "seccompProfile"))
    _windows_options(errs, context.get("windowsOptions"), (*path, "windowsOptions"))
    _apparmor_profile(errs, context.get("appArmorProfile"), (*path, "appArmorProfile"))


def _node_selector_requirement(errs: Errors, req: Any, path: Path, check_values: bool) -> None:
    # Upstream ValidateNodeSelectorRequirement.
    req = as_map(req)
    operator, values = req.get("operator"), as_list(req.get("values"))
    if operator in ("In", "NotIn"):
        if not values:
            errs.required((*path, "values"), "must be specified when `operator` is 'In' or 'NotIn'")
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errs.forbidden(
                (*path, "values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            errs.required(
                (*path, "values"), "must be a single value when `operator` is 'Lt' or 'Gt'"
            )
    else:
        errs.invalid((*path, "operator"), operator, "not a valid selector operator")
    errs.problem((*path, "key"), check_label_key(as_str(req.get("key"))))
    if check_values:
        for i, value in enumerate(values):
            if isinstance(value, str):
                errs.problem((*path, "values", i), LABEL_VALUE.check(value))


def _node_selector_term(errs: Errors, term: Any, path: Path, check_values: bool) -> None:
    # Upstream ValidateNodeSelectorTerm (with ValidateNodeFieldSelectorRequirement).
    term = as_map(term)
    for j, req in enumerate(as_list(term.get("matchExpressions"))):
        _node_selector_requirement(errs, req, (*path, "matchExpressions", j), check_values)
    for j, req in enumerate(as_list(term.get("matchFields"))):
        req, rpath = as_map(req), (*path, "matchFields", j)
        values = as_list(req.get("values"))
        if req.get("operator") in ("In", "NotIn"):
            if len(values) != 1:
                errs.required(
                    (*rpath, "values"),
                    "must be only one value when `operator` is "
                    "'In' or 'NotIn' for node field selector",
                )
        else:
            errs.invalid((*rpath, "operator"), req.get("operator"), "not a valid selector operator")
        if req.get("key") != "metadata.name":
            errs.invalid((*rpath, "key"), req.get("key"), "not a valid field selector key")
        else:
            for k, value in enumerate(values):
                errs.problem((*rpath, "values", k), dns_subdomain(as_str(value)))


def _merged_selector(
    selector: Any, match: list[Any], mismatch: list[Any], labels: dict[str, Any] | None
) -> Any:
    """The label selector as the Pod strategy leaves it before validation
    (``applyLabelKeysToLabelSelector``): a Pod's value of each key in ``matchLabelKeys`` appended
    as an ``In`` expression, of each in ``mismatchLabelKeys`` as ``NotIn``. Templates (``labels``
    None) and a missing selector are left alone."""
    if labels is None or not isinstance(selector, dict) or not (match or mismatch):
        return selector
    added = [
        {"key": key, "operator": operator, "values": [labels[key]]}
        for keys, operator in ((match, "In"), (mismatch, "NotIn"))
        for key in keys
        if isinstance(key, str) and key in labels
    ]
    if not added:
        return selector
    return {**selector, "matchExpressions": [*as_list(selector.get("matchExpressions")), *added]}


def _label_keys_and_selector(
    errs: Errors, path: Path, match: list[Any], mismatch: list[Any], selector: Any
) -> None:
    """Upstream ``ValidateMatchLabelKeysAndMismatchLabelKeys`` on the merged selector: keys
    are label names and need a selector; a key of ``matchLabelKeys`` whose expression meets the
    same key earlier in the selector is refused (its path, like upstream's, indexes the term);
    a key in both lists is refused."""
    for key, keys in (("matchLabelKeys", match), ("mismatchLabelKeys", mismatch)):
        if not keys:
            continue
        if selector is None:
            errs.forbidden((*path, key), "must not be specified when labelSelector is not set")
            continue
        for i, label in enumerate(keys):
            errs.problem((*path, key, i), check_label_key(as_str(label)))
    if isinstance(selector, dict):
        index = {as_str(key): i for i, key in enumerate(match)}
        seen = set(as_map(selector.get("matchLabels")))
        for expression in as_list(selector.get("matchExpressions")):
            key = as_str(as_map(expression).get("key"))
            if key in index and key in seen:
                errs.invalid(
                    (*path, index[key]), key, "exists in both matchLabelKeys and labelSelector"
                )
            seen.add(key)
    for i, label in enumerate(match):
        if label in mismatch:
            errs.invalid(
                (*path, "matchLabelKeys", i),
                label,
                "exists in both matchLabelKeys and mismatchLabelKeys",
            )


def _pod_affinity_term(errs: Errors, term: Any, path: Path, labels: dict[str, Any] | None) -> None:
    # Upstream validatePodAffinityTerm, after the Pod strategy's mutatePodAffinity. Before
    # MatchLabelKeysInPodAffinity the server drops the two key lists (dropDisabledFields).
    term = as_map(term)
    validate_label_selector(errs, term.get("labelSelector"), (*path, "labelSelector"))
    validate_label_selector(errs, term.get("namespaceSelector"), (*path, "namespaceSelector"))
    for name in as_list(term.get("namespaces")):
        errs.problem((*path, "namespace"), dns_label(as_str(name)))  # upstream's path
    if since(errs.version, "MatchLabelKeysInPodAffinity"):
        match = as_list(term.get("matchLabelKeys"))
        mismatch = as_list(term.get("mismatchLabelKeys"))
        selector = _merged_selector(term.get("labelSelector"), match, mismatch, labels)
        _label_keys_and_selector(errs, path, match, mismatch, selector)
    topology = as_str(term.get("topologyKey"))
    if not topology:
        errs.required((*path, "topologyKey"), "can not be empty")
    else:
        errs.problem((*path, "topologyKey"), check_label_key(topology))


def _affinity(
    errs: Errors, affinity: Any, path: Path, labels: dict[str, Any] | None = None
) -> None:
    # Upstream validateAffinity. ``labels``: a Pod's own (None for a template).
    affinity = as_map(affinity)
    node = as_map(affinity.get("nodeAffinity"))
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    npath = (*path, "nodeAffinity")
    if required is not None:
        rpath = (*npath, "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
        terms = as_list(as_map(required).get("nodeSelectorTerms"))
        if not terms:
            errs.required(rpath, "must have at least one node selector term")
        for i, term in enumerate(terms):
            _node_selector_term(errs, term, (*rpath, i), True)
    ppath = (*npath, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, term in enumerate(as_list(node.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        term = as_map(term)
        _range(errs, term.get("weight"), 1, 100, (*ppath, i, "weight"))
        _node_selector_term(errs, term.get("preference"), (*ppath, i, "preference"), False)
    for kind in ("podAffinity", "podAntiAffinity"):
        pod = as_map(affinity.get(kind))
        rpath = (*path, kind, "requiredDuringSchedulingIgnoredDuringExecution")
        for i, term in enumerate(
            as_list(pod.get("requiredDuringSchedulingIgnoredDuringExecution"))
        ):
            _pod_affinity_term(errs, term, (*rpath, i), labels)
        wpath = (*path, kind, "preferredDuringSchedulingIgnoredDuringExecution")
        for i, term in enumerate(
            as_list(pod.get("preferredDuringSchedulingIgnoredDuringExecution"))
        ):
            term = as_map(term)
            _range(errs, term.get("weight"), 1, 100, (*wpath, i, "weight"))
            _pod_affinity_term(
                errs, term.get("podAffinityTerm"), (*wpath, i, "podAffinityTerm"), labels
            )


def validate_tolerations(errs: Errors, tolerations: Any, path: Path) -> None:
    """Upstream ``ValidateTolerations``."""
    for i, toleration in enumerate(as_list(tolerations)):
        toleration, tpath = as_map(toleration), (*path, i)
        key, operator = as_str(toleration.get("key")), toleration.get("operator") or ""
        value, effect = as_str(toleration.get("value")), toleration.get("effect") or ""
        if key:
            errs.problem((*tpath, "key"), check_label_key(key))
        if not key and operator != "Exists":
            errs.invalid(
                (*tpath, "operator"),
                operator,
                "must be Exists when `key` is empty (it then matches every taint)",
            )
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.invalid(
                (*tpath, "effect"), effect, "must be 'NoExecute' when `tolerationSeconds` is set"
            )
        if operator in ("Equal", ""):
            errs.problem((*tpath, "operator"), LABEL_VALUE.check(value))
        elif operator == "Exists":
            if value:
                errs.invalid(
                    (*tpath, "operator"), value, "value must be empty when `operator` is 'Exists'"
                )
        else:
            errs.not_supported((*tpath, "operator"), operator, ["Equal", "Exists"])
        if effect and not among(effect, _TAINT_EFFECTS):
            errs.not_supported((*tpath, "effect"), effect, _TAINT_EFFECTS)


def _dns(errs: Errors, spec: dict[str, Any], path: Path) -> None:
    # Upstream validateDNSPolicy and validatePodDNSConfig.
    policy = spec.get("dnsPolicy") or "ClusterFirst"  # SetDefaults_PodSpec
    if isinstance(policy, str) and policy not in _DNS_POLICIES:
        errs.not_supported((*path, "dnsPolicy"), policy, _DNS_POLICIES)
    config = spec.get("dnsConfig")
    cpath = (*path, "dnsConfig")
    servers = as_list(as_map(config).get("nameservers"))
    if policy == "None":
        if config is None:
            errs.required(cpath, "must provide `dnsConfig` when `dnsPolicy` is None")
            return
        if not servers:
            errs.required(
                (*cpath, "nameservers"),
                "must provide at least one DNS nameserver when `dnsPolicy` is None",
            )
            return
    if config is None:
        return
    config = as_map(config)
    if len(servers) > 3:
        errs.invalid((*cpath, "nameservers"), servers, "must not have more than 3 nameservers")
    for i, server in enumerate(servers):
        if not _is_ip(as_str(server)):
            errs.invalid((*cpath, "nameservers", i), server, "must be a valid IP address")
    searches = as_list(config.get("searches"))
    if len(searches) > 32:
        errs.invalid((*cpath, "searches"), searches, "must not have more than 32 search paths")
    if len(" ".join(as_str(s) for s in searches)) > 2048:
        errs.invalid(
            (*cpath, "searches"),
            searches,
            "must not have more than 2048 characters (including spaces) in the search list",
        )
    relaxed = since(errs.version, "RelaxedDNSSearchValidation")
    for i, search in enumerate(searches):
        search = as_str(search)
        if relaxed and search == ".":
            continue
        search = search.removesuffix(".")
        problem = dns_subdomain(search.replace("_", "a") if relaxed else search)
        errs.problem((*cpath, "searches", i), problem)
    for i, option in enumerate(as_list(config.get("options"))):
        if not as_str(as_map(option).get("name")):
            errs.required((*cpath, "options", i), "must not be empty")


def _topology_spread(
    errs: Errors, constraints: Any, path: Path, labels: dict[str, Any] | None = None
) -> None:
    # Upstream validateTopologySpreadConstraints. ``labels``: a Pod's own (None: a template).
    items = [as_map(c) for c in as_list(constraints)]
    for i, constraint in enumerate(items):
        cpath = (*path, i)
        skew = as_int(constraint.get("maxSkew"))
        if skew is not None and skew <= 0:
            errs.invalid((*cpath, "maxSkew"), skew, "must be greater than zero")
        if not as_str(constraint.get("topologyKey")):
            errs.required((*cpath, "topologyKey"), "can not be empty")
        when = constraint.get("whenUnsatisfiable")
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.not_supported(
                (*cpath, "whenUnsatisfiable"), when, ["DoNotSchedule", "ScheduleAnyway"]
            )
        pair = (constraint.get("topologyKey"), when)
        if any((c.get("topologyKey"), c.get("whenUnsatisfiable")) == pair for c in items[i + 1 :]):
            errs.duplicate(
                (*cpath, "{topologyKey, whenUnsatisfiable}"), f"{{{pair[0]}, {pair[1]}}}"
            )
        domains = as_int(constraint.get("minDomains"))
        if domains is not None:
            if domains <= 0:
                errs.invalid((*cpath, "minDomains"), domains, "must be greater than zero")
            if when != "DoNotSchedule":
                errs.invalid(
                    (*cpath, "minDomains"),
                    domains,
                    f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}",
                )
        for key in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            policy = constraint.get(key)
            if policy is not None and policy not in ("Ignore", "Honor"):
                errs.not_supported((*cpath, key), policy, ["Honor", "Ignore"])
        selector = constraint.get("labelSelector")
        keys = as_list(constraint.get("matchLabelKeys"))
        if since(errs.version, "MatchLabelKeysInPodTopologySpreadSelectorMerge"):
            # A Pod's selector gets its keys merged (mutateTopologySpreadConstraints), then
            # ValidateMatchLabelKeysAndMismatchLabelKeys: a template may repeat a key.
            merged = _merged_selector(selector, keys, [], labels)
            _label_keys_and_selector(errs, cpath, keys, [], merged)
        elif keys:
            # Upstream ValidateMatchLabelKeysInTopologySpread, before the selector merge.
            selected = set(as_map(as_map(selector).get("matchLabels")))
            selected |= {
                as_str(as_map(e).get("key"))
                for e in as_list(as_map(selector).get("matchExpressions"))
            }
            if selector is None:
                errs.forbidden(
                    (*cpath, "matchLabelKeys"),
                    "must not be specified when labelSelector is not set",
                )
            for j, key in enumerate(keys):
                errs.problem((*cpath, "matchLabelKeys", j), check_label_key(as_str(key)))
                if key in selected:
                    errs.invalid(
                        (*cpath, "matchLabelKeys", j),
                        key,
                        "exists in both matchLabelKeys and labelSelector",
                    )
        validate_label_selector(errs, selector, (*cpath, "labelSelector"))


def _all_containers(spec: dict[str, Any], path: Path) -> list[tuple[Path, dict[str, Any]]]:
    return [
        ((*path, key, i), as_map(c))
        for key in CONTAINER_LISTS
        for i, c in enumerate(as_list(spec.get(key)))
    ]


def _os(errs: Errors, spec: dict[str, Any], path: Path) -> None:
    # Upstream validateOS, validateLinux and validateWindows.
    if spec.get("os") is None:
        return
    name = as_map(spec.get("os")).get("name")
    if not name:
        errs.required((*path, "os", "name"), "cannot be empty")
        return
    if name not in ("linux", "windows"):
        errs.not_supported((*path, "os"), name, ["linux", "windows"])
        return
    context = as_map(spec.get("securityContext"))
    cpath = (*path, "securityContext")
    if name == "linux":
        if context.get("windowsOptions") is not None:
            errs.forbidden(
                (*cpath, "windowsOptions"), "windows options cannot be set for a linux pod"
            )
        for ipath, container in _all_containers(spec, path):
            if as_map(container.get("securityContext")).get("windowsOptions") is not None:
                errs.forbidden(
                    (*ipath, "securityContext", "windowsOptions"),
                    "windows options cannot be set for a linux pod",
                )
        return
    for key in (
        "appArmorProfile",
        "seLinuxOptions",
        "seccompProfile",
        "fsGroup",
        "fsGroupChangePolicy",
        "sysctls",
        "runAsUser",
        "runAsGroup",
        "supplementalGroups",
        "supplementalGroupsPolicy",
        "seLinuxChangePolicy",
    ):
        if context.get(key) not in (None, []):
            errs.forbidden((*cpath, key), "cannot be set for a windows pod")
    if context.get("hostUsers") is not None:
        errs.forbidden((*path, "hostUsers"), "cannot be set for a windows pod")
    for key in ("hostPID", "hostIPC"):
        if spec.get(key) is True:
            errs.forbidden((*path, key), "cannot be set for a windows pod")
    if spec.get("shareProcessNamespace") is not None:
        errs.forbidden((*path, "shareProcessNamespace"), "cannot be set for a windows pod")
    for ipath, container in _all_containers(spec, path):
        context = as_map(container.get("securityContext"))
        for key in (
            "appArmorProfile",
            "seLinuxOptions",
            "seccompProfile",
            "capabilities",
            "readOnlyRootFilesystem",
            "privileged",
            "allowPrivilegeEscalation",
            "procMount",
            "runAsUser",
            "runAsGroup",
        ):
            if context.get(key) is not None:
                errs.forbidden((*ipath, "securityContext", key), "cannot be set for a windows pod")


def _windows_options_given(spec: dict[str, Any]) -> bool:
    if as_map(spec.get("securityContext")).get("windowsOptions") is not None:
        return True
    return any(
        as_map(as_map(c).get("securityContext")).get("windowsOptions") is not None
        for key in CONTAINER_LISTS
        for c in as_list(spec.get(key))
    )


def _windows_host_process(errs: Errors, spec: dict[str, Any], path: Path) -> None:
    # Upstream validateWindowsHostProcessPod.
    pod_value = as_map(as_map(spec.get("securityContext")).get("windowsOptions")).get("hostProcess")
    count = host_process = 0
    for ipath, container in _all_containers(spec, path):
        count += 1
        value = as_map(as_map(container.get("securityContext")).get("windowsOptions")).get(
            "hostProcess"
        )
        if pod_value is not None and value is not None and pod_value != value:
            errs.invalid(
                (*ipath, "securityContext", "windowsOptions", "hostProcess"),
                value,
                f"must match the pod's hostProcess ({pod_value})",
            )
        if value is True or (value is None and pod_value is True):
            host_process += 1
    if host_process:
        if host_process != count:
            errs.invalid(path, "", "if any container is a hostProcess container, all must be")
        if spec.get("hostNetwork") is not True:
            errs.invalid(
                (*path, "hostNetwork"),
                False,
                "must be true if pod contains any hostProcess containers",
            )


def _pod_claims(errs: Errors, claims: Any, path: Path) -> set[str]:
    # Upstream validatePodResourceClaims.
    names: set[str] = set()
    for i, claim in enumerate(as_list(claims)):
        claim, cpath = as_map(claim), (*path, i)
        name = as_str(claim.get("name"))
        if not name:
            errs.required((*cpath, "name"))
        elif name in names:
            errs.duplicate((*cpath, "name"), name)
        else:
            errs.problem((*cpath, "name"), DNS1123_LABEL.check(name))
            names.add(name)
        given = [k for k in ("resourceClaimName", "resourceClaimTemplateName") if is_set(claim, k)]
        if len(given) > 1:
            errs.invalid(
                cpath,
                claim,
                "at most one of `resourceClaimName` or "
                "`resourceClaimTemplateName` may be specified",
            )
        if not given:
            errs.invalid(
                cpath,
                claim,
                "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
            )
        for key in given:
            errs.problem((*cpath, key), dns_subdomain(as_str(claim[key])))
    return names


def validate_pod_spec(
    errs: Errors,
    spec: Any,
    path: Path,
    *,
    pod_name: str = "",
    is_pod: bool = False,
    extra_volumes: dict[str, dict[str, Any]] | None = None,
    labels: dict[str, Any] | None = None,
) -> None:
    """Upstream ``ValidatePodSpec``. ``is_pod``: the spec is a Pod's, not a template's
    (``ResourceIsPod``); ``extra_volumes``: volumes the owner adds (a StatefulSet's claims);
    ``labels``: a Pod's labels, which its strategy merges into label-key selectors."""
    spec = as_map(spec)
    pod_labels = (labels or {}) if is_pod else None
    grace = as_int(spec.get("terminationGracePeriodSeconds"))
    grace = _GRACE_DEFAULT if spec.get("terminationGracePeriodSeconds") is None else grace
    host_users = as_map(spec.get("securityContext")).get("hostUsers") is not False
    volumes = validate_volumes(errs, spec.get("volumes"), (*path, "volumes"), pod_name)
    if extra_volumes:
        volumes = {**extra_volumes, **volumes}
    claims = _pod_claims(errs, spec.get("resourceClaims"), (*path, "resourceClaims"))
    restart = spec.get("restartPolicy") or "Always"  # SetDefaults_PodSpec
    _containers(errs, spec, path, volumes, claims, as_str(restart), host_users, grace)
    if since(errs.version, "PodLevelResources") and spec.get("resources") is not None:
        # Upstream validatePodResources.
        validate_pod_resource_requirements(errs, spec["resources"], (*path, "resources"))
        validate_pod_resource_consistency(errs, spec, (*path, "resources"))
    if spec.get("hostNetwork") is True:
        # Upstream validatePodHostNetworkDeps; SetDefaults_PodSpec sets hostPort = containerPort.
        for ipath, container in _all_containers(spec, path)[: len(as_list(spec.get("containers")))]:
            for j, port in enumerate(as_list(container.get("ports"))):
                port = as_map(port)
                host, cont = as_int(port.get("hostPort")), as_int(port.get("containerPort"))
                if host and host != cont:
                    errs.invalid(
                        (*ipath, "ports", j, "hostPort"),
                        host,
                        "must match `containerPort` when `hostNetwork` is true",
                    )
    if isinstance(restart, str) and restart not in _RESTART_POLICIES:
        errs.not_supported((*path, "restartPolicy"), restart, _RESTART_POLICIES)
    _dns(errs, spec, path)
    validate_labels(errs, spec.get("nodeSelector"), (*path, "nodeSelector"))
    _pod_security(errs, spec, (*path, "securityContext"))
    if spec.get("affinity") is not None:
        _affinity(errs, spec["affinity"], (*path, "affinity"), pod_labels)
    for i, gate in enumerate(as_list(spec.get("readinessGates"))):
        condition = as_str(as_map(gate).get("conditionType"))
        errs.problem((*path, "readinessGates", i, "conditionType"), check_label_key(condition))
    seen: set[str] = set()
    for i, gate in enumerate(as_list(spec.get("schedulingGates"))):
        name = as_str(as_map(gate).get("name"))
        errs.problem((*path, "schedulingGates", i), check_label_key(name))
        if name in seen:
            errs.duplicate((*path, "schedulingGates", i), name)
        seen.add(name)
    if spec.get("topologySpreadConstraints") is not None:
        constraints = spec["topologySpreadConstraints"]
        _topology_spread(errs, constraints, (*path, "topologySpreadConstraints"), pod_labels)
    if _windows_options_given(spec):
        _windows_host_process(errs, spec, path)
    if not host_users:
        # Upstream validateHostUsers (its paths, capitalised as upstream's).
        for key, shown in (
            ("hostNetwork", "hostNetwork"),
            ("hostPID", "HostPID"),
            ("hostIPC", "HostIPC"),
        ):
            if spec.get(key) is True:
                errs.forbidden((*path, shown), "when `pod.Spec.HostUsers` is false")
    for key in ("serviceAccountName", "nodeName", "priorityClassName"):
        if as_str(spec.get(key)):
            errs.problem((*path, key), dns_subdomain(spec[key]))
    if spec.get("runtimeClassName") is not None:
        errs.problem((*path, "runtimeClassName"), dns_subdomain(as_str(spec["runtimeClassName"])))
    deadline = as_int(spec.get("activeDeadlineSeconds"))
    if deadline is not None and not 1 <= deadline <= MAX_INT32:
        errs.invalid(
            (*path, "activeDeadlineSeconds"),
            deadline,
            f"must be between 1 and {MAX_INT32}, inclusive",
        )
    for key in ("hostname", "subdomain"):
        if as_str(spec.get(key)):
            errs.problem((*path, key), DNS1123_LABEL.check(spec[key]))
    if spec.get("tolerations") is not None:
        validate_tolerations(errs, spec["tolerations"], (*path, "tolerations"))
    for i, alias in enumerate(as_list(spec.get("hostAliases"))):
        alias = as_map(alias)
        if not _is_ip(as_str(alias.get("ip"))):
            errs.invalid(
                (*path, "hostAliases", i, "ip"), alias.get("ip"), "must be a valid IP address"
            )
        for j, host in enumerate(as_list(alias.get("hostnames"))):
            errs.problem((*path, "hostAliases", i, "hostnames", j), dns_subdomain(as_str(host)))
    preemption = spec.get("preemptionPolicy")
    if preemption is not None and preemption not in ("PreemptLowerPriority", "Never"):
        errs.not_supported(
            (*path, "preemptionPolicy"), preemption, ["Never", "PreemptLowerPriority"]
        )
    if spec.get("overhead") is not None:
        validate_container_resource_requirements(
            errs, {"limits": spec["overhead"]}, (*path, "overhead"), None
        )
    _os(errs, spec, path)


# --- annotations that belong to the pod spec ----------------------------------------------------


def _seccomp_annotation_problem(value: str) -> str | None:
    # Upstream ValidateSeccompProfile.
    if value in ("runtime/default", "docker/default", "unconfined"):
        return None
    if value.startswith("localhost/"):
        rest = value.removeprefix("localhost/")
        if rest.startswith("/") or ".." in rest.split("/"):
            return f"{value!r} must be a relative path without '..'"
        return None
    return f"{value!r} is not a valid seccomp profile"


def _container_names(spec: dict[str, Any]) -> set[str]:
    return {as_str(c.get("name")) for _, c in _all_containers(spec, ())}


def _pod_annotations(errs: Errors, annotations: Any, spec: dict[str, Any], path: Path) -> None:
    # Upstream ValidatePodSpecificAnnotations (with the seccomp and AppArmor annotations).
    annotations = as_map(annotations)
    if not annotations:
        return
    if _MIRROR_POD in annotations and not as_str(spec.get("nodeName")):
        errs.invalid(
            (*path, _MIRROR_POD),
            annotations[_MIRROR_POD],
            "must set spec.nodeName if mirror pod annotation is set",
        )
    if _DELETION_COST in annotations:
        try:
            cost = int(as_str(annotations[_DELETION_COST]).strip() or "x", 10)
        except ValueError:
            cost = None
        if cost is None or not -(2**31) <= cost <= MAX_INT32:
            errs.invalid(
                (*path, _DELETION_COST), annotations[_DELETION_COST], "must be a 32bit integer"
            )
    names = _container_names(spec)
    for key, value in annotations.items():
        value = as_str(value)
        if key == _SECCOMP_ANNOTATION or key.startswith(_SECCOMP_CONTAINER_ANNOTATION):
            errs.problem((*path, key), _seccomp_annotation_problem(value))
        if key.startswith(_APPARMOR_ANNOTATION):
            container = key.removeprefix(_APPARMOR_ANNOTATION)
            if container not in names:
                errs.invalid((*path, key), container, "container not found")
            if (
                value
                and value not in ("runtime/default", "unconfined")
                and not value.startswith("localhost/")
            ):
                errs.invalid((*path, key), value, "invalid AppArmor profile name")


def _annotations_match_fields(
    errs: Errors, annotations: Any, spec: dict[str, Any], path: Path
) -> None:
    # Upstream validateSeccompAnnotationsAndFields and
    # validateAppArmorAnnotationsAndFieldsMatchOnCreate.
    annotations = as_map(annotations)
    if not annotations:
        return

    def seccomp_match(value: Any, profile: dict[str, Any], ppath: Path) -> None:
        kind = profile.get("type")
        if (kind == "Unconfined" and value != "unconfined") or (
            kind == "RuntimeDefault" and value not in ("runtime/default", "docker/default")
        ):
            errs.forbidden((*ppath, "type"), "seccomp type in annotation and field must match")
        elif kind == "Localhost":
            if not as_str(value).startswith("localhost/"):
                errs.forbidden((*ppath, "type"), "seccomp type in annotation and field must match")
            elif as_str(value).removeprefix("localhost/") != profile.get("localhostProfile"):
                errs.forbidden(
                    (*ppath, "localhostProfile"),
                    "seccomp profile in annotation and field must match",
                )

    pod_context = as_map(spec.get("securityContext"))
    if is_set(pod_context, "seccompProfile") and _SECCOMP_ANNOTATION in annotations:
        seccomp_match(
            annotations[_SECCOMP_ANNOTATION],
            as_map(pod_context["seccompProfile"]),
            (*path, "securityContext", "seccompProfile"),
        )
    windows = as_map(spec.get("os")).get("name") == "windows"
    pod_apparmor = pod_context.get("appArmorProfile")
    for cpath, container in _all_containers(spec, path):
        context = as_map(container.get("securityContext"))
        name = as_str(container.get("name"))
        key = _SECCOMP_CONTAINER_ANNOTATION + name
        if is_set(context, "seccompProfile") and key in annotations:
            seccomp_match(
                annotations[key],
                as_map(context["seccompProfile"]),
                (*cpath, "securityContext", "seccompProfile"),
            )
        profile = context.get("appArmorProfile") or pod_apparmor
        key = _APPARMOR_ANNOTATION + name
        if windows or profile is None or key not in annotations:
            continue
        value, profile = as_str(annotations[key]), as_map(profile)
        apath = (*cpath, "securityContext", "appArmorProfile")
        kind = profile.get("type")
        expected = {"Unconfined": "unconfined", "RuntimeDefault": "runtime/default"}.get(
            as_str(kind)
        )
        if (expected and value != expected) or (
            kind == "Localhost" and not value.startswith("localhost/")
        ):
            errs.forbidden((*apath, "type"), "apparmor type in annotation and field must match")
        elif kind == "Localhost" and value.removeprefix("localhost/") != profile.get(
            "localhostProfile"
        ):
            errs.forbidden(
                (*apath, "localhostProfile"), "apparmor profile in annotation and field must match"
            )


# --- pods and templates -------------------------------------------------------------------------


def validate_pod_template_spec(
    errs: Errors,
    template: Any,
    path: Path,
    *,
    extra_volumes: dict[str, dict[str, Any]] | None = None,
) -> None:
    """Upstream ``ValidatePodTemplateSpec`` (its label and annotation errors sit at
    ``<template>.labels`` and ``<template>.annotations``, as upstream reports them)."""
    template = as_map(template)
    meta, spec = as_map(template.get("metadata")), as_map(template.get("spec"))
    validate_labels(errs, meta.get("labels"), (*path, "labels"))
    validate_annotations(errs, meta.get("annotations"), (*path, "annotations"))
    _pod_annotations(errs, meta.get("annotations"), spec, (*path, "annotations"))
    validate_pod_spec(errs, spec, (*path, "spec"), extra_volumes=extra_volumes)
    _annotations_match_fields(errs, meta.get("annotations"), spec, (*path, "spec"))
    if as_list(spec.get("ephemeralContainers")):
        errs.forbidden(
            (*path, "spec", "ephemeralContainers"),
            "ephemeral containers not allowed in pod template",
        )


def validate_pod(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidatePodCreate`` (object metadata is checked by the caller), with the
    default admission plugins' refusals that depend on the Pod alone: Priority (a
    ``preemptionPolicy`` or ``priority`` other than the default class's) and RuntimeClass
    (``overhead`` without a runtime class)."""
    meta, spec = as_map(obj.get("metadata")), as_map(obj.get("spec"))
    _pod_annotations(errs, meta.get("annotations"), spec, ("metadata", "annotations"))
    validate_pod_spec(
        errs,
        spec,
        ("spec",),
        pod_name=as_str(meta.get("name")),
        is_pod=True,
        labels=as_map(meta.get("labels")),
    )
    for cpath, container in _all_containers(spec, ("spec",)):
        image = as_str(container.get("image"))
        if image != image.strip():
            errs.invalid((*cpath, "image"), image, "must not have leading or trailing whitespace")
    if as_list(spec.get("ephemeralContainers")):
        errs.forbidden(("spec", "ephemeralContainers"), "cannot be set on create")
    if as_str(spec.get("nodeName")) and as_list(spec.get("schedulingGates")):
        errs.forbidden(
            ("spec", "nodeName"), "cannot be set until all schedulingGates have been cleared"
        )
    _annotations_match_fields(errs, meta.get("annotations"), spec, ("spec",))
    if not as_str(spec.get("priorityClassName")):
        # Admission plugin Priority: without a class, the default one (no global default:
        # priority 0, PreemptLowerPriority) decides; the pod may not say otherwise.
        preemption = spec.get("preemptionPolicy")
        if preemption is not None and preemption != "PreemptLowerPriority":
            errs.forbidden(
                ("spec", "preemptionPolicy"),
                "must not differ from its priority class's (PreemptLowerPriority)",
            )
        priority = as_int(spec.get("priority"))
        if priority not in (None, 0):
            errs.forbidden(("spec", "priority"), "must not differ from its priority class's (0)")
    if spec.get("overhead") is not None and spec.get("runtimeClassName") is None:
        errs.forbidden(
            ("spec", "overhead"),
            "may only be set by a RuntimeClass (admission plugin RuntimeClass)",
        )
