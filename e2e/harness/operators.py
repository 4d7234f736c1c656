"""The training operators, for real: built from their Go modules (e2e/build.py), run against a
control plane with their webhooks served on loopback.

Each operator's admission webhooks are its own release's configurations (read from its module
beside the binaries: `kubectl kustomize` of its webhook folder), with every clientConfig turned
into a URL on 127.0.0.1 and a CA bundle of the test CA. The operators serve those webhooks with
a certificate of that CA (127.0.0.1 and their in-cluster service name), from a temporary folder
of their own (controller-runtime's default certificate folder is under $TMPDIR). Their own
certificate rotation is off (JobSet, Trainer, Kueue: a configuration field). Everything they
serve listens on 127.0.0.1: the training operator's and the MPI operator's releases bind every
interface, so their mains are kubetrain's over the releases' packages
(e2e/tools/*/cmd/: the same controllers, webhooks and defaults).

    JobSet v0.12.0            the JobSet controller (native mode `jobset`, Trainer v2)
    training-operator v1.9.3  TFJob, PyTorchJob, XGBoostJob, PaddleJob, JAXJob
    mpi-operator v0.8.2       MPIJob v2beta1 (no webhooks)
    trainer v2.3.0            TrainJob, TrainingRuntime, ClusterTrainingRuntime
    kueue v0.19.2             queues and admission
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import yaml

from . import tools
from .cluster import ControlPlane, Process, free_port, wait_for
from .crds import documents, install
from .loop import Loop

#: Every operator's health endpoint answers once its webhooks and controllers are set up.
READY_TIMEOUT = 180


def _kustomize(folder: Path) -> list[dict[str, Any]]:
    out = subprocess.run(
        [tools.kubectl(), "kustomize", str(folder)], capture_output=True, text=True, check=True
    ).stdout
    return [d for d in yaml.safe_load_all(out) if d]


class Operator:
    """One operator process and its webhook configurations."""

    name = ""
    tool = ""
    #: The in-cluster Service its webhook certificate names (and the training operator's
    #: rotator checks): <service>.<namespace>.svc.
    service = ""
    namespace = "kubeflow"
    webhook_folder: str | None = None

    def __init__(self, cluster: ControlPlane, folder: Path):
        assert cluster.ca is not None
        self.cluster = cluster
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.dir = tools.path(self.tool)
        self.port = free_port()
        self.health = free_port()
        self.process: Process | None = None
        self.tmp = folder / "tmp"
        certs = self.tmp / "k8s-webhook-server" / "serving-certs"
        certs.mkdir(parents=True, exist_ok=True)
        dns = [f"{self.service}.{self.namespace}.svc", f"{self.service}.{self.namespace}.svc."
               "cluster.local"] if self.service else []  # fmt: skip
        self.crt, self.key = cluster.ca.serving(f"webhook-{self.name}", dns, days=3650)
        (certs / "tls.crt").write_bytes(self.crt.read_bytes())
        (certs / "tls.key").write_bytes(self.key.read_bytes())
        self.certs = certs

    # -- to override ------------------------------------------------------------------------
    def crds(self) -> list[dict[str, Any]]:
        return []

    def argv(self) -> list[str]:
        raise NotImplementedError

    def prepare(self) -> None:
        """What must exist before the process starts."""

    # -- common -----------------------------------------------------------------------------
    def env(self) -> dict[str, str]:
        return {**os.environ, "KUBECONFIG": str(self.cluster.kubeconfig), "TMPDIR": str(self.tmp)}

    def webhook_configurations(self) -> list[dict[str, Any]]:
        if not self.webhook_folder:
            return []
        ca = base64.b64encode(self.cluster.ca.pem).decode()
        out = []
        for doc in _kustomize(self.dir / self.webhook_folder):
            if not doc["kind"].endswith("WebhookConfiguration"):
                continue
            name = doc["metadata"]["name"]
            if (
                not name.startswith(("validator.", "defaulter."))
                or self.name != "training-operator"
            ):
                name = f"{self.name}-{name}"
            doc["metadata"] = {"name": name}
            for hook in doc.get("webhooks", []):
                path = hook["clientConfig"].get("service", {}).get("path", "/")
                hook["clientConfig"] = {
                    "url": f"https://127.0.0.1:{self.port}{path}",
                    "caBundle": ca,
                }
            out.append(doc)
        return out

    def start(self) -> Operator:
        install(self.cluster, self.crds())
        self.cluster.kubectl("create", "namespace", self.namespace, check=False)
        self.prepare()
        self.process = Process(self.name, self.argv(), self.folder / f"{self.name}.log", self.env())
        wait_for(f"{self.name} ready", self._ready, READY_TIMEOUT, self.process, every=0.5)
        for config in self.webhook_configurations():
            self.cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-",
                                 input=json.dumps(config))  # fmt: skip
        return self

    def _ready(self) -> bool:
        import urllib.request

        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{self.health}/readyz", timeout=2
            ) as resp:
                return resp.status == 200
        except OSError:
            return False

    def stop(self) -> None:
        if self.process:
            self.process.stop()
        for config in self.webhook_configurations():
            kind = config["kind"].lower()
            self.cluster.kubectl("delete", kind, config["metadata"]["name"],
                                 "--ignore-not-found", check=False)  # fmt: skip


class JobSet(Operator):
    name = "jobset"
    tool = "trainer"  # built from the trainer's module graph: the JobSet the trainer pins
    service = "jobset-webhook-service"
    namespace = "jobset-system"
    webhook_folder = "jobset-webhook"

    def crds(self) -> list[dict[str, Any]]:
        return documents(self.dir / "jobset-crds")

    def argv(self) -> list[str]:
        config = {
            "apiVersion": "config.jobset.x-k8s.io/v1alpha1",
            "kind": "Configuration",
            "internalCertManagement": {"enable": False},
            "leaderElection": {"leaderElect": False},
            "webhook": {"port": self.port, "host": "127.0.0.1", "certDir": str(self.certs)},
            "metrics": {"bindAddress": "0"},
            "health": {"healthProbeBindAddress": f"127.0.0.1:{self.health}"},
        }
        path = self.folder / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        return [str(self.dir / "jobset-controller"), f"--config={path}"]


class Trainer(Operator):
    name = "trainer"
    tool = "trainer"
    service = "kubeflow-trainer-controller-manager"
    namespace = "kubeflow-system"
    webhook_folder = "webhook"

    def crds(self) -> list[dict[str, Any]]:
        return documents(self.dir / "crds")

    def argv(self) -> list[str]:
        config = {
            "apiVersion": "config.trainer.kubeflow.org/v1alpha1",
            "kind": "Configuration",
            "certManagement": {"enable": False},
            "leaderElection": {"leaderElect": False},
            "webhook": {"port": self.port, "host": "127.0.0.1"},
            "metrics": {"bindAddress": "0"},
            "health": {"healthProbeBindAddress": f"127.0.0.1:{self.health}"},
        }
        path = self.folder / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        return [str(self.dir / "trainer-controller-manager"), f"--config={path}"]


class TrainingOperator(Operator):
    name = "training-operator"
    tool = "training-operator"
    service = "training-operator"
    # Not "kubeflow", its release's: Kubeflow's published examples run in "kubeflow", and the
    # stacks deliver that Namespace.
    namespace = "training-operator-system"
    webhook_folder = "webhook"

    def __init__(self, cluster: ControlPlane, folder: Path, gang_scheduler: str = ""):
        super().__init__(cluster, folder)
        self.gang_scheduler = gang_scheduler

    def crds(self) -> list[dict[str, Any]]:
        # Its MPIJob v1 CRD is the MPI Operator's kind (v2beta1) here.
        return [c for c in documents(self.dir / "crds") if c["spec"]["names"]["kind"] != "MPIJob"]

    def argv(self) -> list[str]:
        argv = [
            str(self.dir / "training-operator"),
            f"--health-probe-bind-address=127.0.0.1:{self.health}",
            f"--webhook-server-port={self.port}",
            "--webhook-host=127.0.0.1",
            f"--cert-dir={self.certs}",
        ]
        if self.gang_scheduler:
            argv.append(f"--gang-scheduler-name={self.gang_scheduler}")
        return argv


class MPIOperator(Operator):
    name = "mpi-operator"
    tool = "mpi-operator"
    namespace = "mpi-operator"

    def crds(self) -> list[dict[str, Any]]:
        return documents(self.dir / "mpi-operator.yaml")

    def __init__(self, cluster: ControlPlane, folder: Path, gang_scheduler: str = ""):
        super().__init__(cluster, folder)
        self.gang_scheduler = gang_scheduler

    def argv(self) -> list[str]:
        argv = [str(self.dir / "mpi-operator")]
        if self.gang_scheduler:
            argv.append(f"--gang-scheduling={self.gang_scheduler}")
        return argv

    def _ready(self) -> bool:
        """No health server: ready once it logs that its workers started."""
        return "Started workers" in (self.process.tail(400) if self.process else "")


class Volcano(Operator):
    """Volcano's controller manager with its job controller alone (batch.volcano.sh Jobs; no
    scheduler runs here: VolcanoEnqueue stands in for its enqueue action). Volcano v1.14.1,
    the newest release the module proxy serves whole (e2e/tools/volcano/go.mod); kubetrain
    mirrors v1.15.1, whose job controller creates the same objects for what the tier runs
    (docs/fidelity.md). Its admission webhook does not run: the Jobs applied are those of
    operator mode, which writes the webhook's defaults (mutate_job.go createPatch)."""

    name = "volcano"
    tool = "volcano"
    namespace = "volcano-system"
    #: The CRDs its job controller watches; PodGroups are the shared CRD's (installed already).
    CRDS = ("batch.volcano.sh_jobs.yaml", "bus.volcano.sh_commands.yaml",
            "scheduling.volcano.sh_queues.yaml")  # fmt: skip

    def crds(self) -> list[dict[str, Any]]:
        return [doc for file in self.CRDS for doc in documents(self.dir / "crds" / file)]

    def prepare(self) -> None:
        # The queue a Job names by default (DefaultQueue), which a Volcano install creates.
        queue = {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "default"},
            "spec": {"weight": 1, "reclaimable": True},
        }
        self.cluster.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(queue))

    def argv(self) -> list[str]:
        return [
            str(self.dir / "vc-controller-manager"),
            f"--kubeconfig={self.cluster.kubeconfig}",
            "--controllers=job-controller",
            "--leader-elect=false",
            "--enable-healthz",
            f"--healthz-address=127.0.0.1:{self.health}",
        ]

    def _ready(self) -> bool:
        import urllib.request

        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.health}/healthz", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False


#: Kueue v0.19.2 without its own certificate management reads its metrics server's
#: certificate from this fixed folder (cmd/kueue/main.go), even with metrics off.
KUEUE_METRICS_CERTS = Path("/etc/kueue/metrics/certs")


class Kueue(Operator):
    name = "kueue"
    tool = "kueue"
    service = "kueue-webhook-service"
    namespace = "kueue-system"
    webhook_folder = "webhook"

    def crds(self) -> list[dict[str, Any]]:
        return documents(self.dir / "crds")

    def argv(self) -> list[str]:
        config = {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "namespace": self.namespace,
            "internalCertManagement": {"enable": False},
            "leaderElection": {"leaderElect": False},
            "webhook": {"port": self.port, "host": "127.0.0.1", "certDir": str(self.certs)},
            "metrics": {"bindAddress": "0"},
            "health": {"healthProbeBindAddress": f"127.0.0.1:{self.health}"},
            # The on-demand visibility API server listens on every interface.
            "featureGates": {"VisibilityOnDemand": False},
            "integrations": {
                "frameworks": [
                    "batch/job",
                    "jobset.x-k8s.io/jobset",
                    "kubeflow.org/mpijob",
                    "kubeflow.org/pytorchjob",
                    "kubeflow.org/tfjob",
                    "kubeflow.org/xgboostjob",
                    "kubeflow.org/paddlejob",
                    "kubeflow.org/jaxjob",
                    "trainer.kubeflow.org/trainjob",
                    "pod",
                    "statefulset",
                ]
            },
        }
        path = self.folder / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        return [str(self.dir / "kueue"), f"--config={path}"]

    def prepare(self) -> None:
        if not (KUEUE_METRICS_CERTS / "tls.crt").exists():
            KUEUE_METRICS_CERTS.mkdir(parents=True, exist_ok=True)
            (KUEUE_METRICS_CERTS / "tls.crt").write_bytes(self.crt.read_bytes())
            (KUEUE_METRICS_CERTS / "tls.key").write_bytes(self.key.read_bytes())


ALL = {
    "jobset": JobSet,
    "trainer": Trainer,
    "training-operator": TrainingOperator,
    "mpi-operator": MPIOperator,
    "kueue": Kueue,
    "volcano": Volcano,
}


#: The operators that take a gang scheduler (a PodGroup per job).
GANG = ("training-operator", "mpi-operator")


def start_all(
    cluster: ControlPlane, folder: Path, names=tuple(ALL), gang_scheduler: str = ""
) -> list[Operator]:
    """Start the operators `names` side by side (the training and MPI operators with
    `gang_scheduler`, when given); with the trainer, Kubeflow's v2.3.0 ClusterTrainingRuntimes
    (the release's manifests/base/runtimes) are installed too, as its installation does."""
    import concurrent.futures

    ops = [
        ALL[name](cluster, folder / name, gang_scheduler)  # type: ignore[call-arg]
        if gang_scheduler and name in GANG
        else ALL[name](cluster, folder / name)
        for name in names
    ]
    # CRDs first, one client at a time: several operators share kinds (PodGroups...).
    for op in ops:
        install(cluster, op.crds())
    with concurrent.futures.ThreadPoolExecutor(len(ops)) as pool:
        for future in [pool.submit(op.start) for op in ops]:
            future.result()
    if "trainer" in names:
        runtimes = _kustomize(tools.path("trainer") / "runtimes")
        cluster.kubectl("apply", "--server-side", "-f", "-", input=yaml.safe_dump_all(runtimes))
    return ops


def stop_all(ops: list[Operator]) -> None:
    for op in reversed(ops):
        op.stop()


class VolcanoEnqueue:
    """What stands in for Volcano's scheduler (there is none here): every Volcano PodGroup
    without a phase is put `Inqueue`, the phase in which "controllers can start to create
    pods" (volcano.sh/apis v1.9.0, the version training-operator v1.9.3 pins,
    pkg/apis/scheduling/v1beta1/types.go `PodGroupInqueue`). training-operator v1.9.3 creates a
    gang's pods and Services only then (pkg/controller.v1/control/podgroup_control.go
    `VolcanoControl.DelayPodCreationDueToPodGroup`: no phase or Pending delays them)."""

    PATH = "/apis/scheduling.volcano.sh/v1beta1/podgroups"

    def __init__(self, cluster: ControlPlane):
        self.cluster = cluster
        self.enqueued: set[tuple[str, str]] = set()
        self._loop = Loop(self.tick, "volcano-enqueue")
        self.errors = self._loop.errors

    def tick(self) -> None:
        for group in (self.cluster.get(self.PATH) or {}).get("items", []):
            meta = group["metadata"]
            if (group.get("status") or {}).get("phase") or meta.get("deletionTimestamp"):
                continue
            path = f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{meta['namespace']}" \
                   f"/podgroups/{meta['name']}"  # fmt: skip
            status, body = self.cluster.request(
                "PATCH", path, {"status": {"phase": "Inqueue"}},
                content_type="application/merge-patch+json",
            )  # fmt: skip
            if status == 200:
                self.enqueued.add((meta["namespace"], meta["name"]))
            elif status != 404:
                self.errors.append(f"{meta['namespace']}/{meta['name']}: {status} {body}")

    def start(self) -> VolcanoEnqueue:
        self._loop.start()
        return self

    def stop(self) -> None:
        self._loop.stop()
