"""MPIJob (kubeflow.org/v2beta1) against mpi-operator v0.8.0, read at the tag:
pkg/controller/mpi_job_controller.go (newConfigMap, updateDiscoverHostsInConfigMap,
newJobService, newWorker, newLauncherJob, newLauncherPodTemplate, setupSSHOnPod,
workerReplicaIndexLabel, the env tables), pkg/apis/kubeflow/v2beta1/default.go and
pkg/apis/kubeflow/validation/validation.go. Expectations are written from those functions."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from kubetrain.builders import BuildContext, build_job
from kubetrain.models import load_job

from conftest import REPO, needs_upstream_crds
from helpers import objects, pick, stack_from

EXAMPLES = REPO / "stacks" / "mpi-operator-examples"
CRD = REPO.parent / "shared" / "crds" / "kubeflow.org" / "kubeflow.org_mpijobs.yaml"
STORE = {"kind": "ClusterSecretStore", "name": "vault"}


def example(name: str) -> dict[str, Any]:
    (doc,) = [d for d in yaml.safe_load_all((EXAMPLES / f"{name}.yaml").read_text()) if d]
    return doc


def mpijob(workers: int = 2, **spec: Any) -> dict[str, Any]:
    def replica(name: str, n: int) -> dict[str, Any]:
        return {
            "replicas": n,
            "template": {"spec": {"containers": [{"name": name, "image": "m:1"}]}},
        }

    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "pi"},
        "spec": {
            "mpiReplicaSpecs": {"Launcher": replica("l", 1), "Worker": replica("w", workers)},
            **spec,
        },
    }


def build(tmp_path: Path, doc: dict[str, Any], **config: Any) -> list[dict[str, Any]]:
    cfg = {"kubetrain:namespace": "hpc", "kubetrain:secretStore": STORE, "kubetrain:jobs": [doc]}
    cfg.update({f"kubetrain:{k}": v for k, v in config.items()})
    return objects(stack_from(tmp_path, cfg))


def mkdir(path: Path) -> Path:
    path.mkdir()
    return path


def env_of(container: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(e["name"], e.get("value")) for e in container.get("env", [])]


def launcher_pod(objs: list[dict[str, Any]]) -> dict[str, Any]:
    return pick(objs, "Job", "pi-launcher")["spec"]["template"]


@pytest.mark.parametrize(
    ("implementation", "line"),
    [
        (None, "pi-worker-0.pi.hpc.svc slots=3\n"),
        ("OpenMPI", "pi-worker-0.pi.hpc.svc slots=3\n"),
        ("Intel", "pi-worker-0.pi.hpc.svc:3\n"),
        ("MPICH", "pi-worker-0.pi.hpc.svc:3\n"),
    ],
)
def test_the_hostfile_has_one_line_per_worker_in_the_implementations_format(
    tmp_path: Path, implementation: str | None, line: str
) -> None:
    """newConfigMap: ``<pod>.<job>.<namespace>.svc`` per worker, ``slots=<n>`` for OpenMPI and
    ``:<n>`` for Intel MPI and MPICH."""
    spec: dict[str, Any] = {"slotsPerWorker": 3}
    if implementation:
        spec["mpiImplementation"] = implementation
    config = pick(build(tmp_path, mpijob(2, **spec)), "ConfigMap", "pi-config")
    hostfile = config["data"]["hostfile"]
    assert hostfile.splitlines(keepends=True) == [line, line.replace("worker-0", "worker-1")]
    assert config["metadata"]["labels"] == {"app": "pi"}


def test_the_launcher_as_a_worker_comes_first_with_the_cluster_domain(tmp_path: Path) -> None:
    objs = build(tmp_path, mpijob(2, runLauncherAsWorker=True), clusterDomain="cluster.local")
    data = pick(objs, "ConfigMap", "pi-config")["data"]
    assert data["hostfile"] == (
        "pi-launcher.pi.hpc.svc.cluster.local slots=1\n"
        "pi-worker-0.pi.hpc.svc.cluster.local slots=1\n"
        "pi-worker-1.pi.hpc.svc.cluster.local slots=1\n"
    )
    assert data["discover_hosts.sh"].splitlines()[:2] == [
        "#!/bin/sh",
        "echo pi-launcher.pi.hpc.svc.cluster.local",
    ]
    # publishNotReadyAddresses, so the launcher is reachable before it is ready.
    assert pick(objs, "Service", "pi")["spec"]["publishNotReadyAddresses"] is True
    # workerReplicaIndexLabel: the workers' indexes shift by one, the launcher is 0.
    assert (
        pick(objs, "Pod", "pi-worker-0")["metadata"]["labels"][
            "training.kubeflow.org/replica-index"
        ]
        == "1"
    )
    launcher = launcher_pod(objs)
    assert launcher["metadata"]["labels"]["training.kubeflow.org/replica-index"] == "0"
    # The launcher keeps its GPUs: no NVIDIA variables emptied.
    assert "NVIDIA_VISIBLE_DEVICES" not in dict(env_of(launcher["spec"]["containers"][0]))


def test_discover_hosts_lists_the_workers_sorted_by_pod_name(tmp_path: Path) -> None:
    """updateDiscoverHostsInConfigMap sorts the pods by name (as strings: worker-10 first)."""
    script = pick(build(tmp_path, mpijob(11)), "ConfigMap", "pi-config")["data"]
    lines = script["discover_hosts.sh"].splitlines()
    assert lines[0] == "#!/bin/sh"
    assert lines[1:4] == [
        "echo pi-worker-0.pi.hpc.svc",
        "echo pi-worker-1.pi.hpc.svc",
        "echo pi-worker-10.pi.hpc.svc",
    ]
    assert len(lines) == 12


def test_the_service_selects_every_pod_of_the_job(tmp_path: Path) -> None:
    service = pick(build(tmp_path, mpijob()), "Service", "pi")
    assert service["spec"] == {
        "clusterIP": "None",
        "selector": {
            "training.kubeflow.org/job-name": "pi",
            "training.kubeflow.org/operator-name": "mpi-operator",
        },
    }


@pytest.mark.parametrize(
    ("implementation", "expected"),
    [
        (
            "OpenMPI",
            [
                ("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
                ("OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile"),
                ("OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"),
                ("OMPI_MCA_orte_set_default_slots", "2"),
            ],
        ),
        (
            "Intel",
            [
                ("I_MPI_HYDRA_HOST_FILE", "/etc/mpi/hostfile"),
                ("I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", "-o ConnectionAttempts=10"),
                ("I_MPI_PERHOST", "2"),
            ],
        ),
        (
            "MPICH",
            [
                ("HYDRA_HOST_FILE", "/etc/mpi/hostfile"),
                ("HYDRA_LAUNCH_EXTRA_ARGS", "-o ConnectionAttempts=10"),
            ],
        ),
    ],
)
def test_the_launchers_env_per_implementation(
    tmp_path: Path, implementation: str, expected: list[tuple[str, str]]
) -> None:
    """newLauncherPodTemplate: K_MPI_JOB_ROLE, the implementation's variables (and slots), then
    NVIDIA_VISIBLE_DEVICES and NVIDIA_DRIVER_CAPABILITIES with no value; on the first container
    only."""
    doc = mpijob(2, slotsPerWorker=2, mpiImplementation=implementation)
    doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"].append(
        {"name": "sidecar", "image": "s:1"}
    )
    pod = launcher_pod(build(tmp_path, doc))
    first, sidecar = pod["spec"]["containers"]
    assert env_of(first) == [
        ("K_MPI_JOB_ROLE", "launcher"),
        *expected,
        ("NVIDIA_VISIBLE_DEVICES", None),
        ("NVIDIA_DRIVER_CAPABILITIES", None),
    ]
    assert "env" not in sidecar
    assert {"name": "mpi-job-config", "mountPath": "/etc/mpi"} in first["volumeMounts"]
    config = next(v for v in pod["spec"]["volumes"] if v["name"] == "mpi-job-config")
    assert config["configMap"]["items"] == [
        {"key": "hostfile", "path": "hostfile", "mode": 0o444},
        {"key": "discover_hosts.sh", "path": "discover_hosts.sh", "mode": 0o555},
    ]
    assert pod["spec"]["hostname"] == "pi-launcher" and pod["spec"]["subdomain"] == "pi"
    assert pod["spec"]["restartPolicy"] == "OnFailure"  # DefaultLauncherRestartPolicy


def test_a_worker_pod(tmp_path: Path) -> None:
    """newWorker: hostname and subdomain, the search domain (always cluster.local), sshd -De
    when the container has no command or args, K_MPI_JOB_ROLE, restart policy Never, labels."""
    objs = build(tmp_path, mpijob(), clusterDomain="example.internal")
    pod = pick(objs, "Pod", "pi-worker-1")
    spec = pod["spec"]
    assert (spec["hostname"], spec["subdomain"]) == ("pi-worker-1", "pi")
    assert spec["dnsConfig"] == {"searches": ["pi.hpc.svc.cluster.local"]}
    (container,) = spec["containers"]
    assert container["command"] == ["/usr/sbin/sshd", "-De"]
    assert env_of(container) == [("K_MPI_JOB_ROLE", "worker")]
    assert spec["restartPolicy"] == "Never"
    labels = pod["metadata"]["labels"]
    assert {k: v for k, v in labels.items() if k.startswith("training.kubeflow.org/")} == {
        "training.kubeflow.org/job-name": "pi",
        "training.kubeflow.org/job-role": "worker",
        "training.kubeflow.org/operator-name": "mpi-operator",
        "training.kubeflow.org/replica-index": "1",
    }


def test_a_worker_with_args_keeps_its_command(tmp_path: Path) -> None:
    """The Intel example gives args (and an empty command): no sshd command is added."""
    objs = build(tmp_path, example("pi-intel"))
    (container,) = pick(objs, "Pod", "pi-worker-0")["spec"]["containers"]
    assert "command" not in container
    assert container["args"][0] == "/usr/sbin/sshd"


@pytest.mark.parametrize(("path", "mode"), [(None, 0o600), ("/home/mpiuser/.ssh", None)])
def test_the_ssh_key_pair_is_mounted_on_every_pod(
    tmp_path: Path, path: str | None, mode: int | None
) -> None:
    """setupSSHOnPod: id_rsa, id_rsa.pub and authorized_keys from <job>-ssh on the first
    container, defaultMode 0600 only under /root/.ssh."""
    doc = mpijob(1, **({"sshAuthMountPath": path} if path else {}))
    objs = build(tmp_path, doc)
    for pod in (pick(objs, "Pod", "pi-worker-0"), launcher_pod(objs)):
        volume = next(v for v in pod["spec"]["volumes"] if v["name"] == "ssh-auth")
        assert volume["secret"].get("defaultMode") == mode
        assert volume["secret"]["secretName"] == "pi-ssh"
        assert [i["path"] for i in volume["secret"]["items"]] == [
            "id_rsa",
            "id_rsa.pub",
            "authorized_keys",
        ]
        mounts = pod["spec"]["containers"][0]["volumeMounts"]
        assert {"name": "ssh-auth", "mountPath": path or "/root/.ssh"} in mounts


def test_the_key_pair_comes_from_the_secret_store_never_from_kubetrain(tmp_path: Path) -> None:
    """Render mode: an ExternalSecret of type ssh-auth reading the credential; Pulumi mode: a
    Secret whose values are credential markers. No key material in either."""
    objs = build(tmp_path, mpijob())
    external = pick(objs, "ExternalSecret", "pi-ssh")
    assert external["spec"]["target"]["template"]["type"] == "kubernetes.io/ssh-auth"
    assert [(d["secretKey"], d["remoteRef"]) for d in external["spec"]["data"]] == [
        ("ssh-privatekey", {"key": "pi-ssh", "property": "ssh-privatekey"}),
        ("ssh-publickey", {"key": "pi-ssh", "property": "ssh-publickey"}),
    ]
    document = mpijob()
    document["metadata"]["namespace"] = "hpc"
    document["metadata"]["annotations"] = {"kubetrain.io/ssh-credential": "team/keys"}
    loaded, settings = load_job(document, settings={}, file="t")
    (secret,) = [
        m for m in build_job(loaded, BuildContext(settings, "pulumi")) if m["kind"] == "Secret"
    ]
    assert secret["type"] == "kubernetes.io/ssh-auth"
    assert secret["stringData"] == {
        "ssh-privatekey": {"$kubetrainCredential": {"name": "team/keys", "key": "ssh-privatekey"}},
        "ssh-publickey": {"$kubetrainCredential": {"name": "team/keys", "key": "ssh-publickey"}},
    }


def test_the_launcher_job_carries_the_run_policy(tmp_path: Path) -> None:
    doc = mpijob(runPolicy={"backoffLimit": 2, "activeDeadlineSeconds": 600, "suspend": True})
    job = pick(build(tmp_path, doc), "Job", "pi-launcher")
    assert (job["spec"]["backoffLimit"], job["spec"]["activeDeadlineSeconds"]) == (2, 600)
    assert job["spec"]["suspend"] is True
    assert job["metadata"]["labels"] == {"app": "pi"}


@pytest.mark.parametrize("version", ["1.27", "1.33"])
def test_the_launcher_job_is_replaced_only_once_failed(tmp_path: Path, version: str) -> None:
    """newLauncherJob (v0.8.2): podReplacementPolicy Failed, where the cluster serves it."""
    job = pick(build(tmp_path, mpijob(), kubernetesVersion=version), "Job", "pi-launcher")
    assert job["spec"].get("podReplacementPolicy") == ("Failed" if version == "1.33" else None)


@pytest.mark.parametrize("gang", ["none", "volcano"])
def test_a_suspended_mpijob_has_no_workers_and_no_pod_group(tmp_path: Path, gang: str) -> None:
    """syncHandler (v0.8.2) creates no PodGroup and no workers while suspended; resumed, they
    are rendered again."""
    suspended = mpijob(runPolicy={"suspend": True})
    kinds = sorted(o["kind"] for o in build(mkdir(tmp_path / "s"), suspended, gangScheduler=gang))
    assert kinds == ["ConfigMap", "ExternalSecret", "Job", "Service"]
    resumed = mpijob(runPolicy={"suspend": False})
    objs = build(mkdir(tmp_path / "r"), resumed, gangScheduler=gang)
    assert [o["metadata"]["name"] for o in objs if o["kind"] == "Pod"] == [
        "pi-worker-0",
        "pi-worker-1",
    ]
    assert any(o["kind"] == "PodGroup" for o in objs) == (gang == "volcano")


def test_native_mode_says_what_only_the_operator_does(tmp_path: Path, run) -> None:
    (tmp_path / "stacks").mkdir()
    (tmp_path / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\n")
    doc = example("tensorflow-benchmarks")
    doc["spec"]["launcherCreationPolicy"] = "WaitForWorkersReady"
    config = {"kubetrain:secretStore": STORE, "kubetrain:jobs": [doc]}
    (tmp_path / "stacks" / "Pulumi.t.yaml").write_text(yaml.safe_dump({"config": config}))
    result = run("render", "--stdout", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert "spec.runPolicy.cleanPodPolicy: warning:" in result.stderr
    assert "no controller deletes the workers" in result.stderr
    assert "spec.launcherCreationPolicy: warning:" in result.stderr


@needs_upstream_crds
def test_operator_mode_emits_the_defaulted_mpijob_valid_against_its_crd(tmp_path: Path) -> None:
    (cr,) = build(tmp_path, example("pi"), mode="operator")
    spec = cr["spec"]
    assert (spec["slotsPerWorker"], spec["sshAuthMountPath"]) == (1, "/home/mpiuser/.ssh")
    assert (spec["mpiImplementation"], spec["launcherCreationPolicy"]) == ("OpenMPI", "AtStartup")
    assert spec["mpiReplicaSpecs"]["Launcher"]["restartPolicy"] == "OnFailure"
    assert spec["mpiReplicaSpecs"]["Worker"]["restartPolicy"] == "Never"
    crd = yaml.safe_load(CRD.read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v2beta1"]
    validator = jsonschema.Draft7Validator(version["schema"]["openAPIV3Schema"])
    assert sorted(e.message for e in validator.iter_errors(cr)) == []
    broken = copy.deepcopy(cr)
    broken["spec"]["mpiImplementation"] = "MVAPICH"
    assert not validator.is_valid(broken)
