"""Pod volumes, volume mounts and persistent volume claim specs (upstream ``ValidateVolumes``,
``validateVolumeSource``, ``ValidateVolumeMounts``, ``ValidatePersistentVolumeClaimSpec``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ..names import DNS1123_LABEL, check_label_key
from ..quantity import format_quantity
from .field import Errors, Path
from .meta import (
    dns_label,
    dns_subdomain,
    validate_annotations,
    validate_label_selector,
    validate_labels,
)
from .resources import quantity_at, validate_resource_quantity
from .values import among, as_int, as_list, as_map, as_str, is_set

__all__ = [
    "ObjectFieldSelector",
    "local_descending_path",
    "pvc_dropped_fields",
    "pvc_prepared_for_create",
    "validate_pvc_spec",
    "validate_volume_devices",
    "validate_volume_mounts",
    "validate_volumes",
]

_FILE_MODE = "must be a number between 0 and 0777 (octal), both inclusive"
_HOST_PATH_TYPES = {
    "", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice",
    "BlockDevice",
}  # fmt: skip
_ACCESS_MODES = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"}
_VOLUME_MODES = {"Block", "Filesystem"}
_PROPAGATION = {"Bidirectional", "HostToContainer", "None"}
_RECURSIVE_READ_ONLY = {"Disabled", "IfPossible", "Enabled"}
_VOLUME_FIELDS = {
    "metadata.name",
    "metadata.namespace",
    "metadata.labels",
    "metadata.annotations",
    "metadata.uid",
}


def _backsteps(errs: Errors, value: str, path: Path) -> bool:
    # Upstream validatePathNoBacksteps.
    if ".." in value.split("/"):
        errs.invalid(path, value, "must not contain '..'")
        return True
    return False


def local_descending_path(errs: Errors, value: str, path: Path) -> None:
    """Upstream ``validateLocalDescendingPath``: relative, no '..'."""
    if value.startswith("/"):
        errs.invalid(path, value, "must be a relative path")
    _backsteps(errs, value, path)


def _local_non_reserved_path(errs: Errors, value: str, path: Path) -> None:
    # Upstream ValidateLocalNonReservedPath.
    local_descending_path(errs, value, path)
    if value.startswith("..") and not value.startswith("../"):
        errs.invalid(path, value, "must not start with '..'")


def _mode(errs: Errors, value: Any, path: Path) -> None:
    mode = as_int(value)
    if mode is not None and not 0 <= mode <= 0o777:
        errs.invalid(path, mode, _FILE_MODE)


def _require(errs: Errors, source: dict[str, Any], keys: tuple[str, ...], path: Path) -> None:
    for key in keys:
        if not source.get(key):
            errs.required((*path, key))


def _key_to_path(errs: Errors, item: Any, path: Path) -> None:
    # Upstream validateKeyToPath.
    item = as_map(item)
    _require(errs, item, ("key", "path"), path)
    _local_non_reserved_path(errs, as_str(item.get("path")), (*path, "path"))
    _mode(errs, item.get("mode"), (*path, "mode"))


def _items(errs: Errors, source: dict[str, Any], path: Path) -> None:
    for i, item in enumerate(as_list(source.get("items"))):
        _key_to_path(errs, item, (*path, "items", i))


class ObjectFieldSelector:
    """Downward API field references (upstream ``validateObjectFieldSelector`` with
    ``podshelper.ConvertDownwardAPIFieldLabel``)."""

    #: Field paths ConvertDownwardAPIFieldLabel knows for pods.
    KNOWN: ClassVar[set[str]] = {
        "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace",
        "metadata.uid", "spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName",
        "spec.schedulerName", "status.phase", "status.hostIP", "status.hostIPs", "status.podIP",
        "status.podIPs",
    }  # fmt: skip

    @staticmethod
    def validate(errs: Errors, ref: Any, allowed: set[str], path: Path) -> None:
        ref = as_map(ref)
        version = ref.get("apiVersion") or "v1"  # SetDefaults_ObjectFieldSelector
        field_path = as_str(ref.get("fieldPath"))
        if not field_path:
            errs.required((*path, "fieldPath"))
            return
        fpath = (*path, "fieldPath")
        if version != "v1":
            errs.invalid(fpath, field_path, f"unsupported pod API version {version!r}")
            return
        subscripted = _split_subscript(field_path)
        if subscripted is not None:
            base, key = subscripted
            if base not in ("metadata.annotations", "metadata.labels"):
                errs.invalid(fpath, field_path, "this field does not support a subscript")
            elif problem := check_label_key(key.lower() if base == "metadata.annotations" else key):
                errs.add(path, problem)
            return
        if field_path == "spec.host":
            field_path = "spec.nodeName"  # an old v1 spelling the server converts
        if field_path not in ObjectFieldSelector.KNOWN:
            errs.invalid(fpath, field_path, "this field cannot be selected")
        elif field_path not in allowed:
            errs.not_supported(fpath, field_path, allowed)


def _split_subscript(path: str) -> tuple[str, str] | None:
    # Upstream fieldpath.SplitMaybeSubscriptedPath: "metadata.labels['key']".
    if not path.endswith("']"):
        return None
    base, sep, key = path[:-2].partition("['")
    return (base, key) if sep and base else None


_DIVISORS = {
    "cpu": {"1m", "1"},
    "memory": {"1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"},
}
_DIVISORS["ephemeral-storage"] = _DIVISORS["hugepages"] = _DIVISORS["memory"]
RESOURCE_FIELDS = {
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "requests.cpu", "requests.memory",
    "requests.ephemeral-storage",
}  # fmt: skip


def resource_field_selector(errs: Errors, ref: Any, path: Path, volume: bool) -> None:
    """Upstream ``validateContainerResourceFieldSelector`` and
    ``validateContainerResourceDivisor``."""
    ref = as_map(ref)
    resource = as_str(ref.get("resource"))
    if volume and not ref.get("containerName"):
        errs.required((*path, "containerName"))
    elif not resource:
        errs.required((*path, "resource"))
    elif resource not in RESOURCE_FIELDS and not resource.startswith(
        ("requests.hugepages-", "limits.hugepages-")
    ):
        errs.not_supported((*path, "resource"), resource, RESOURCE_FIELDS)
    if ref.get("divisor") is None:
        return
    divisor = quantity_at(errs, ref["divisor"], (*path, "divisor"))
    if divisor is None or divisor.value == 0:
        return
    kind = resource.partition(".")[2]
    kind = "hugepages" if kind.startswith("hugepages-") else kind
    if kind in _DIVISORS and format_quantity(divisor) not in _DIVISORS[kind]:
        allowed = ", ".join(sorted(_DIVISORS[kind]))
        errs.invalid(
            (*path, "divisor"),
            resource,
            f"only divisors {allowed} are supported with the {kind} resource",
        )


def _downward_file(errs: Errors, item: Any, path: Path) -> None:
    # Upstream validateDownwardAPIVolumeFile (errors at the volume source, as upstream).
    item = as_map(item)
    if not item.get("path"):
        errs.required((*path, "path"))
    _local_non_reserved_path(errs, as_str(item.get("path")), (*path, "path"))
    if is_set(item, "fieldRef"):
        ObjectFieldSelector.validate(errs, item["fieldRef"], _VOLUME_FIELDS, (*path, "fieldRef"))
        if is_set(item, "resourceFieldRef"):
            errs.invalid(path, "resource", "fieldRef and resourceFieldRef cannot both be set")
    elif is_set(item, "resourceFieldRef"):
        resource_field_selector(errs, item["resourceFieldRef"], (*path, "resourceFieldRef"), True)
    else:
        errs.required(path, "one of fieldRef and resourceFieldRef is required")
    _mode(errs, item.get("mode"), (*path, "mode"))


def _projected(errs: Errors, source: dict[str, Any], path: Path) -> None:
    # Upstream validateProjectedVolumeSource / validateProjectionSources.
    _mode(errs, source.get("defaultMode"), (*path, "defaultMode"))
    paths: set[str] = set()

    def claim(value: str, what: Any) -> None:
        if value in paths:
            errs.invalid(path, what, "conflicting duplicate paths")
        paths.add(value)

    for i, item in enumerate(as_list(source.get("sources"))):
        item = as_map(item)
        spath = (*path, "sources", i)
        kinds = [k for k in item if item[k] is not None]
        for key in ("secret", "configMap"):
            if is_set(item, key):
                ref = as_map(item[key])
                if not ref.get("name"):
                    errs.required((*spath, key, "name"))
                for j, kp in enumerate(as_list(ref.get("items"))):
                    _key_to_path(errs, kp, (*spath, key, "items", j))
                    if p := as_str(as_map(kp).get("path")):
                        claim(p, ref.get("name"))
        if is_set(item, "downwardAPI"):
            for file in as_list(as_map(item["downwardAPI"]).get("items")):
                _downward_file(errs, file, (*spath, "downwardAPI"))
                if p := as_str(as_map(file).get("path")):
                    claim(p, p)
        if is_set(item, "serviceAccountToken"):
            token = as_map(item["serviceAccountToken"])
            expiry = as_int(token.get("expirationSeconds"))
            epath = (*spath, "serviceAccountToken", "expirationSeconds")
            if expiry is not None and expiry < 600:
                errs.invalid(epath, expiry, "may not specify a duration less than 10 minutes")
            if expiry is not None and expiry > 2**32:
                errs.invalid(epath, expiry, "may not specify a duration larger than 2^32 seconds")
            if not token.get("path"):
                errs.required((*path, "path"))
            else:
                _local_non_reserved_path(errs, as_str(token.get("path")), (*path, "path"))
        if is_set(item, "clusterTrustBundle"):
            bundle = as_map(item["clusterTrustBundle"])
            bpath = (*spath, "clusterTrustBundle")
            has_name, has_signer = is_set(bundle, "name"), is_set(bundle, "signerName")
            if has_name and has_signer:
                errs.invalid(bpath, bundle, "only one of name and signerName may be used")
            elif has_name and bundle.get("labelSelector") is not None:
                errs.invalid(
                    (*bpath, "labelSelector"),
                    bundle["labelSelector"],
                    "labelSelector must be unset if name is specified",
                )
            elif has_signer:
                validate_label_selector(
                    errs, bundle.get("labelSelector"), (*bpath, "labelSelector")
                )
            elif not has_name:
                errs.required(bpath, "either name or signerName must be specified")
            if not bundle.get("path"):
                errs.required((*bpath, "path"))
            _local_non_reserved_path(errs, as_str(bundle.get("path")), (*bpath, "path"))
            claim(as_str(bundle.get("path")), bundle.get("path"))
        if len(kinds) > 1:
            errs.forbidden(spath, "may not specify more than 1 volume type per source")


def _iscsi(errs: Errors, source: dict[str, Any], path: Path, volume: str) -> None:
    # Upstream validateISCSIVolumeSource.
    _require(errs, source, ("targetPortal",), path)
    iqn = as_str(source.get("iqn"))
    if not iqn:
        errs.required((*path, "iqn"))
    elif not iqn.startswith(("iqn", "eui", "naa")):
        errs.invalid((*path, "iqn"), iqn, "must be valid format starting with iqn, eui, or naa")
    lun = as_int(source.get("lun"))
    if lun is not None and not 0 <= lun <= 255:
        errs.invalid((*path, "lun"), lun, "must be between 0 and 255, inclusive")
    chap = source.get("chapAuthDiscovery") is True or source.get("chapAuthSession") is True
    if chap and not is_set(source, "secretRef"):
        errs.required((*path, "secretRef"))
    initiator = source.get("initiatorName")
    if isinstance(initiator, str):
        if not initiator.startswith(("iqn", "eui", "naa")):
            errs.invalid(
                (*path, "initiatorname"),
                initiator,
                "must be valid format starting with iqn, eui, or naa",
            )
        if len(f"{volume}:{as_str(source.get('targetPortal'))}") > 64:
            errs.invalid(
                (*path, "name"),
                volume,
                "<volume name>:<iscsi.targetPortal> must be "
                "under 64 characters when iscsi.initiatorName is given",
            )


def _partition(errs: Errors, source: dict[str, Any], path: Path) -> None:
    part = as_int(source.get("partition"))
    if part is not None and not 0 <= part <= 255:
        errs.invalid((*path, "partition"), part, "must be between 1 and 255, inclusive")


def _source_checks() -> dict[str, Callable[[Errors, dict[str, Any], Path, str], None]]:
    """Per volume type, what upstream ``validateVolumeSource`` checks (in upstream's order)."""

    def req(*keys: str) -> Callable[[Errors, dict[str, Any], Path, str], None]:
        return lambda errs, source, path, _: _require(errs, source, keys, path)

    def empty_dir(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        if source.get("sizeLimit") is not None:
            q = quantity_at(errs, source["sizeLimit"], (*path, "sizeLimit"))
            if q is not None and q.value < 0:
                errs.forbidden((*path, "sizeLimit"), "SizeLimit must be a valid resource quantity")

    def host_path(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        if not source.get("path"):
            errs.required((*path, "path"))
            return
        _backsteps(errs, as_str(source.get("path")), (*path, "path"))
        kind = source.get("type")
        if isinstance(kind, str) and kind not in _HOST_PATH_TYPES:
            errs.not_supported((*path, "type"), kind, _HOST_PATH_TYPES - {""})

    def git_repo(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        _require(errs, source, ("repository",), path)
        local_descending_path(errs, as_str(source.get("directory")), (*path, "directory"))

    def gce(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        path = (*path[:-1], "persistentDisk")  # upstream's own spelling of this path
        _require(errs, source, ("pdName",), path)
        _partition(errs, source, path)

    def aws(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        _require(errs, source, ("volumeID",), path)
        _partition(errs, source, path)

    def secret(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        _require(errs, source, ("secretName",), path)
        _mode(errs, source.get("defaultMode"), (*path, "defaultMode"))
        _items(errs, source, path)

    def config_map(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        _require(errs, source, ("name",), path)
        _mode(errs, source.get("defaultMode"), (*path, "defaultMode"))
        _items(errs, source, path)

    def nfs(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        _require(errs, source, ("server", "path"), path)
        if not as_str(source.get("path")).startswith("/"):
            errs.invalid((*path, "path"), source.get("path", ""), "must be an absolute path")

    def flocker(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        name, uuid = source.get("datasetName"), source.get("datasetUUID")
        if not name and not uuid:
            errs.required(path, "one of datasetName and datasetUUID is required")
        if name and uuid:
            errs.invalid(path, "resource", "datasetName and datasetUUID cannot both be given")
        if "/" in as_str(name):
            errs.invalid((*path, "datasetName"), name, "must not contain '/'")

    def cinder(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        _require(errs, source, ("volumeID",), path)
        if is_set(source, "secretRef") and not as_map(source["secretRef"]).get("name"):
            errs.required((*path, "secretRef", "name"))

    def quobyte(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        registry = as_str(source.get("registry"))
        if not registry:
            errs.required(
                (*path, "registry"), "must be a host:port pair or several, comma-separated"
            )
        elif len(as_str(source.get("tenant"))) >= 65:
            errs.required((*path, "tenant"), "must be a UUID and may not exceed 64 characters")
        elif any(":" not in pair for pair in registry.split(",")):
            errs.invalid(
                (*path, "registry"),
                registry,
                "must be a host:port pair or several, comma-separated",
            )
        _require(errs, source, ("volume",), path)

    def downward(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        _mode(errs, source.get("defaultMode"), (*path, "defaultMode"))
        for item in as_list(source.get("items")):
            _downward_file(errs, item, path)

    def fc(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        wwns, wwids = as_list(source.get("targetWWNs")), as_list(source.get("wwids"))
        if not wwns and not wwids:
            errs.required((*path, "targetWWNs"), "must specify either targetWWNs or wwids")
        if wwns and wwids:
            errs.invalid((*path, "targetWWNs"), wwns, "targetWWNs and wwids cannot both be given")
        if wwns:
            lun = as_int(source.get("lun"))
            if lun is None:
                errs.required((*path, "lun"), "lun is required if targetWWNs is specified")
            elif not 0 <= lun <= 255:
                errs.invalid((*path, "lun"), lun, "must be between 0 and 255, inclusive")

    def flex(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        _require(errs, source, ("driver",), path)
        for key in as_map(source.get("options")):
            domain = (
                "." + str(key).partition("/")[0].lower()
                if "/" in str(key)
                else "." + str(key).lower()
            )
            if domain.endswith((".kubernetes.io", ".k8s.io")):
                errs.invalid(
                    (*path, "options", key), key, "kubernetes.io and k8s.io namespaces are reserved"
                )

    def azure_disk(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        _require(errs, source, ("diskName", "diskURI"), path)
        caching, kind = source.get("cachingMode"), source.get("kind")
        if isinstance(caching, str) and caching not in ("None", "ReadOnly", "ReadWrite"):
            errs.not_supported((*path, "cachingMode"), caching, ["None", "ReadOnly", "ReadWrite"])
        if isinstance(kind, str):
            if kind not in ("Shared", "Dedicated", "Managed"):
                errs.not_supported((*path, "kind"), kind, ["Dedicated", "Managed", "Shared"])
            uri = as_str(source.get("diskURI"))
            if kind == "Managed" and not uri.startswith("/subscriptions/"):
                errs.invalid(
                    (*path, "diskURI"), uri, "a managed disk URI starts with /subscriptions/"
                )
            if kind != "Managed" and not uri.startswith("https://"):
                errs.invalid((*path, "diskURI"), uri, "a blob disk URI starts with https://")

    def storageos(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        if not source.get("volumeName"):
            errs.required((*path, "volumeName"))
        else:
            errs.problem((*path, "volumeName"), DNS1123_LABEL.check(as_str(source["volumeName"])))
        if source.get("volumeNamespace"):
            errs.problem(
                (*path, "volumeNamespace"), DNS1123_LABEL.check(as_str(source["volumeNamespace"]))
            )
        if is_set(source, "secretRef") and not as_map(source["secretRef"]).get("name"):
            errs.required((*path, "secretRef", "name"))

    def csi(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        driver = as_str(source.get("driver"))
        if not driver:
            errs.required((*path, "driver"))
        elif len(driver) > 63:
            errs.too_long((*path, "driver"), 63, "characters")
        elif problem := dns_subdomain(driver.lower()):
            errs.add((*path, "driver"), problem)
        if is_set(source, "nodePublishSecretRef"):
            name = as_str(as_map(source["nodePublishSecretRef"]).get("name"))
            if not name:
                errs.required((*path, "nodePublishSecretRef", "name"))
            else:
                errs.problem((*path, "name"), dns_subdomain(name))

    def ephemeral(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        template = source.get("volumeClaimTemplate")
        if template is None:
            errs.required((*path, "volumeClaimTemplate"))
            return
        # Upstream ValidatePersistentVolumeClaimTemplate / ValidateTemplateObjectMeta.
        tpath = (*path, "volumeClaimTemplate")
        meta = as_map(as_map(template).get("metadata"))
        validate_annotations(errs, meta.get("annotations"), (*tpath, "metadata", "annotations"))
        validate_labels(errs, meta.get("labels"), (*tpath, "metadata", "labels"))
        for key, value in meta.items():
            if key not in ("labels", "annotations") and value not in (None, "", [], {}):
                errs.forbidden((*tpath, "metadata", key), "cannot be set")
        validate_pvc_spec(errs, as_map(template).get("spec"), (*tpath, "spec"))

    def image(errs: Errors, source: dict[str, Any], path: Path, _: str) -> None:
        policy = source.get("pullPolicy")
        if policy and policy not in ("Always", "IfNotPresent", "Never"):
            errs.not_supported((*path, "pullPolicy"), policy, ["Always", "IfNotPresent", "Never"])

    return {
        "emptyDir": empty_dir,
        "hostPath": host_path,
        "gitRepo": git_repo,
        "gcePersistentDisk": gce,
        "awsElasticBlockStore": aws,
        "secret": secret,
        "nfs": nfs,
        "iscsi": lambda errs, source, path, name: _iscsi(errs, source, path, name),
        "glusterfs": req("endpoints", "path"),
        "flocker": flocker,
        "persistentVolumeClaim": req("claimName"),
        "rbd": req("monitors", "image"),
        "cinder": cinder,
        "cephfs": req("monitors"),
        "quobyte": quobyte,
        "downwardAPI": downward,
        "fc": fc,
        "flexVolume": flex,
        "configMap": config_map,
        "azureFile": req("secretName", "shareName"),
        "vsphereVolume": req("volumePath"),
        "photonPersistentDisk": req("pdID"),
        "portworxVolume": req("volumeID"),
        "azureDisk": azure_disk,
        "storageos": storageos,
        "projected": lambda errs, source, path, _: _projected(errs, source, path),
        "scaleIO": req("gateway", "system", "volumeName"),
        "csi": csi,
        "ephemeral": ephemeral,
        "image": image,
    }


_SOURCES = _source_checks()


def validate_volume_source(errs: Errors, volume: dict[str, Any], path: Path) -> None:
    """Upstream ``validateVolumeSource``: at most one volume type, and that type's rules. None
    is an emptyDir: the v1 defaults give a volume without a source one (``SetDefaults_Volume``,
    ``AllPtrFieldsNil``), so the server never sees a volume without a type."""
    found = False
    for key, check in _SOURCES.items():
        if not is_set(volume, key):
            continue
        if found:
            errs.forbidden((*path, key), "may not specify more than 1 volume type")
            continue
        found = True
        check(errs, as_map(volume[key]), (*path, key), as_str(volume.get("name")))


def validate_volumes(
    errs: Errors, volumes: Any, path: Path, pod_name: str = ""
) -> dict[str, dict[str, Any]]:
    """Upstream ``ValidateVolumes``: the valid volumes by name (what mounts may refer to)."""
    valid: dict[str, dict[str, Any]] = {}
    created = {
        f"{pod_name}-{as_str(v.get('name'))}"
        for v in map(as_map, as_list(volumes))
        if pod_name and is_set(v, "ephemeral")
    }
    for i, volume in enumerate(as_list(volumes)):
        volume = as_map(volume)
        vpath = (*path, i)
        before = len(errs.issues)
        validate_volume_source(errs, volume, vpath)
        name = as_str(volume.get("name"))
        if not name:
            errs.required((*vpath, "name"))
        else:
            errs.problem((*vpath, "name"), DNS1123_LABEL.check(name))
        if name in valid:
            errs.duplicate((*vpath, "name"), name)
        if len(errs.issues) == before:
            valid[name] = volume
        claim = as_map(volume.get("persistentVolumeClaim"))
        if claim and among(claim.get("claimName"), created):
            errs.invalid(
                (*vpath, "persistentVolumeClaim", "claimName"),
                claim["claimName"],
                "must not refer to a PVC created for an ephemeral volume",
            )
        ephemeral = pod_name and name and is_set(volume, "ephemeral")
        if ephemeral and (problem := dns_subdomain(f"{pod_name}-{name}")):
            errs.invalid((*vpath, "name"), name, f"PVC name: {problem}")
    return valid


def validate_volume_mounts(
    errs: Errors,
    mounts: Any,
    devices: Any,
    volumes: dict[str, dict[str, Any]] | None,
    privileged: bool,
    path: Path,
) -> None:
    """Upstream ``ValidateVolumeMounts`` (``volumes`` ``None``: a mount outside a pod, whose
    volume cannot be looked up)."""
    device_paths = {as_str(as_map(d).get("devicePath")) for d in as_list(devices)}
    device_names = {as_str(as_map(d).get("name")) for d in as_list(devices)}
    seen: set[str] = set()
    for i, mount in enumerate(as_list(mounts)):
        mount = as_map(mount)
        mpath = (*path, i)
        name, mount_path = as_str(mount.get("name")), as_str(mount.get("mountPath"))
        if not name:
            errs.required((*mpath, "name"))
        if volumes is not None and name not in volumes:
            errs.not_found((*mpath, "name"), name, "no volume of that name in spec.volumes")
        if not mount_path:
            errs.required((*mpath, "mountPath"))
        if mount_path in seen:
            errs.invalid((*mpath, "mountPath"), mount_path, "must be unique")
        seen.add(mount_path)
        if name in device_names:
            errs.invalid((*mpath, "name"), name, "must not already exist in volumeDevices")
        if mount_path in device_paths:
            errs.invalid(
                (*mpath, "mountPath"),
                mount_path,
                "must not already exist as a path in volumeDevices",
            )
        sub, expr = as_str(mount.get("subPath")), as_str(mount.get("subPathExpr"))
        if volumes is not None and is_set(volumes.get(name, {}), "image"):
            if sub:
                errs.invalid((*mpath, "subPath"), sub, "not allowed in image volume sources")
            if expr:
                errs.invalid((*mpath, "subPathExpr"), expr, "not allowed in image volume sources")
        if sub:
            local_descending_path(errs, sub, (*path, "subPath"))  # upstream's path: no index
        if expr:
            if sub:
                errs.invalid(
                    (*mpath, "subPathExpr"), expr, "subPathExpr and subPath are mutually exclusive"
                )
            local_descending_path(errs, expr, (*path, "subPathExpr"))
        propagation = mount.get("mountPropagation")
        if isinstance(propagation, str):
            ppath = (*path, "mountPropagation")
            if propagation not in _PROPAGATION:
                errs.not_supported(ppath, propagation, _PROPAGATION)
            if propagation == "Bidirectional" and not privileged:
                errs.forbidden(
                    ppath, "Bidirectional mount propagation needs a privileged container"
                )
        recursive = mount.get("recursiveReadOnly")
        if isinstance(recursive, str) and recursive != "Disabled":
            rpath = (*path, "recursiveReadOnly")
            if recursive not in _RECURSIVE_READ_ONLY:
                errs.not_supported(rpath, recursive, _RECURSIVE_READ_ONLY)
            else:
                if mount.get("readOnly") is not True:
                    errs.forbidden(rpath, "may only be specified when readOnly is true")
                if propagation not in (None, "None"):
                    errs.forbidden(
                        rpath,
                        "may only be specified when mountPropagation is None or not specified",
                    )


def validate_volume_devices(
    errs: Errors, devices: Any, mounts: Any, volumes: dict[str, dict[str, Any]], path: Path
) -> None:
    """Upstream ``ValidateVolumeDevices``: block devices come from claims."""
    mount_names = {as_str(as_map(m).get("name")) for m in as_list(mounts)}
    mount_paths = {as_str(as_map(m).get("mountPath")) for m in as_list(mounts)}
    names: set[str] = set()
    paths: set[str] = set()
    for i, device in enumerate(as_list(devices)):
        device = as_map(device)
        dpath = (*path, i)
        name, device_path = as_str(device.get("name")), as_str(device.get("devicePath"))
        if not name:
            errs.required((*dpath, "name"))
        if name in names:
            errs.invalid((*dpath, "name"), name, "must be unique")
        source = volumes.get(name)
        if source is None:
            errs.not_found((*dpath, "name"), name, "no volume of that name in spec.volumes")
        elif not (is_set(source, "persistentVolumeClaim") or is_set(source, "ephemeral")):
            errs.invalid(
                (*dpath, "name"),
                name,
                "block devices need a PersistentVolumeClaim or ephemeral volume",
            )
        if not device_path:
            errs.required((*dpath, "devicePath"))
        if device_path in paths:
            errs.invalid((*dpath, "devicePath"), device_path, "must be unique")
        if device_path and ".." in device_path.split("/"):
            errs.invalid((*dpath, "devicePath"), device_path, "cannot contain backsteps ('..')")
        else:
            paths.add(device_path)
        if name in mount_names:
            errs.invalid((*dpath, "name"), name, "must not already exist in volumeMounts")
        if device_path in mount_paths:
            errs.invalid(
                (*dpath, "devicePath"),
                device_path,
                "must not already exist as a path in volumeMounts",
            )
        if name:
            names.add(name)


def _data_source(errs: Errors, ref: dict[str, Any], path: Path, namespaced: bool) -> None:
    # Upstream validateDataSource / validateDataSourceRef.
    _require(errs, ref, ("name", "kind"), path)
    group = as_str(ref.get("apiGroup"))
    if not group and ref.get("kind") != "PersistentVolumeClaim":
        errs.invalid(
            path,
            ref.get("kind"),
            "must be 'PersistentVolumeClaim' when referencing the default apiGroup",
        )
    if group:
        errs.problem((*path, "apiGroup"), dns_subdomain(group))
    if namespaced and as_str(ref.get("namespace")):
        errs.problem((*path, "namespace"), dns_label(as_str(ref.get("namespace"))))


def _pvc_or_snapshot(source: Any) -> bool:
    """Upstream ``dataSourceIsPvcOrSnapshot``."""
    source = as_map(source)
    group, kind = as_str(source.get("apiGroup")), source.get("kind")
    return (kind == "PersistentVolumeClaim" and group == "") or (
        kind == "VolumeSnapshot" and group == "snapshot.storage.k8s.io"
    )


def pvc_dropped_fields(spec: Any) -> list[tuple[str, str]]:
    """(field, why) of what the PersistentVolumeClaim strategy drops from a new claim's spec
    before it validates it (``PrepareForCreate``: ``DropDisabledFields`` with
    CrossNamespaceVolumeDataSource off, ``EnforceDataSourceBackwardsCompatibility``)."""
    spec = as_map(spec)
    out = []
    ref = spec.get("dataSourceRef")
    if ref is not None and as_str(as_map(ref).get("namespace")):
        out.append(("dataSourceRef", "a namespace needs CrossNamespaceVolumeDataSource (alpha)"))
        ref = None
    source = spec.get("dataSource")
    if source is not None and ref is None and not _pvc_or_snapshot(source):
        out.append(
            (
                "dataSource",
                "only a PersistentVolumeClaim or a snapshot.storage.k8s.io VolumeSnapshot is kept "
                "there; give another kind as dataSourceRef",
            )
        )
    return out


def pvc_prepared_for_create(spec: Any) -> dict[str, Any]:
    """A new claim's spec as the strategy leaves it for validation (``PrepareForCreate``):
    dropped fields gone, then ``NormalizeDataSources`` (AnyVolumeDataSource, on in every
    version kubetrain supports) copies dataSource and dataSourceRef into each other."""
    out = {k: v for k, v in as_map(spec).items()}
    for key, _ in pvc_dropped_fields(out):
        out.pop(key, None)
    source, ref = out.get("dataSource"), out.get("dataSourceRef")
    if source is not None and ref is None:
        source = as_map(source)
        out["dataSourceRef"] = {k: source[k] for k in ("apiGroup", "kind", "name") if k in source}
    elif ref is not None and source is None and not as_str(as_map(ref).get("namespace")):
        ref = as_map(ref)
        out["dataSource"] = {k: ref[k] for k in ("apiGroup", "kind", "name") if k in ref}
    return out


def validate_pvc_spec(errs: Errors, spec: Any, path: Path) -> None:
    """Upstream ``ValidatePersistentVolumeClaimSpec``."""
    spec = as_map(spec)
    modes = as_list(spec.get("accessModes"))
    if not modes:
        errs.required((*path, "accessModes"), "at least 1 access mode is required")
    if spec.get("selector") is not None:
        validate_label_selector(errs, spec["selector"], (*path, "selector"))
    for mode in modes:
        if not among(mode, _ACCESS_MODES):
            errs.not_supported((*path, "accessModes"), mode, _ACCESS_MODES)
    if "ReadWriteOncePod" in modes and any(
        among(m, _ACCESS_MODES - {"ReadWriteOncePod"}) for m in modes
    ):
        errs.forbidden(
            (*path, "accessModes"), "may not use ReadWriteOncePod with other access modes"
        )
    requests = as_map(as_map(spec.get("resources")).get("requests"))
    storage_path = (*path, "resources", "storage")  # upstream's path: resources[storage]
    if "storage" not in requests:
        errs.required(storage_path)
    else:
        q = quantity_at(errs, requests["storage"], (*path, "resources", "requests", "storage"))
        if q is not None:
            if q.value <= 0:
                errs.invalid(storage_path, format_quantity(q), "must be greater than zero")
            else:
                validate_resource_quantity(errs, "storage", q, storage_path)
    # Every other quantity must decode too: the server converts the object to its Go type
    # (resource.Quantity) before validation and refuses one that is not a quantity.
    resources = as_map(spec.get("resources"))
    for field in ("requests", "limits"):
        for name, value in sorted(as_map(resources.get(field)).items()):
            if (field, name) != ("requests", "storage"):
                quantity_at(errs, value, (*path, "resources", field, name))
    for key in ("storageClassName", "volumeAttributesClassName"):
        if as_str(spec.get(key)):
            errs.problem((*path, key), dns_subdomain(as_str(spec[key])))
    mode = spec.get("volumeMode")
    if isinstance(mode, str) and mode not in _VOLUME_MODES:
        errs.not_supported((*path, "volumeMode"), mode, _VOLUME_MODES)
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    if source is not None:
        _data_source(errs, as_map(source), (*path, "dataSource"), False)
    if ref is not None:
        _data_source(errs, as_map(ref), (*path, "dataSourceRef"), True)
    if ref is not None and as_str(as_map(ref).get("namespace")):
        if source is not None:
            errs.invalid(path, "dataSource", "may not be specified when dataSourceRef.namespace is")
    elif source is not None and ref is not None:
        a, b = as_map(source), as_map(ref)
        if any(a.get(k) != b.get(k) for k in ("apiGroup", "kind", "name")):
            errs.invalid(path, "dataSource", "must match dataSourceRef")
