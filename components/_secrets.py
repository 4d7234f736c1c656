"""Credentials in Pulumi mode: stack config secrets that stay secret outputs end to end.

In Pulumi mode (``BuildContext(settings, target=Target.PULUMI)``) builders emit core/v1 ``Secret``
manifests whose ``stringData`` values are markers naming a credential instead of holding it::

    {"$kubetrainCredential": {"name": "<credential>", "key": "<key>"}}

(render mode emits an ExternalSecret instead and never sees a value). Before registration every
marker is replaced by a secret output read from the stack config ``kubetrain:credentials``,
which users set with ``pulumi config set --secret --path 'kubetrain:credentials.<name>.<key>'
VALUE``. The value is only ever reached inside ``Output.apply`` on the secret object, so it
never exists as a plain value in kubetrain's code, logs, settings or outputs.
"""

import json
from typing import Any

import pulumi

from kubetrain.models import InputError, Problem

__all__ = ["CONFIG_KEY", "MARKER", "Credentials", "find_markers", "is_marker"]

#: The key of a credential marker (the contract with kubetrain/builders/secrets.py).
MARKER = "$kubetrainCredential"
#: The stack config key holding every credential, by name then key.
CONFIG_KEY = "kubetrain:credentials"


#: The credential key of an image pull Secret (kubetrain/builders/secrets.py).
DOCKER_CONFIG = "dockerconfigjson"


def _is_docker_config(value: Any) -> bool:
    """Whether ``value`` (a string, or a mapping set with --path) is a docker config JSON
    object, as the API server checks a ``.dockerconfigjson`` (an object with ``auths``)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return False
    return isinstance(value, dict) and isinstance(value.get("auths"), dict)


def is_marker(value: Any) -> bool:
    """Whether ``value`` is a credential marker."""
    return isinstance(value, dict) and len(value) == 1 and MARKER in value


def _ref(marker: dict[str, Any]) -> tuple[str, str]:
    """(name, key) of a marker; a malformed one is a builder bug."""
    ref = marker[MARKER]
    if not (
        isinstance(ref, dict)
        and set(ref) == {"name", "key"}
        and all(isinstance(v, str) and v for v in ref.values())
    ):
        raise ValueError(f"malformed credential marker {marker!r}: expected name and key strings")
    return ref["name"], ref["key"]


def find_markers(value: Any) -> list[tuple[str, str]]:
    """(name, key) of every credential marker in ``value``, in document order."""
    if is_marker(value):
        return [_ref(value)]
    if isinstance(value, dict):
        return [m for v in value.values() for m in find_markers(v)]
    if isinstance(value, list):
        return [m for v in value for m in find_markers(v)]
    return []


def _as_text(value: Any) -> str:
    """A config value as Secret string data (``--path`` stores numbers and booleans typed)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


class Credentials:
    """The ``kubetrain:credentials`` of the running stack, read once, as secret outputs.

    ``where`` names the component in problems. Which credentials exist is checked before any
    resource is registered, from the names and keys only.
    """

    def __init__(self, where: str) -> None:
        self.where = where
        self._secret: pulumi.Output[Any] | None = None

    def _problem(self, path: tuple[str, ...], message: str) -> InputError:
        return InputError([Problem(self.where, None, (CONFIG_KEY, *path), message)])

    def check(self, wanted: list[tuple[str, str]]) -> None:
        """Fail with every credential ``wanted`` that the stack does not set, and when the
        credentials were not set as secrets."""
        if not wanted:
            return
        raw = pulumi.runtime.get_config(CONFIG_KEY)
        how = "set it with `pulumi config set --secret --path '{}.{}.{}' VALUE`"
        if raw is None:
            name, key = wanted[0]
            raise self._problem((), "is not set; " + how.format(CONFIG_KEY, name, key))
        if not pulumi.runtime.is_config_secret(CONFIG_KEY):
            raise self._problem(
                (),
                "holds no secret value: set credentials with `pulumi config set --secret "
                "--path`, never in plain text",
            )
        try:
            names = json.loads(raw)
        except ValueError:
            names = None
        if not isinstance(names, dict):
            raise self._problem((), "must be a mapping: credential name -> key -> value")
        problems = []
        for name, key in dict.fromkeys(wanted):
            keys = names.get(name)
            if not isinstance(keys, dict) or key not in keys:
                problems.append(
                    Problem(
                        self.where,
                        None,
                        (CONFIG_KEY, name, key),
                        "is not set; " + how.format(CONFIG_KEY, name, key),
                    )
                )
            elif key == DOCKER_CONFIG and not _is_docker_config(keys[key]):
                # The server refuses a kubernetes.io/dockerconfigjson Secret whose
                # .dockerconfigjson is no JSON object (seen at the first `pulumi up`); said
                # here, before anything is registered, and without the value.
                problems.append(
                    Problem(
                        self.where,
                        None,
                        (CONFIG_KEY, name, key),
                        "is not a docker config: a JSON object such as "
                        '{"auths": {"REGISTRY": {"auth": "BASE64(user:password)"}}} '
                        "(e.g. the content of ~/.docker/config.json)",
                    )
                )
        if problems:
            raise InputError(problems)

    def value(self, name: str, key: str) -> pulumi.Output[str]:
        """The credential ``name``/``key`` as a secret output."""
        if self._secret is None:
            self._secret = pulumi.Config("kubetrain").require_secret_object("credentials")
        return self._secret.apply(lambda creds: _as_text(creds[name][key]))

    def resolve(self, value: Any) -> Any:
        """``value`` with every marker replaced by its secret output (a new structure)."""
        if is_marker(value):
            return self.value(*_ref(value))
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        return value
