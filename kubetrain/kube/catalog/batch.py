"""The ``batch`` API group: hand columns of its rows (see :mod:`.core` for their sources)."""

from __future__ import annotations

from .. import immutable as im
from ..apiserver import batch as api
from ..apiserver.meta import dns_subdomain
from . import ApiChecks, Kueue, Life, Pods, group, hand
from ._pulumi import selector

GROUPS = (
    group(
        "batch",
        hand(
            "Job",
            rank=22,
            life=Life.REPLACED,
            pods=Pods(template=("spec", "template"), counts=(("spec", "parallelism"),)),
            gang=True,
            api=ApiChecks(dns_subdomain, api.validate_job),
            update_rules=im._job,
            pulumi_force_new=(
                "spec.completions",
                "spec.parallelism",
                "spec.template",
                *selector("spec.selector"),
            ),
            pulumi_replace_on_changes=(
                "spec.completionMode",
                "spec.podFailurePolicy",
                "spec.successPolicy",
                "spec.backoffLimitPerIndex",
                "spec.managedBy",
            ),
            kueue=Kueue(("spec",), multikueue=True),
        ),
        hand(
            "CronJob",
            rank=23,
            pods=Pods(
                template=("spec", "jobTemplate", "spec", "template"),
                counts=(("spec", "jobTemplate", "spec", "parallelism"),),
            ),
            api=ApiChecks(dns_subdomain, api.validate_cron_job),
        ),
    ),
)
