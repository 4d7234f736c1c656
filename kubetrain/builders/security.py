"""Pod Security Standards: the securityContext a stack's level asks builders to write.

``kubetrain:podSecurity`` names the Pod Security Standards level every pod template must meet
(``validate``'s ``pod-security`` rule checks it). ``baseline`` (the default) and ``privileged``
need nothing from the builders: a pod without a securityContext meets baseline. ``restricted``
does, and :func:`apply_pod_security` writes it, without overriding what the job already says:

* pod: ``runAsNonRoot: true`` and ``seccompProfile: {type: RuntimeDefault}``;
* every container (init and ephemeral too): ``allowPrivilegeEscalation: false`` and
  ``capabilities.drop: [ALL]``.

A value the job sets itself and that breaks the level (``runAsUser: 0``, an added capability) is
left as written and reported by ``validate``. ``runAsNonRoot`` makes the kubelet refuse images
whose user is root: such images need a numeric ``runAsUser`` in the job's pod template.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CONTAINER_FIELDS", "apply_pod_security", "restricted_security_context"]

#: The fields of a pod spec that hold containers.
CONTAINER_FIELDS = ("initContainers", "containers", "ephemeralContainers")


def restricted_security_context(pod_spec: dict[str, Any]) -> dict[str, Any]:
    """Write the securityContext the ``restricted`` level requires into ``pod_spec`` (in place)
    where the pod spec does not set it. Returns ``pod_spec``."""
    pod_context = pod_spec.setdefault("securityContext", {})
    pod_context.setdefault("runAsNonRoot", True)
    pod_context.setdefault("seccompProfile", {"type": "RuntimeDefault"})
    for field in CONTAINER_FIELDS:
        for container in pod_spec.get(field) or ():
            context = container.setdefault("securityContext", {})
            context.setdefault("allowPrivilegeEscalation", False)
            drop = context.setdefault("capabilities", {}).setdefault("drop", [])
            if "ALL" not in drop:
                drop.append("ALL")
    return pod_spec


def apply_pod_security(pod_spec: dict[str, Any], level: str) -> dict[str, Any]:
    """Make ``pod_spec`` meet Pod Security Standards ``level`` where a builder can (in place)."""
    if level == "restricted":
        restricted_security_context(pod_spec)
    return pod_spec
