"""The Pulumi program of a kubetrain project: ``pulumi up -s <env>`` deploys what
``kubetrain render --stack <env>`` writes.

A project's program (``stacks/__main__.py``, which ``kubetrain init`` writes) is one call to
:func:`main` with the folder Pulumi runs it from (``main`` in Pulumi.yaml). The ``kubetrain:*``
keys of the selected stack are read through ``pulumi.Config`` into the stack model the CLI uses
(:func:`kubetrain.models.load_stack_config`: same validation, ``jobFiles`` relative to the folder
holding Pulumi.yaml), then one component per job is created. ``kubetrain:credentials`` is not
read here: the components read it themselves, as secret outputs.
"""

from pathlib import Path

import pulumi
from pulumi.runtime import config as runtime_config

from kubetrain.models import KubetrainError, find_project_root, load_stack_config
from kubetrain.models.load import config_keys

from ._program import deploy_stack

__all__ = ["main", "read_config"]

NAMESPACE = "kubetrain"
#: The only key allowed to hold secrets; the components read it.
CREDENTIALS = "credentials"


def _configured_keys() -> set[str]:
    """Every kubetrain key the stack sets, so a misspelled one is reported rather than ignored
    (the known keys are always read; this adds the unknown ones)."""
    keys = set(runtime_config.CONFIG.get()) | set(runtime_config.get_config_env())
    prefix = f"{NAMESPACE}:"
    return {key.removeprefix(prefix) for key in keys if key.startswith(prefix)}


def read_config() -> dict[str, str]:
    """The stack's kubetrain config, keys without the prefix, values as Pulumi passes them."""
    config = pulumi.Config(NAMESPACE)
    values: dict[str, str] = {}
    for key in sorted((set(config_keys()) | _configured_keys()) - {CREDENTIALS}):
        if pulumi.runtime.is_config_secret(f"{NAMESPACE}:{key}"):
            raise pulumi.RunError(
                f"{NAMESPACE}:{key} is a secret, but only {NAMESPACE}:{CREDENTIALS} may hold "
                "secrets: other settings end up in plain text in Kubernetes objects"
            )
        value = config.get(key)
        if value is not None:
            values[key] = value
    return values


def main(here: Path) -> None:
    """Deploy the selected stack; ``here`` is the folder of the program and the stack files."""
    stack_name = pulumi.get_stack()
    try:
        stack = load_stack_config(
            read_config(),
            name=stack_name,
            project_root=find_project_root(here),
            file=here / f"Pulumi.{stack_name}.yaml",
        )
        components = deploy_stack(stack)
    except KubetrainError as exc:
        # Bad input: the problems, one per line, without a Python traceback.
        raise pulumi.RunError(str(exc)) from None
    pulumi.export("jobs", {name: c.exports() for name, c in components.items()})
