"""The e2e tier (`make e2e`): the real programs, built from their Go modules, on 127.0.0.1.

Session fixtures start what the tests share and stop it by PID at the end. Each fixture builds
what it needs first (e2e/build.py: a cached build is reused). Fresh state per session: every
control plane keeps its etcd, certificates and logs in a temporary folder, removed at the end
unless KUBETRAIN_E2E_KEEP is set (then its path is printed).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

E2E = Path(__file__).resolve().parent
sys.path.insert(0, str(E2E))

from harness import crds  # noqa: E402
from harness.cluster import ControlPlane  # noqa: E402
from harness.kubelet import Kubelet  # noqa: E402


def _keep() -> bool:
    return bool(os.environ.get("KUBETRAIN_E2E_KEEP"))


def start_cluster(name: str, tmp: Path, own_crds: bool = True) -> ControlPlane:
    """A fresh control plane with every CRD of ../shared/crds and, unless own_crds is False
    (a cluster kubetrain delivers its own CRDs to), kubetrain's."""
    cluster = ControlPlane(tmp / name, name=name)
    try:
        cluster.start()
        crds.install(cluster, crds.shared_crds() + (crds.kubetrain_crds() if own_crds else []))
    except BaseException:
        # Stopped by PID here (what started so far), or nothing would stop it: a clone without
        # ../shared left its kube-apiservers running after the session had ended.
        cluster.stop()
        raise
    return cluster


@pytest.fixture(scope="session")
def e2e_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("e2e")
    yield folder
    if _keep():
        print(f"\ne2e state kept in {folder}")
    else:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def cluster(e2e_tmp: Path) -> Iterator[ControlPlane]:
    """One control plane for the tests that only read or dry-run, with every CRD installed."""
    cp = start_cluster("shared", e2e_tmp)
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture(scope="session")
def kubelet(cluster: ControlPlane) -> Iterator[Kubelet]:
    k = Kubelet(cluster).start()
    try:
        yield k
    finally:
        k.stop()


#: `make e2e` runs the tier on two pytest-xdist workers, a module at a time (`--dist loadfile
#: --no-loadscope-reorder`), in this order: each worker starts with one module, and takes the
#: next one whenever two of its tests or fewer are left (xdist's LoadScopeScheduling). The
#: two long ones go first, one to each worker (the operator worlds, about 9.5 minutes warm; the
#: four engine lifecycles, about 12.5), the short ones after them to whichever worker is
#: nearly done. A module not listed runs last. (xdist's --dist loadgroup does not group under
#: pytest 9.2: it renames ``item._nodeid``, which pytest 9.2's ``Node.nodeid`` no longer reads.)
MODULE_ORDER = (
    "test_fidelity",
    "test_lifecycle",
    "test_control_plane",
    "test_pulumi_yaml",
    "test_validation_oracle",
    "test_fleet",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        name = item.module.__name__ if item.module else ""
        return MODULE_ORDER.index(name) if name in MODULE_ORDER else len(MODULE_ORDER)

    items.sort(key=rank)  # stable: each module keeps its own order
