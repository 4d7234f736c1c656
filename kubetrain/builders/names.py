"""Every name a replica job's expansion derives, in one place: its pods, their Services, the
hosts its env vars name, and the JobSet's replicated jobs.

Upstream names a pod and builds the addresses its peers reach it at with the same function
(training-operator v1.9.0 ``pkg/core/utils.go`` ``GenGeneralName``, which the kinds'
``replicaName`` and ``genClusterSpec`` call): so does kubetrain. The builders of the
Kubeflow kinds and every env hook of theirs (MASTER_ADDR, COORDINATOR_ADDRESS, WORKER_ADDRS,
PADDLE_MASTER, the rendezvous host, TF_CONFIG) ask a :class:`ReplicaNames`, which remembers
each host it handed out, and the expansion checks that every one is a Service it renders
(:meth:`ReplicaNames.unrendered`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..kube import catalog

__all__ = ["ReplicaNames", "jobset_pod_host"]


class ReplicaNames:
    """The names of one replica job (``job`` in ``namespace``)."""

    def __init__(self, job: str, namespace: str, cluster_domain: str | None = None) -> None:
        self.job = job
        self.namespace = namespace
        self.cluster_domain = cluster_domain
        #: Every Service an env var was given the host of, in the order asked.
        self.hosts_named: dict[str, None] = {}

    def pod(self, rtype: str, index: int) -> str:
        """``<job>-<type>-<index>`` (``GenGeneralName``: the type in lower case, ``/`` as
        ``-``): the pod of one replica, and the name of its headless Service."""
        return f"{self.job}-{rtype.lower()}-{index}".replace("/", "-")

    def service(self, rtype: str, index: int) -> str:
        """The headless Service of one replica: named as its pod."""
        return self.pod(rtype, index)

    def replicated_job(self, rtype: str, index: int) -> str:
        """The replicatedJob ``<type>-<index>`` of one replica in a JobSet (jobset mode)."""
        return f"{rtype.lower()}-{index}"

    def host(self, rtype: str, index: int) -> str:
        """The short host name of one replica, as the operator writes it into env vars: its
        Service's name (pods resolve it in their own namespace)."""
        service = self.service(rtype, index)
        self.hosts_named[service] = None
        return service

    def fqdn(self, rtype: str, index: int) -> str:
        """``<service>.<namespace>.svc``, plus ``.<clusterDomain>`` when the stack sets one (the
        host TF_CONFIG names)."""
        service = self.service(rtype, index)
        self.hosts_named[service] = None
        domain = self.cluster_domain
        return f"{service}.{self.namespace}.svc" + (f".{domain}" if domain else "")

    def unrendered(self, objs: Iterable[Mapping[str, Any]]) -> list[str]:
        """The hosts handed out that no Service of ``objs`` (in the job's namespace) is."""
        services = {
            str((o.get("metadata") or {}).get("name"))
            for o in objs
            if catalog.of(o).key == SERVICE
            and (o.get("metadata") or {}).get("namespace") == self.namespace
        }
        return [host for host in self.hosts_named if host not in services]


SERVICE = catalog.GroupKind("", "Service")


def jobset_pod_host(
    jobset: str, replicated_job: str, job_index: int, pod_index: int, subdomain: str
) -> str:
    """``<jobset>-<replicatedJob>-<jobIndex>-<podIndex>.<subdomain>``: the host of one pod of a
    JobSet (JobSet v0.9.1 ``pkg/util/placement`` ``GenPodName``, under the JobSet's headless
    Service), as Kubeflow Trainer's env and rendezvous name it (``IdentifyPodNetwork``)."""
    return f"{jobset}-{replicated_job}-{job_index}-{pod_index}.{subdomain}"
