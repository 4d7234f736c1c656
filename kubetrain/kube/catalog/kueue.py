"""Kueue (``kueue.x-k8s.io``, v0.19.2): hand columns of its rows."""

from __future__ import annotations

from .. import immutable as im
from . import Scope, group, hand

GROUPS = (
    group(
        "kueue.x-k8s.io",
        hand(
            "ClusterQueue",
            # pkg/webhooks/clusterqueue_webhook.go Default marshals resource.Quantity.
            webhook_quantities=tuple(
                ("spec", "resourceGroups", "[]", "flavors", "[]", "resources", "[]", field)
                for field in ("nominalQuota", "borrowingLimit", "lendingLimit")
            ),
        ),
        hand("LocalQueue", update_rules=im._localqueue),
        # MultiKueue's kinds (config/components/crd/bases at v0.19.2), which kubetrain writes.
        hand("AdmissionCheck", scope=Scope.CLUSTER, plural="admissionchecks"),
        hand("MultiKueueConfig", scope=Scope.CLUSTER, plural="multikueueconfigs"),
        hand("MultiKueueCluster", scope=Scope.CLUSTER, plural="multikueueclusters"),
    ),
)
