"""Secrets every job kind needs, built without ever holding a credential value.

A builder describes each Secret it needs as a :class:`SecretSpec`: name, namespace, type, labels
and, for every key of the Secret, the credential and key it comes from (:class:`CredentialRef`).
:func:`secret_manifests` turns that description into what the back end applies:

``ctx.target == Target.RENDER``
    An External Secrets Operator ``ExternalSecret`` (``external-secrets.io/v1``) of the same name
    against the stack's ``kubetrain:secretStore``. Its target creates the Secret (name, type,
    labels; ``creationPolicy: Owner``, so deleting the ExternalSecret deletes the Secret) and its
    ``data`` reads each key from the store, ``remoteRef: {key: <credential>, property: <key>}``,
    sorted by Secret key. The rendered tree holds no secret material. Without a secret store
    this is an input error naming the job and the missing stack key.

``ctx.target == Target.PULUMI``
    A core/v1 ``Secret`` whose ``stringData`` values are *credential markers*::

        {"$kubetrainCredential": {"name": "<credential>", "key": "<key>"}}

    The Pulumi components replace each marker by the secret output of the stack config value
    ``kubetrain:credentials.<credential>.<key>`` (set with ``pulumi config set --secret --path``),
    so the value only ever exists as a Pulumi secret. Builders stay pure: they never read
    config and never see a value. A marker left in a manifest is never a valid Secret value, so
    a back end that forgets to resolve it fails loudly instead of writing a placeholder.

Credential naming (documented in docs/secrets.md): a ``mount_cos`` store's credential
holds the keys ``access-key`` and ``secret-key``; an image pull credential holds the
key ``dockerconfigjson`` (a docker config JSON), written to the Secret key ``.dockerconfigjson``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..models.secrets import NOT_CREDENTIALS_ANNOTATION, PULL_CREDENTIAL_KEY, ExternalSecret
from .context import BuildContext, Target
from .meta import MANAGED_BY, PULL_SECRET_COMPONENT, manifest, object_meta
from .registry import BuildProblem

__all__ = [
    "CREDENTIAL_MARKER",
    "DOCKER_CONFIG_JSON_KEY",
    "PULL_SECRET_TYPE",
    "PULUMI_SECRET",
    "CredentialRef",
    "SecretSpec",
    "credential_marker",
    "marker_ref",
    "pull_secret_spec",
    "secret_manifests",
]

#: What the Pulumi target builds where render writes an ExternalSecret (group, kind).
PULUMI_SECRET = ("", "Secret")
#: Key of the marker dict standing for a credential value in Pulumi-target Secrets.
CREDENTIAL_MARKER = "$kubetrainCredential"
#: Secret type and key of an image pull secret.
PULL_SECRET_TYPE = "kubernetes.io/dockerconfigjson"
DOCKER_CONFIG_JSON_KEY = ".dockerconfigjson"


@dataclass(frozen=True, order=True)
class CredentialRef:
    """One key of one named credential (never its value)."""

    credential: str
    key: str


@dataclass(frozen=True)
class SecretSpec:
    """A Secret a builder needs: each Secret key comes from one key of one named credential.

    ``field`` is the field path, relative to the job document, that asked for the Secret; it
    locates the error when the Secret cannot be built (render mode without a secret store).
    """

    name: str
    namespace: str
    type: str
    labels: Mapping[str, str]
    data: Mapping[str, CredentialRef]
    field: tuple[str | int, ...] = field(default=())
    #: Keys the builder writes itself, holding no secret (an ssh client's config of host
    #: names): in render mode the ExternalSecret's template adds them to what the store gives
    #: (``mergePolicy: Merge``), and its ``kubetrain.io/not-credentials`` annotation says so.
    settings: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def credentials(self) -> list[CredentialRef]:
        """The credential keys this Secret reads, sorted."""
        return sorted(set(self.data.values()))


def credential_marker(ref: CredentialRef) -> dict[str, dict[str, str]]:
    """The ``stringData`` value standing for ``ref`` in a Pulumi-target Secret."""
    return {CREDENTIAL_MARKER: {"name": ref.credential, "key": ref.key}}


def marker_ref(value: Any) -> CredentialRef | None:
    """The credential a ``stringData`` value stands for, if it is a credential marker (for the
    Pulumi components, which swap each marker for a secret config output)."""
    if type(value) is dict and set(value) == {CREDENTIAL_MARKER}:
        inner = value[CREDENTIAL_MARKER]
        if type(inner) is dict and set(inner) == {"name", "key"}:
            return CredentialRef(str(inner["name"]), str(inner["key"]))
    return None


def pull_secret_spec(
    name: str, namespace: str, credential: str, field: tuple[str | int, ...] = ()
) -> SecretSpec:
    """The image pull Secret ``name`` (``kubernetes.io/dockerconfigjson``), its
    ``.dockerconfigjson`` read from the key ``dockerconfigjson`` of ``credential``.

    Its labels name no job, so jobs that pull with the same Secret and credential build it
    identically and the stack keeps one copy.
    """
    return SecretSpec(
        name=name,
        namespace=namespace,
        type=PULL_SECRET_TYPE,
        labels={
            "app.kubernetes.io/component": PULL_SECRET_COMPONENT,
            "app.kubernetes.io/managed-by": MANAGED_BY,
        },
        data={DOCKER_CONFIG_JSON_KEY: CredentialRef(credential, PULL_CREDENTIAL_KEY)},
        field=field,
    )


def secret_manifests(spec: SecretSpec, ctx: BuildContext) -> list[dict[str, Any]]:
    """What the back end of ``ctx`` applies for ``spec`` (see the module docstring)."""
    meta = object_meta(spec.name, spec.namespace, spec.labels)
    if ctx.target == Target.PULUMI:
        string_data: dict[str, Any] = {
            key: credential_marker(ref) for key, ref in spec.data.items()
        } | dict(spec.settings)
        string_data = dict(sorted(string_data.items()))
        return [manifest("v1", "Secret", meta, type=spec.type, stringData=string_data)]
    store = ctx.settings.secret_store
    if store is None:
        raise BuildProblem(
            spec.field,
            f"needs Secret {spec.namespace}/{spec.name}, which render mode writes as an "
            "ExternalSecret, but the stack does not set kubetrain:secretStore (e.g. "
            "{kind: ClusterSecretStore, name: vault})",
        )
    data = [
        {"secretKey": key, "remoteRef": {"key": ref.credential, "property": ref.key}}
        for key, ref in sorted(spec.data.items())
    ]
    template: dict[str, Any] = {"type": spec.type}
    if spec.labels:
        template["metadata"] = {"labels": dict(spec.labels)}
    if spec.settings:
        template["mergePolicy"] = "Merge"
        template["data"] = dict(sorted(spec.settings.items()))
        meta.setdefault("annotations", {})[NOT_CREDENTIALS_ANNOTATION] = ",".join(
            sorted(spec.settings)
        )
    body = {
        "secretStoreRef": {"kind": store.kind, "name": store.name},
        "target": {"name": spec.name, "creationPolicy": "Owner", "template": template},
        "data": data,
    }
    return [manifest(ExternalSecret.API_VERSION, ExternalSecret.KIND, meta, spec=body)]
