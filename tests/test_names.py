"""Names in one place (kubetrain/builders/names.py): a Kubeflow job's pods, Services and every
host its env vars name come from one rule, so renaming the rule renames every address, and each
address is a Service the job renders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_trainjob import build, container, native, pick, rjob, trainjob

from kubetrain.builders import names as names_module
from kubetrain.builders.names import ReplicaNames

from conftest import REPO, needs_upstream_runtimes
from helpers import objects, replica_pods, stack_from

EXAMPLES = REPO / "stacks" / "kubeflow-examples"

#: One example per Kubeflow kind, and the env vars its pods reach their peers by.
CASES = {
    "xgboost-iris-train": ("MASTER_ADDR", "WORKER_ADDRS"),
    "jax-cpu-demo": ("COORDINATOR_ADDRESS",),
    "paddle-simple-cpu": ("PADDLE_MASTER",),
    "pytorch-simple": ("MASTER_ADDR", "PET_MASTER_ADDR"),
    "pytorch-elastic-echo": ("PET_RDZV_ENDPOINT",),
    "dist-mnist": ("TF_CONFIG",),
}
WORKLOADS = ("pod", "job", "jobset")


def _build(tmp_path: Path, example: str, workload: str) -> list[dict[str, Any]]:
    tmp_path.mkdir(exist_ok=True)
    (doc,) = [d for d in yaml.safe_load_all((EXAMPLES / f"{example}.yaml").read_text()) if d]
    config = {"kubetrain:namespace": "ml", "kubetrain:jobs": [doc]}
    return objects(stack_from(tmp_path, {**config, "kubetrain:nativeWorkload": workload}))


def _hosts(name: str, value: str) -> list[str]:
    """The hosts one env var names: ``host[:port]``, comma lists, TF_CONFIG's cluster (FQDNs
    ``<service>.<namespace>.svc``), never the pod's own ``$(POD_IP_DUMMY)``."""
    if name == "TF_CONFIG":
        cluster = json.loads(value)["cluster"]
        addresses = [a for peers in cluster.values() for a in peers]
    else:
        addresses = value.split(",")
    hosts = [a.rpartition(":")[0] if ":" in a else a for a in addresses]
    return [h.removesuffix(".ml.svc") for h in hosts if not h.startswith("$(")]


def addresses(objs: list[dict[str, Any]], wanted: tuple[str, ...]) -> list[tuple[str, str, str]]:
    """(pod, env var, host) of every host the pods' env vars of ``wanted`` name."""
    out = []
    for pod, template in sorted(replica_pods(objs).items()):
        for c in template["spec"]["containers"]:
            for e in c.get("env") or ():
                if e["name"] in wanted and "value" in e:
                    out += [(pod, e["name"], h) for h in _hosts(e["name"], e["value"])]
    return out


def _services(objs: list[dict[str, Any]]) -> set[str]:
    return {
        o["metadata"]["name"] for o in objs if (o["apiVersion"], o["kind"]) == ("v1", "Service")
    }


def _renamed(self: ReplicaNames, rtype: str, index: int) -> str:
    return f"{self.job}-{rtype.lower()}-n{index}"


@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("example", sorted(CASES))
def test_renaming_the_pod_name_rule_renames_every_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, example: str, workload: str
) -> None:
    wanted = CASES[example]
    before = _build(tmp_path / "before", example, workload)
    named_before = addresses(before, wanted)
    assert {var for _, var, _ in named_before} == set(wanted)  # every variable was read
    assert {h for _, _, h in named_before} <= _services(before)

    monkeypatch.setattr(ReplicaNames, "pod", _renamed)
    after = _build(tmp_path / "after", example, workload)
    named_after = addresses(after, wanted)
    # The same addresses, each now under the new rule, each a Service the job renders.
    assert len(named_after) == len(named_before)
    services = _services(after)
    assert services.isdisjoint(_services(before))
    for (_, var, old), (pod, var_after, new) in zip(named_before, named_after, strict=True):
        assert var_after == var
        assert new in services, f"{pod} {var} names {new}, which is no Service rendered"
        assert new != old and new.rpartition("-")[2].startswith("n"), new
    # The pods themselves follow it too.
    pods = replica_pods(after)
    assert pods and all(pod.rpartition("-")[2].startswith("n") for pod in pods)


def test_a_host_no_service_answers_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rule every expansion checks: each host an env var names is a Service it renders."""

    def stray(self: ReplicaNames, rtype: str, index: int) -> str:
        self.hosts_named["nowhere-0"] = None
        return "nowhere-0"

    monkeypatch.setattr(ReplicaNames, "host", stray)
    with pytest.raises(RuntimeError, match=r"env names hosts \['nowhere-0'\] that are no Service"):
        _build(tmp_path, "jax-cpu-demo", "pod")


def test_the_names_of_one_replica() -> None:
    names = ReplicaNames("bert", "ml", "cluster.local")
    assert names.pod("Worker", 3) == names.service("Worker", 3) == "bert-worker-3"
    assert names.pod("a/b", 0) == "bert-a-b-0"  # GenGeneralName's "/" -> "-"
    assert names.replicated_job("Master", 0) == "master-0"
    assert names.host("Master", 0) == "bert-master-0"
    assert names.fqdn("PS", 1) == "bert-ps-1.ml.svc.cluster.local"
    assert list(names.hosts_named) == ["bert-master-0", "bert-ps-1"]
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "bert-ps-1"}}
    assert names.unrendered(
        [{**service, "metadata": {**service["metadata"], "namespace": "ml"}}]
    ) == ["bert-master-0"]
    # A Service of another namespace, or another group's "Service", answers nothing.
    assert names.unrendered([{**service, "metadata": {"name": "bert-ps-1", "namespace": "x"}}]) == [
        "bert-master-0",
        "bert-ps-1",
    ]


#: A TrainJob's runtimes and the env vars its nodes reach node 0 by (JobSet pod hosts).
TRAINJOB_CASES = {
    "torch_distributed": ("torch-distributed", ("PET_MASTER_ADDR",)),
    "jax_distributed": ("jax-distributed", ("JAX_COORDINATOR_ADDRESS",)),
}


@needs_upstream_runtimes
@pytest.mark.parametrize("runtime", sorted(TRAINJOB_CASES))
def test_renaming_the_jobset_pod_rule_renames_a_trainjobs_addresses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: str
) -> None:
    ref, wanted = TRAINJOB_CASES[runtime]
    job = native(trainjob("bert", ref, trainer={"numNodes": 2}))

    def node_env(folder: Path) -> dict[str, str]:
        folder.mkdir()
        jobset = pick(build(folder, [job], [runtime]), "JobSet", "bert")
        env = container(rjob(jobset, "node")).get("env") or []
        return {e["name"]: e["value"] for e in env if e["name"] in wanted}

    before = node_env(tmp_path / "before")
    assert set(before) == set(wanted) and all("bert-node-0-0.bert" in v for v in before.values())
    rule = names_module.jobset_pod_host
    monkeypatch.setattr(
        names_module,
        "jobset_pod_host",
        lambda js, rj, j, p, sub: rule(js, rj, j, p, sub).replace("-0-0.", "-j0-p0."),
    )
    after = node_env(tmp_path / "after")
    assert set(after) == set(wanted)
    for var, value in after.items():
        assert value == before[var].replace("bert-node-0-0.bert", "bert-node-j0-p0.bert"), var
