"""Field lists of pulumi-kubernetes' ``forceNew`` table (``provider/pkg/provider/diff.go``,
v4.32.0; unchanged on master of July 2026) shared by several kinds' rows."""

from __future__ import annotations

__all__ = ["container_fields", "selector"]


def container_fields(*prefixes: str) -> tuple[str, ...]:
    """``containerForceNewProperties``."""
    fields = (
        "args",
        "command",
        "env",
        "env.value",
        "image",
        "imagePullPolicy",
        "lifecycle",
        "livenessProbe",
        "ports",
        "readinessProbe",
        "resources",
        "securityContext",
        "stdin",
        "stdinOnce",
        "terminationMessagePath",
        "terminationMessagePolicy",
        "tty",
        "volumeDevices",
        "volumeMounts",
        "workingDir",
    )
    return tuple(f"{prefix}.{field}" for prefix in prefixes for field in fields)


def selector(prefix: str) -> tuple[str, ...]:
    """``labelSelectorForceNewProperties``."""
    return (
        prefix,
        f"{prefix}.matchExpressions",
        f"{prefix}.matchExpressions.key",
        f"{prefix}.matchExpressions.operator",
        f"{prefix}.matchExpressions.values",
        f"{prefix}.matchLabels",
    )
