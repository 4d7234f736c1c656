"""What torchrun makes of the env kubetrain gives every PyTorchJob pod.

torchrun reads each of its flags from ``PET_<FLAG>`` when the flag is not on its command line
(``torch/distributed/argparse_util.py``, ``env``; torch 2.13.0, read from the wheel), with the
defaults of ``torch/distributed/run.py`` ``get_args_parser``: ``--nnodes 1:1``,
``--nproc-per-node 1``, ``--rdzv-backend static``, ``--rdzv-endpoint ""``, ``--node-rank 0``,
``--master-addr 127.0.0.1``, ``--master-port`` 29500. With the static backend and no endpoint,
the rendezvous is ``<master-addr>:<master-port>`` (``get_rdzv_endpoint``). :func:`torchrun_view`
mirrors that for a pod's env; the tests check that every pod of Kubeflow's PyTorchJob examples
(``stacks/kubeflow-examples/pytorch-*.yaml``) rendezvouses at one endpoint, served by a headless
Service of the job that selects the rank-0 pod, under every native workload, and that the
static ranks are 0..n-1.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import REPO
from helpers import objects, replica_pods, stack_from

EXAMPLES = sorted((REPO / "stacks" / "kubeflow-examples").glob("pytorch-*.yaml"))
WORKLOADS = ("pod", "job", "jobset")


@dataclass(frozen=True)
class TorchrunArgs:
    nnodes: str
    nproc_per_node: str
    rdzv_backend: str
    rdzv_endpoint: str
    node_rank: int


def torchrun_view(env: dict[str, str]) -> TorchrunArgs:
    """torchrun's arguments when started with no flags in a container with ``env``."""

    def flag(name: str, default: str) -> str:
        return env.get(f"PET_{name.upper()}", default)

    backend = flag("rdzv_backend", "static")
    endpoint = flag("rdzv_endpoint", "")
    if backend == "static" and not endpoint:
        endpoint = f"{flag('master_addr', '127.0.0.1')}:{flag('master_port', '29500')}"
    return TorchrunArgs(
        nnodes=flag("nnodes", "1:1"),
        nproc_per_node=flag("nproc_per_node", "1"),
        rdzv_backend=backend,
        rdzv_endpoint=endpoint,
        node_rank=int(flag("node_rank", "0")),
    )


def main_env(pod: dict[str, Any]) -> dict[str, str]:
    (container,) = [c for c in pod["spec"]["containers"] if c["name"] == "pytorch"]
    return {e["name"]: e["value"] for e in container.get("env", []) if "value" in e}


def test_the_mirror_follows_torchruns_defaults() -> None:
    """The mirror can tell a pod without the master's address: it lands on 127.0.0.1."""
    assert torchrun_view({}).rdzv_endpoint == "127.0.0.1:29500"
    assert torchrun_view({"PET_MASTER_ADDR": "m", "PET_MASTER_PORT": "1"}).rdzv_endpoint == "m:1"
    elastic = {"PET_RDZV_BACKEND": "c10d", "PET_RDZV_ENDPOINT": "w-0:2", "PET_MASTER_ADDR": "m"}
    assert torchrun_view(elastic).rdzv_endpoint == "w-0:2"


@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_pod_reaches_one_rendezvous_served_by_the_job(
    tmp_path: Path, example: Path, workload: str
) -> None:
    docs = [d for d in yaml.safe_load_all(example.read_text()) if d]
    objs = objects(
        stack_from(
            tmp_path,
            {
                "kubetrain:namespace": "ml",
                "kubetrain:nativeWorkload": workload,
                "kubetrain:external": {"persistentVolumeClaims": ["strategy-volume"]},
                "kubetrain:jobs": docs,
            },
        )
    )
    pods = replica_pods(objs)
    assert len(pods) >= 2, "every example is distributed"
    views = {name: torchrun_view(main_env(pod)) for name, pod in pods.items()}
    endpoints = {v.rdzv_endpoint for v in views.values()}
    assert len(endpoints) == 1, endpoints
    host, port = next(iter(endpoints)).rsplit(":", 1)
    assert not host.startswith("127."), "every pod would rendezvous with itself"
    # The endpoint is a headless Service of the job, exposing the port, selecting one pod.
    services = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Service"}
    service = services[host]
    assert int(port) in [p["port"] for p in service["spec"]["ports"]]
    selected = [
        name
        for name, pod in pods.items()
        if all(
            pod["metadata"]["labels"].get(k) == v for k, v in service["spec"]["selector"].items()
        )
    ]
    assert selected == [host]
    if views[host].rdzv_backend == "static":
        # Static rendezvous: ranks 0..n-1, rank 0 on the endpoint's pod, n as PET_NNODES.
        assert sorted(v.node_rank for v in views.values()) == list(range(len(views)))
        assert views[host].node_rank == 0
        assert {v.nnodes for v in views.values()} == {str(len(views))}
    else:
        low, high = next(iter({v.nnodes for v in views.values()})).split(":")
        assert int(low) <= len(views) <= int(high)
