"""External Secrets Operator (``external-secrets.io``): hand columns of its rows."""

from __future__ import annotations

from . import Scope, group, hand

GROUPS = (
    group(
        "external-secrets.io",
        hand("SecretStore", rank=7),
        hand("ExternalSecret", rank=8),
        hand("ClusterExternalSecret", scope=Scope.CLUSTER, plural="clusterexternalsecrets"),
    ),
)
