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
* :func:`credential_problems`, the one rule every job document of every kind and mode obeys:
  no credential-named env var, annotation, label, node-selector key or command-line flag with a
  literal value (see its docstring, and :data:`NOT_CREDENTIALS_ANNOTATION` for names that only
  look like credentials).
* which values a message must never quote is :func:`kubetrain.kube.schemas.sensitive_path`,
  built on the same credential names.
* :class:`ExternalSecret`, the model of the ``external-secrets.io/v1`` objects kubetrain writes,
  registered so ``kubetrain validate`` checks them without an extra schema location.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, Field

from ..kube.names import looks_like_credential
from .base import K8sType, Strict, resource_kind

__all__ = [
    "CREDENTIAL_NAME_PATTERN",
    "NOT_CREDENTIALS_ANNOTATION",
    "PULL_CREDENTIAL_KEY",
    "CredentialName",
    "ExternalSecret",
    "configmap_credential_problems",
    "credential_name_problem",
    "credential_problems",
    "credential_value_message",
    "external_secret_template_problems",
    "is_credential_entry",
    "looks_like_credential",
    "not_credentials",
]

#: Annotation of a job document naming, comma-separated, env vars, annotation, label and
#: node-selector keys and command-line flags that look like credentials but hold none
#: (``kubetrain.io/not-credentials: "VAULT_TOKEN_PATH,vault.hashicorp.com/agent-inject-token"``).
NOT_CREDENTIALS_ANNOTATION = "kubetrain.io/not-credentials"

#: Key of an image pull credential that holds a docker config JSON (written under
#: ``.dockerconfigjson`` in the pull Secret; no leading dot, so Pulumi config paths stay plain).
PULL_CREDENTIAL_KEY = "dockerconfigjson"

#: A credential name: a store key (``cos-hmac``, ``team/cos-hmac``) that is also a segment of the
#: Pulumi config path ``kubetrain:credentials.<name>.<key>`` (so no dots).
CREDENTIAL_NAME_PATTERN = r"[A-Za-z0-9]([-A-Za-z0-9_/]*[A-Za-z0-9])?"
_CREDENTIAL_NAME = re.compile(CREDENTIAL_NAME_PATTERN)
_CREDENTIAL_NAME_MAX = 253


def credential_value_message(where: str = "here") -> str:
    """The message for credential material written in a job document (never quotes the value)."""
    return (
        f"a credential value is not allowed {where}: job documents only name credentials "
        "(`credentials: <name>`); keep the value in the stack's secret store (render mode, "
        "kubetrain:secretStore) or set it with `pulumi config set --secret --path "
        "'kubetrain:credentials.<name>.<key>'` (Pulumi mode)"
    )


# --- the one rule: no credential in a job document ----------------------------------------------

#: Fields whose keys are free-form names with string values: a credential-named key there is
#: credential material (``annotations: {password: ...}``).
_NAMED_VALUES = ("annotations", "labels", "nodeSelector", "NodeSelector")
#: Fields holding command lines (lists of arguments, or one shell line): ``--password=...`` and
#: ``TOKEN=...`` there are credential material.
_COMMAND_LINES = ("command", "args", "entrypoint")
_ASSIGNMENT = re.compile(r"-{0,2}([A-Za-z_][A-Za-z0-9_.-]*)=(.*)", re.DOTALL)
# A flag given without "=": its value is the next word (``--password hunter2``).
_FLAG = re.compile(r"--?([A-Za-z_][A-Za-z0-9_.-]*)")
# A value that only refers to another env var ($(VAR) or ${VAR}) holds nothing itself.
_REFERENCE = re.compile(r"\$\([A-Za-z_][A-Za-z0-9_]*\)|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?")
# A URL whose userinfo holds a password (RFC 3986: scheme "://" user ":" password "@" host):
# postgresql://u:pw@db, https://token:x-oauth@host, s3://KEY:SECRET@bucket. The password part
# is group 1.
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:([^\s/?#@]+)@")
# A URL whose userinfo is one word (https://ghp_TOKEN@github.com/...): group 1.
_URL_USER = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^\s/?#@:]+)@")
# name=value parameters of a URL's query (?password=..&..) or of a JDBC URL (;password=..;).
_URL_PARAMETER = re.compile(r"[?&;]([A-Za-z_][A-Za-z0-9_.-]*)=([^&;#\s]*)")
# Oracle's JDBC thin form: jdbc:oracle:thin:user/password@host.
_JDBC_USER_PASSWORD = re.compile(r"jdbc:oracle:[A-Za-z0-9]+:[^\s/@]*/([^\s@]+)@")
#: Prefixes of tokens services issue (GitHub, GitLab, Slack, Hugging Face, OpenAI, AWS, Google
#: OAuth, JWTs): a URL whose user is one of them holds the token.
_TOKEN_PREFIXES = (
    "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "gldt-", "glptt-",
    "xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "hf_", "sk-", "sk_live_", "rk_live_",
    "AKIA", "ASIA", "ya29.", "eyJ",
)  # fmt: skip
#: URL parameters that carry a credential without a credential's name: ODBC's PWD, signed URLs'
#: signatures and credentials (Azure SAS sig, AWS X-Amz-*, Google X-Goog-*).
_URL_CREDENTIAL_PARAMETERS = frozenset(
    {"pwd", "sig", "signature", "xamzsignature", "xamzcredential", "xgoogsignature",
     "xgoogcredential"}
)  # fmt: skip
_URL_MESSAGE = (
    "a URL with a credential in it (scheme://user:password@host, a token as its user, or a "
    "password=, token= or signature parameter)"
)

Path = tuple[str | int, ...]


def not_credentials(annotations: Any) -> frozenset[str]:
    """The names a job document's :data:`NOT_CREDENTIALS_ANNOTATION` lists (given its
    ``metadata.annotations``)."""
    listed = (
        annotations.get(NOT_CREDENTIALS_ANNOTATION) if isinstance(annotations, Mapping) else None
    )
    if not isinstance(listed, str):
        return frozenset()
    return frozenset(name.strip() for name in listed.split(",") if name.strip())


def _literal(value: Any) -> bool:
    """Whether ``value`` holds something of its own (not empty, not only env references)."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, str):
        return bool(_REFERENCE.sub("", value).strip())
    return True


def _is_credential(name: Any, allowed: frozenset[str]) -> bool:
    return isinstance(name, str) and name not in allowed and looks_like_credential(name)


def is_credential_entry(name: Any, value: Any, allowed: frozenset[str]) -> bool:
    """Whether ``name: value`` (an env var, an annotation...) is credential material by the
    rule of :func:`credential_problems`."""
    return _is_credential(name, allowed) and _literal(value)


def has_url_password(value: Any) -> bool:
    """Whether ``value`` holds a URL carrying a literal credential: a password in its userinfo
    (``s3://KEY:SECRET@bucket``, ``https://user:pw@host``), a token as its user
    (``https://ghp_...@github.com``), a credential-named parameter (``?password=...``,
    ``;password=...`` of a JDBC URL, ``access_token=``, a signed URL's signature), or Oracle's
    ``jdbc:oracle:thin:user/password@host``. A credential that only refers to an env var,
    ``$(DB_PASSWORD)``, holds nothing itself."""
    if not isinstance(value, str) or not ("://" in value or "jdbc:" in value or "=" in value):
        return False
    if "://" in value:
        if any(_literal(m[1]) for m in _URL_PASSWORD.finditer(value)):
            return True
        if any(_looks_like_token(m[1]) for m in _URL_USER.finditer(value)):
            return True
    if "jdbc:" in value and any(_literal(m[1]) for m in _JDBC_USER_PASSWORD.finditer(value)):
        return True
    if ("://" in value or "jdbc:" in value) and ("=" in value):
        for m in _URL_PARAMETER.finditer(value):
            name = m[1]
            if (
                looks_like_credential(name)
                or re.sub(r"[^a-z0-9]", "", name.lower()) in _URL_CREDENTIAL_PARAMETERS
            ) and _literal(m[2]):
                return True
    return False


def _looks_like_token(user: str) -> bool:
    """Whether a URL's one-word userinfo is a token rather than a user name (``git``,
    ``deploy``): a prefix services give their tokens, or a long run of letters and digits with
    no dot or ``%`` (an e-mail address is a user)."""
    if not _literal(user):
        return False
    if user.startswith(_TOKEN_PREFIXES):
        return True
    return (
        len(user) >= 20
        and "." not in user
        and "%" not in user
        and any(c.isdigit() for c in user)
        and any(c.isalpha() for c in user)
    )


def _flags(value: Any) -> Iterator[tuple[Path, str]]:
    """(path, flag name) of every ``--name=value`` / ``NAME=value`` word with a literal value,
    and of every ``--name value`` pair of words (a flag, then a word that is not one), whether
    the two are one list item or two."""
    items = enumerate(value) if isinstance(value, list) else [((), value)]
    words: list[tuple[Path, str]] = []
    for index, item in items:
        if isinstance(item, str):
            path: Path = (index,) if isinstance(index, int) else ()
            words += [(path, word.strip("'\"")) for word in item.split()]
    for (path, word), (_, following) in itertools.pairwise([*words, ((), "-")]):
        m = _ASSIGNMENT.fullmatch(word)
        if m and _literal(m[2]):
            yield path, m[1]
        elif (
            (flag := _FLAG.fullmatch(word))
            and not following.startswith("-")
            and _literal(following)
        ):
            yield path, flag[1]


def credential_problems(document: Any) -> list[tuple[Path, str]]:
    """Credential material written in a job document, as (field path, message) pairs.

    One rule for every kind and mode, wherever the document holds it (pod templates of any
    replica, a Learner's env, metadata): a credential-named (:func:`looks_like_credential`)

    * env var with a literal ``value`` (``valueFrom`` a Secret is the way; a value that only
      refers to another var, ``$(DB_PASSWORD)``, is fine), in Kubernetes' list form or a
      Learner's ``env`` mapping;
    * annotation, label or node-selector key with a non-empty value;
    * ``--flag=value`` or ``NAME=value`` word, or ``--flag value`` pair of words, in a
      ``command``, ``args`` or ``entrypoint``.

    A name listed in the job's :data:`NOT_CREDENTIALS_ANNOTATION` is not a credential. The
    messages never quote the value.
    """
    meta = document.get("metadata") if isinstance(document, Mapping) else None
    allowed = not_credentials(meta.get("annotations") if isinstance(meta, Mapping) else None)
    found: list[tuple[Path, str]] = []
    todo: list[tuple[Any, Path]] = [(document, ())]
    while todo:
        value, path = todo.pop()
        if isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict | list):
                    todo.append((item, (*path, i)))
                elif has_url_password(item):
                    found.append(((*path, i), _url_message(str(path[-1]) if path else "a list")))
            continue
        if not isinstance(value, dict):
            continue
        for key, item in value.items():
            here = (*path, key)
            if key == "env":
                found += _env_problems(item, here, allowed)
            elif key in _NAMED_VALUES and isinstance(item, dict):
                found += [
                    ((*here, name), credential_value_message(f"in {key}") + _ALLOW_HINT)
                    for name, text in item.items()
                    if is_credential_entry(name, text, allowed)
                ]
            elif key in _COMMAND_LINES:
                found += [
                    ((*here, *at), credential_value_message(f"in {key} ({flag}=...)") + _ALLOW_HINT)
                    for at, flag in _flags(item)
                    if _is_credential(flag, allowed)
                ]
            if isinstance(item, dict | list):
                todo.append((item, here))
            elif "env" not in (path[-1:] + path[-2:-1]) and has_url_password(item):
                # A URL anywhere (a storageUri, an annotation, an endpoint): it reaches
                # rendered/ and Pulumi's inputs as it is written (env values: _env_problems).
                found.append((here, _url_message(str(key))))
    return sorted(found, key=lambda p: [str(x) for x in p[0]])


def configmap_credential_problems(configmap: Mapping[str, Any]) -> list[tuple[Path, str]]:
    """A ConfigMap's ``data`` keys named like credentials, with a literal value: credential
    material in plain text (a ConfigMap is no Secret), by the rule of
    :func:`credential_problems` and with the same way out (the object's
    :data:`NOT_CREDENTIALS_ANNOTATION`)."""
    meta = configmap.get("metadata")
    allowed = not_credentials(meta.get("annotations") if isinstance(meta, Mapping) else None)
    data = configmap.get("data")
    if not isinstance(data, Mapping):
        return []
    message = credential_value_message("in a ConfigMap") + _ALLOW_HINT
    return [
        (("data", name), message)
        for name, value in data.items()
        if is_credential_entry(name, value, allowed)
    ]


def external_secret_template_problems(obj: Mapping[str, Any]) -> list[tuple[Path, str]]:
    """Literal values in an ExternalSecret's ``spec.target.template.data``: the operator copies
    a template's text into the Secret, so a value with no template action (``{{ .password }}``)
    is secret material written in the repository. A key that holds no secret (a fixed
    setting) may be listed in the object's :data:`NOT_CREDENTIALS_ANNOTATION`."""
    if not str(obj.get("apiVersion", "")).startswith("external-secrets.io/"):
        return []
    if obj.get("kind") != "ExternalSecret":
        return []
    spec = obj.get("spec")
    target = spec.get("target") if isinstance(spec, Mapping) else None
    template = target.get("template") if isinstance(target, Mapping) else None
    data = template.get("data") if isinstance(template, Mapping) else None
    if not isinstance(data, Mapping):
        return []
    meta = obj.get("metadata")
    allowed = not_credentials(meta.get("annotations") if isinstance(meta, Mapping) else None)
    message = (
        "a literal value in an ExternalSecret's template is secret material in the repository "
        "(the operator copies it into the Secret): read it from the store (spec.data) and write "
        "the template as {{ .key }}" + _ALLOW_HINT
    )
    return [
        (("spec", "target", "template", "data", key), message)
        for key, value in data.items()
        if isinstance(value, str) and value and "{{" not in value and str(key) not in allowed
    ]


_ALLOW_HINT = (
    f"; if the name only looks like a credential, list it in the document's "
    f"{NOT_CREDENTIALS_ANNOTATION} annotation"
)


def _env_problems(env: Any, path: Path, allowed: frozenset[str]) -> list[tuple[Path, str]]:
    message = (
        credential_value_message("in env") + "; give it with valueFrom.secretKeyRef" + _ALLOW_HINT
    )
    if isinstance(env, dict):  # a Learner's env mapping
        entries = [((*path, name), name, value) for name, value in env.items()]
    elif isinstance(env, list):
        # A container's env (a pod template of any kind): it names a Secret, which render mode
        # delivers as an ExternalSecret (no `credentials:` field there to name one).
        message = (
            "a credential value is not allowed in env: give it with valueFrom.secretKeyRef, "
            "naming a Secret the stack delivers (render mode: an ExternalSecret in "
            "kubetrain:manifests, docs/secrets.md) or one listed in kubetrain:external.secrets"
            + _ALLOW_HINT
        )
        entries = [
            ((*path, i, "value"), entry.get("name"), entry.get("value"))
            for i, entry in enumerate(env)
            if isinstance(entry, dict)
        ]
    else:
        return []
    found = []
    for at, name, value in entries:
        if is_credential_entry(name, value, allowed):
            found.append((at, message))
        elif has_url_password(value):
            found.append((at, _url_message("env")))
    return found


def _url_message(where: str) -> str:
    if where == "storageUri":  # a TrainJob's initializer: its credentials come from secretRef
        hint = (
            "; give the URL without them and the credentials in the initializer's secretRef "
            "(a Secret the initializer reads as env: AWS_ACCESS_KEY_ID, HF_TOKEN...)"
        )
    else:
        hint = (
            "; put the URL, or its password, in a Secret and read it with "
            "valueFrom.secretKeyRef (the password may also be $(VAR) of an env var that does)"
        )
    return credential_value_message(f"in {where} ({_URL_MESSAGE})") + hint


def credential_name_problem(value: Any) -> str | None:
    """Why ``value`` cannot name a credential of the secret store, or ``None``. The value is
    never repeated: a malformed name is often a pasted key."""
    if not isinstance(value, str) or (
        len(value) > _CREDENTIAL_NAME_MAX or not _CREDENTIAL_NAME.fullmatch(value)
    ):
        return (
            "must name a credential of the secret store: letters, digits, '-', '_' and '/', "
            f"starting and ending with a letter or digit, at most {_CREDENTIAL_NAME_MAX} "
            "characters (the value received is not shown, in case it is secret material)"
        )
    return None


def _credential_name(value: Any) -> Any:
    if isinstance(value, dict):
        raise ValueError(
            credential_value_message("in a job document")
            + "; this field takes the credential's name, not a mapping"
        )
    problem = credential_name_problem(value)
    if problem:
        raise ValueError(problem)
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
