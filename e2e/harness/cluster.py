"""A Kubernetes control plane on 127.0.0.1: etcd, kube-apiserver and kube-controller-manager.

Fresh state per instance (a temporary folder), self-signed certificates made with openssl, a
static token for the tests (group system:masters), RBAC, the API server's default admission
plugins, and the controllers a training needs (Job, StatefulSet, ReplicaSet, Deployment,
namespace, garbage collector, service accounts and their tokens, root CA publisher, endpoints).
There is no kubelet and no scheduler: `harness.kubelet` plays both where a test needs pods to
run. The node lifecycle controller is off: with no kubelet renewing a lease it would taint the
simulated node unreachable and evict every pod after five minutes.

Every process is started by PID and stopped by PID (SIGTERM, then SIGKILL), children of this
process only; nothing listens beyond 127.0.0.1.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import secrets
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import tools

SERVICE_CIDR = "10.96.0.0/16"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@dataclass
class CA:
    """A throwaway certificate authority: serving certificates for loopback servers."""

    folder: Path
    cert: Path = field(init=False)
    key: Path = field(init=False)

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.cert = self.folder / "ca.crt"
        self.key = self.folder / "ca.key"
        openssl(
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650",
            "-subj", "/CN=kubetrain-e2e-ca", "-keyout", str(self.key), "-out", str(self.cert),
            cwd=self.folder,
        )  # fmt: skip

    @property
    def pem(self) -> bytes:
        return self.cert.read_bytes()

    def serving(self, name: str, dns: list[str], days: int = 2) -> tuple[Path, Path]:
        """A certificate for 127.0.0.1 and `dns`, signed by this CA: (cert, key)."""
        key = self.folder / f"{name}.key"
        csr = self.folder / f"{name}.csr"
        crt = self.folder / f"{name}.crt"
        ext = self.folder / f"{name}.ext"
        sans = ["IP:127.0.0.1", *(f"DNS:{d}" for d in dns)]
        ext.write_text(
            "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
            "extendedKeyUsage=serverAuth,clientAuth\n"
            f"subjectAltName={','.join(sans)}\n"
        )
        openssl(
            "req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}",
            "-keyout", str(key), "-out", str(csr), cwd=self.folder,
        )  # fmt: skip
        openssl(
            "x509", "-req", "-in", str(csr), "-CA", str(self.cert), "-CAkey", str(self.key),
            "-CAcreateserial", "-days", str(days), "-extfile", str(ext), "-out", str(crt),
            cwd=self.folder,
        )  # fmt: skip
        return crt, key


class Process:
    """A child process with its log file, stopped by PID."""

    def __init__(self, name: str, argv: list[str], log: Path, env: dict[str, str] | None = None):
        self.name = name
        self.argv = argv
        self.log = log
        self._log = open(log, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            argv,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, timeout: float = 15) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.pid, signal.SIGKILL)
                self.proc.wait(timeout)
        self._log.close()


def wait_for(what: str, check, timeout: float, proc: Process | None = None, every: float = 0.2):
    """Poll `check()` until it returns a true value; fail naming `what` (and the log's tail)."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc is not None and not proc.alive():
            raise RuntimeError(f"{proc.name} exited while waiting for {what}:\n{proc.tail()}")
        try:
            value = check()
            if value:
                return value
        except Exception as exc:
            last = exc
        time.sleep(every)
    tail = f"\n{proc.name}'s log:\n{proc.tail()}" if proc else ""
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what} ({last}){tail}")


class ControlPlane:
    """etcd, kube-apiserver and kube-controller-manager with fresh state in `folder`."""

    def __init__(self, folder: Path | None = None, name: str = "cluster"):
        self.name = name
        self.folder = Path(folder or tempfile.mkdtemp(prefix=f"kubetrain-e2e-{name}-"))
        self.folder.mkdir(parents=True, exist_ok=True)
        self.processes: list[Process] = []
        self.token = secrets.token_hex(16)
        self.port = 0
        self.ca: CA | None = None
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[http.client.HTTPSConnection] = []
        self._ssl: ssl.SSLContext | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> ControlPlane:
        etcd_dir = tools.path("etcd")
        kube_dir = tools.path("kube")
        pki = self.folder / "pki"
        self.ca = CA(pki)
        serving_crt, serving_key = self.ca.serving(
            "apiserver",
            ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"],
        )
        sa_key = pki / "sa.key"
        openssl("genrsa", "-out", str(sa_key), "2048", cwd=pki)
        openssl("rsa", "-in", str(sa_key), "-pubout", "-out", str(pki / "sa.pub"), cwd=pki)
        tokens = self.folder / "tokens.csv"
        tokens.write_text(f'{self.token},kubetrain-e2e,kubetrain-e2e,"system:masters"\n')

        client_port, peer_port = free_port(), free_port()
        etcd = Process(
            "etcd",
            [
                str(etcd_dir / "etcd"),
                "--name", "e2e", "--data-dir", str(self.folder / "etcd"),
                "--listen-client-urls", f"http://127.0.0.1:{client_port}",
                "--advertise-client-urls", f"http://127.0.0.1:{client_port}",
                "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
                "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
                "--initial-cluster", f"e2e=http://127.0.0.1:{peer_port}",
                "--listen-metrics-urls", f"http://127.0.0.1:{free_port()}",
                "--unsafe-no-fsync", "--quota-backend-bytes", str(4 << 30),
                "--log-level", "warn",
            ],
            self.folder / "etcd.log",
        )  # fmt: skip
        self.processes.append(etcd)
        wait_for(
            "etcd",
            lambda: _http_ok(f"http://127.0.0.1:{client_port}/health"),
            60,
            etcd,
        )

        self.port = free_port()
        apiserver = Process(
            "kube-apiserver",
            [
                str(kube_dir / "kube-apiserver"),
                "--etcd-servers", f"http://127.0.0.1:{client_port}",
                "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
                "--secure-port", str(self.port),
                "--tls-cert-file", str(serving_crt), "--tls-private-key-file", str(serving_key),
                "--client-ca-file", str(self.ca.cert),
                "--token-auth-file", str(tokens),
                "--authorization-mode", "RBAC",
                "--service-account-issuer", "https://kubernetes.default.svc",
                "--service-account-key-file", str(pki / "sa.pub"),
                "--service-account-signing-key-file", str(sa_key),
                "--service-cluster-ip-range", SERVICE_CIDR,
                "--allow-privileged=true",
                # The kubernetes Service cannot point at a loopback address: no endpoints.
                "--endpoint-reconciler-type", "none",
                "--profiling=false",
                "--v=1",
            ],
            self.folder / "kube-apiserver.log",
        )  # fmt: skip
        self.processes.append(apiserver)
        wait_for("kube-apiserver /readyz", lambda: self._ready("/readyz"), 120, apiserver)
        self.write_kubeconfig()

        kcm = Process(
            "kube-controller-manager",
            [
                str(kube_dir / "kube-controller-manager"),
                "--kubeconfig", str(self.kubeconfig),
                "--authentication-kubeconfig", str(self.kubeconfig),
                "--authorization-kubeconfig", str(self.kubeconfig),
                "--bind-address", "127.0.0.1", "--secure-port", str(free_port()),
                "--leader-elect=false",
                "--service-account-private-key-file", str(sa_key),
                "--root-ca-file", str(self.ca.cert),
                "--use-service-account-credentials=false",
                "--service-cluster-ip-range", SERVICE_CIDR,
                "--controllers", "*,-node-lifecycle-controller,-node-ipam-controller,"
                "-taint-eviction-controller",
                # Jobs are reconciled at once, so a test sees the pods a Job makes in seconds.
                "--concurrent-job-syncs", "10",
                "--v=1",
            ],
            self.folder / "kube-controller-manager.log",
        )  # fmt: skip
        self.processes.append(kcm)
        wait_for(
            "the default ServiceAccount (kube-controller-manager running)",
            lambda: self.get("/api/v1/namespaces/default/serviceaccounts/default"),
            120,
            kcm,
        )
        # The default StorageClass of kind, EKS, GKE and AKS alike binds a claim when its first
        # pod is scheduled (WaitForFirstConsumer); there is no provisioner here.
        status, body = self.request("POST", "/apis/storage.k8s.io/v1/storageclasses", {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {
                "name": "standard",
                "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
            },
            "provisioner": "kubetrain.io/e2e-none",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowVolumeExpansion": True,
        })  # fmt: skip
        if status != 201:
            raise RuntimeError(f"creating the default StorageClass: {status} {body}")
        return self

    def stop(self) -> None:
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        for proc in reversed(self.processes):
            proc.stop()
        self.processes.clear()

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def check_alive(self) -> None:
        for proc in self.processes:
            if not proc.alive():
                raise RuntimeError(f"{proc.name} of {self.name} died:\n{proc.tail()}")

    # -- clients ---------------------------------------------------------------------------
    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def kubeconfig(self) -> Path:
        return self.folder / "kubeconfig"

    def write_kubeconfig(self) -> None:
        assert self.ca is not None
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": self.name,
                    "cluster": {
                        "server": self.server,
                        "certificate-authority-data": base64.b64encode(self.ca.pem).decode(),
                    },
                }
            ],
            "users": [{"name": "e2e", "user": {"token": self.token}}],
            "contexts": [{"name": self.name, "context": {"cluster": self.name, "user": "e2e"}}],
            "current-context": self.name,
        }
        self.kubeconfig.write_text(json.dumps(config, indent=2))
        self.kubeconfig.chmod(0o600)

    def _context(self) -> ssl.SSLContext:
        assert self.ca is not None
        if self._ssl is None:
            self._ssl = ssl.create_default_context(cadata=self.ca.pem.decode())
        return self._ssl

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        query: str = "",
    ) -> tuple[int, Any]:
        """(status, decoded JSON body) of one API request, on a kept-alive connection of this
        thread (a TLS handshake per request costs the server more than the request)."""
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        target = path + (f"?{query}" if query else "")
        for attempt in range(3):
            conn = self._connection()
            try:
                conn.request(method, target, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
                break
            except (http.client.HTTPException, OSError):
                self._local.conn = None
                conn.close()
                with self._lock:
                    if conn in self._connections:
                        self._connections.remove(conn)
                if attempt == 2:
                    raise
                time.sleep(0.2)
        kind = resp.headers.get("Content-Type", "")
        if "json" not in kind:
            return resp.status, raw.decode(errors="replace")
        try:
            return resp.status, json.loads(raw) if raw else None
        except ValueError:
            return resp.status, raw.decode(errors="replace")

    def _connection(self) -> http.client.HTTPSConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = http.client.HTTPSConnection(
                "127.0.0.1", self.port, context=self._context(), timeout=60
            )
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def get(self, path: str, query: str = "") -> Any:
        status, body = self.request("GET", path, query=query)
        if status == 404:
            return None
        if status != 200:
            raise RuntimeError(f"GET {path}: {status} {body}")
        return body

    def _ready(self, path: str) -> bool:
        status, _ = self.request("GET", path)
        return status == 200

    def kubectl(self, *args: str, input: str | None = None, check: bool = True):
        """Run kubectl against this cluster; the CompletedProcess."""
        result = subprocess.run(
            [tools.kubectl(), "--kubeconfig", str(self.kubeconfig), *args],
            input=input,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if check and result.returncode != 0:
            raise RuntimeError(
                f"kubectl {' '.join(args)} failed ({result.returncode}):\n"
                f"{result.stdout}\n{result.stderr}"
            )
        return result


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False
