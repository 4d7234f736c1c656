"""Credentials in job documents, and the ExternalSecret kind render mode emits for them.

A job document never holds a credential value. It *names* a credential (``credentials:
cos-hmac``) kept outside the repository: in render mode in the External Secrets store the stack
names (``kubetrain:secretStore``), in Pulumi mode in the stack's encrypted config
(``kubetrain:credentials.<name>.<key>``). This module holds the rules shared by every kind:

* :data:`CredentialName`, the type of a field naming a credential. A mapping there (the keys and
  values of the credential itself) is an input error, and so is a name that is not one; neither
  message repeats the value received, since it may be secret material.
* :func:`looks_like_credential` and :func:`credential_value_message`, used for keys such as
  ``accessKey`` or ``password`` written where no such field exists, and for env var names.
* :class:`ExternalSecret`, the model of the ``external-secrets.io/v1`` objects kubetrain writes,
  registered so ``kubetrain validate`` checks them without an extra schema location.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, Field

from .base import K8sType, Strict, resource_kind

__all__ = [
    "CREDENTIAL_NAME_PATTERN",
    "PULL_CREDENTIAL_KEY",
    "CredentialName",
    "ExternalSecret",
    "credential_value_message",
    "looks_like_credential",
]

#: Key of an image pull credential that holds a docker config JSON (written under
#: ``.dockerconfigjson`` in the pull Secret; no leading dot, so Pulumi config paths stay plain).
PULL_CREDENTIAL_KEY = "dockerconfigjson"

#: A credential name: a store key (``cos-hmac``, ``team/cos-hmac``) that is also a segment of the
#: Pulumi config path ``kubetrain:credentials.<name>.<key>`` (so no dots).
CREDENTIAL_NAME_PATTERN = r"[A-Za-z0-9]([-A-Za-z0-9_/]*[A-Za-z0-9])?"
_CREDENTIAL_NAME = re.compile(CREDENTIAL_NAME_PATTERN)
_CREDENTIAL_NAME_MAX = 253

# Field and variable names that hold credential material, compared without case, '-' and '_'.
_CREDENTIAL_WORDS = frozenset(
    {
        "accesskey",
        "accesskeyid",
        "accesstoken",
        "apikey",
        "auth",
        "authtoken",
        "bearertoken",
        "clientsecret",
        "hmac",
        "passwd",
        "password",
        "privatekey",
        "secret",
        "secretaccesskey",
        "secretkey",
        "sessiontoken",
        "token",
        "username",
    }
)
_CREDENTIAL_SUFFIXES = (
    "accesskey",
    "accesskeyid",
    "apikey",
    "passwd",
    "password",
    "privatekey",
    "secret",
    "secretkey",
    "token",
    "username",
)


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def looks_like_credential(name: str) -> bool:
    """Whether a field or env var name is one that holds credential material
    (``accessKey``, ``secret-key``, ``COS_APIKEY``, ``AWS_SECRET_ACCESS_KEY``, ``password``)."""
    squashed = _squash(name)
    return squashed in _CREDENTIAL_WORDS or squashed.endswith(_CREDENTIAL_SUFFIXES)


def credential_value_message(where: str = "here") -> str:
    """The message for credential material written in a job document (never quotes the value)."""
    return (
        f"a credential value is not allowed {where}: job documents only name credentials "
        "(`credentials: <name>`); keep the value in the stack's secret store (render mode, "
        "kubetrain:secretStore) or set it with `pulumi config set --secret --path "
        "'kubetrain:credentials.<name>.<key>'` (Pulumi mode)"
    )


def _credential_name(value: Any) -> Any:
    if isinstance(value, dict):
        raise ValueError(
            credential_value_message("in a job document")
            + "; this field takes the credential's name, not a mapping"
        )
    if not isinstance(value, str) or (
        len(value) > _CREDENTIAL_NAME_MAX or not _CREDENTIAL_NAME.fullmatch(value)
    ):
        # The value is not repeated: a malformed name is often a pasted key.
        raise ValueError(
            "must name a credential of the secret store: letters, digits, '-', '_' and '/', "
            f"starting and ending with a letter or digit, at most {_CREDENTIAL_NAME_MAX} "
            "characters (the value received is not shown, in case it is secret material)"
        )
    return value


#: A field naming a credential of the stack's secret store (see the module docstring).
CredentialName = Annotated[str, BeforeValidator(_credential_name)]


# --- external-secrets.io/v1 ExternalSecret (the part kubetrain writes and checks) --------------

_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"


class SecretStoreReference(Strict):
    """``spec.secretStoreRef``: the store the values are read from."""

    kind: Literal["SecretStore", "ClusterSecretStore"] | None = Field(
        default=None, description="Kind of the store. Default (operator's): SecretStore."
    )
    name: str | None = Field(
        default=None,
        min_length=1,
        max_length=253,
        pattern=_SUBDOMAIN,
        description="Name of the store (the CRD does not require it; the operator does).",
    )


class TemplateMetadata(Strict):
    """``spec.target.template.metadata``: labels and annotations of the created Secret."""

    labels: dict[str, str] | None = Field(default=None, description="Labels. Default: none.")
    annotations: dict[str, str] | None = Field(
        default=None, description="Annotations. Default: none."
    )
    finalizers: list[str] | None = Field(default=None, description="Finalizers. Default: none.")


class TargetTemplate(Strict):
    """``spec.target.template``: the blueprint of the created Secret."""

    type: str | None = Field(default=None, description="Secret type. Default: Opaque.")
    metadata: TemplateMetadata | None = Field(
        default=None, description="Metadata of the Secret. Default: none."
    )
    engine_version: Literal["v2"] | None = Field(
        default=None, alias="engineVersion", description="Template engine. Default: v2."
    )
    merge_policy: Literal["Replace", "Merge"] | None = Field(
        default=None, alias="mergePolicy", description="Template merge policy. Default: Replace."
    )
    data: dict[str, str] | None = Field(
        default=None,
        description="Templated Secret keys. Default: none (the fetched keys are kept as they are).",
    )
    template_from: list[dict[str, Any]] | None = Field(
        default=None, alias="templateFrom", description="Templates from ConfigMaps or Secrets."
    )


class Target(Strict):
    """``spec.target``: the Secret the operator creates."""

    name: str | None = Field(
        default=None,
        min_length=1,
        max_length=253,
        pattern=_SUBDOMAIN,
        description="Name of the Secret. Default: the ExternalSecret's name.",
    )
    creation_policy: Literal["Owner", "Orphan", "Merge", "None", "CreateOrMerge"] | None = Field(
        default=None,
        alias="creationPolicy",
        description="How the Secret is created. Default: Owner.",
    )
    deletion_policy: Literal["Delete", "Merge", "Retain"] | None = Field(
        default=None,
        alias="deletionPolicy",
        description="What happens to the Secret when the values are gone. Default: Retain.",
    )
    immutable: bool | None = Field(default=None, description="Make the Secret immutable.")
    template: TargetTemplate | None = Field(default=None, description="Blueprint of the Secret.")


class RemoteRef(Strict):
    """``spec.data[].remoteRef``: one value in the store."""

    key: str = Field(description="Key of the secret in the store (kubetrain: the credential name).")
    property: str | None = Field(
        default=None, description="Property of that secret (kubetrain: the credential's key)."
    )
    version: str | None = Field(default=None, description="Version. Default: the latest.")
    conversion_strategy: Literal["Default", "Unicode"] | None = Field(
        default=None, alias="conversionStrategy", description="Conversion. Default: Default."
    )
    decoding_strategy: Literal["Auto", "Base64", "Base64URL", "None"] | None = Field(
        default=None, alias="decodingStrategy", description="Decoding. Default: None."
    )
    metadata_policy: Literal["None", "Fetch"] | None = Field(
        default=None, alias="metadataPolicy", description="Fetch tags/labels. Default: None."
    )
    null_byte_policy: Literal["Ignore", "Fail"] | None = Field(
        default=None,
        alias="nullBytePolicy",
        description="Values holding NUL bytes. Default: Ignore.",
    )


class ExternalSecretData(Strict):
    """One key of the created Secret and where its value comes from."""

    secret_key: str = Field(
        alias="secretKey",
        min_length=1,
        max_length=253,
        pattern=r"^[-._a-zA-Z0-9]+$",
        description="Key in the created Secret.",
    )
    remote_ref: RemoteRef = Field(alias="remoteRef", description="Where the value is read.")
    source_ref: dict[str, Any] | None = Field(
        default=None, alias="sourceRef", description="Another source than secretStoreRef."
    )


class ExternalSecretSpec(Strict):
    """``spec`` of an ExternalSecret."""

    secret_store_ref: SecretStoreReference | None = Field(
        default=None, alias="secretStoreRef", description="The store to read from."
    )
    target: Target | None = Field(default=None, description="The Secret to create.")
    refresh_interval: str | None = Field(
        default=None,
        alias="refreshInterval",
        description="How often values are read again, a Go duration (the CRD does not check "
        "its form). Default: 1h0m0s.",
    )
    refresh_policy: Literal["CreatedOnce", "Periodic", "OnChange"] | None = Field(
        default=None, alias="refreshPolicy", description="When values are read. Default: Periodic."
    )
    data: list[ExternalSecretData] | None = Field(
        default=None, description="Secret keys, one store value each. Default: none."
    )
    data_from: list[dict[str, Any]] | None = Field(
        default=None, alias="dataFrom", description="Whole store secrets to copy. Default: none."
    )


@resource_kind("external-secrets.io/v1", "ExternalSecret")
class ExternalSecret(Strict):
    """An External Secrets Operator ``ExternalSecret``: a Secret whose values the operator reads
    from a store, so the manifest itself holds none (the part of the API kubetrain writes)."""

    API_VERSION: ClassVar[str] = "external-secrets.io/v1"
    KIND: ClassVar[str] = "ExternalSecret"

    api_version: Literal["external-secrets.io/v1"] = Field(alias="apiVersion")
    kind: Literal["ExternalSecret"]
    metadata: Annotated[
        dict[str, Any], K8sType("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "Metadata")
    ]
    spec: ExternalSecretSpec | None = None
