"""The ``rbac.authorization.k8s.io`` API group: hand columns of its rows (see :mod:`.core`)."""

from __future__ import annotations

from .. import immutable as im
from ..apiserver import rbac as api
from ..apiserver.meta import path_segment
from . import ApiChecks, Scope, group, hand

GROUPS = (
    group(
        "rbac.authorization.k8s.io",
        hand(
            "ClusterRole",
            scope=Scope.CLUSTER,
            rank=12,
            api=ApiChecks(path_segment, api.validate_role),
        ),
        hand(
            "ClusterRoleBinding",
            scope=Scope.CLUSTER,
            rank=13,
            api=ApiChecks(path_segment, api.validate_binding),
            update_rules=im._role_binding,
            pulumi_force_new=("roleRef",),
        ),
        hand(
            "Role",
            rank=14,
            api=ApiChecks(path_segment, api.validate_role),
        ),
        hand(
            "RoleBinding",
            rank=15,
            api=ApiChecks(path_segment, api.validate_binding),
            update_rules=im._role_binding,
            pulumi_force_new=("roleRef",),
        ),
    ),
)
