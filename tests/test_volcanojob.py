"""Volcano's batch.volcano.sh/v1alpha1 Job against volcano-sh/volcano v1.15.1, read at the tag:
pkg/controllers/job/job_controller_util.go (createJobPod, calcPGMinResources'
TasksPriority), job_controller_actions.go (createOrUpdatePodGroup, getMinTaskMember),
plugins/svc (OnPodCreate, GenerateHosts, the Service and NetworkPolicy), plugins/env, and
pkg/webhooks/admission/jobs (mutate_job.go createPatch, validate/admit_job.go and util.go).
Expectations are written from those functions; make e2e runs the controller itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetrain.builders.registry import BuildProblem
from kubetrain.builders.volcanojob import generate_hosts, svc_flags
from kubetrain.kube import catalog
from kubetrain.models import InputError, load_job
from kubetrain.models.base import Mode
from kubetrain.models.volcanojob import VolcanoJob

from helpers import objects, pick, stack_from


def task(name: str | None, replicas: int, **extra: Any) -> dict[str, Any]:
    container = {"name": "main", "image": "busybox:1.36"}
    container.update(extra.pop("container", {}))
    out: dict[str, Any] = {"replicas": replicas, "template": {"spec": {"containers": [container]}}}
    if name is not None:
        out["name"] = name
    out.update(extra)
    return out


def vcjob(*tasks: dict[str, Any], name: str = "vj", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {"tasks": list(tasks), **spec},
    }


def build(tmp_path: Path, *docs: dict[str, Any], **config: Any) -> list[dict[str, Any]]:
    cfg: dict[str, Any] = {"kubetrain:namespace": "vc", "kubetrain:jobs": list(docs)}
    cfg.update({f"kubetrain:{k}": v for k, v in config.items()})
    return objects(stack_from(tmp_path, cfg))


def model(doc: dict[str, Any]) -> VolcanoJob:
    doc = json.loads(json.dumps(doc))
    doc["metadata"].setdefault("namespace", "vc")
    return VolcanoJob.model_validate(doc)


# -- the pods (createJobPod and the plugins' OnPodCreate) -------------------------------------
def test_each_task_runs_its_replicas_as_pods_named_and_labelled_as_the_controller_does(
    tmp_path: Path,
) -> None:
    objs = build(tmp_path, vcjob(task("ps", 1), task("worker", 2)))
    pods = sorted(o["metadata"]["name"] for o in objs if o["kind"] == "Pod")
    assert pods == ["vj-ps-0", "vj-worker-0", "vj-worker-1"]
    pod = pick(objs, "Pod", "vj-worker-1")
    labels = pod["metadata"]["labels"]
    assert {k: labels[k] for k in labels if k.startswith("volcano.sh/")} == {
        "volcano.sh/task-index": "1",
        "volcano.sh/job-name": "vj",
        "volcano.sh/task-spec": "worker",
        "volcano.sh/job-namespace": "vc",
        "volcano.sh/queue-name": "default",
    }
    annotations = pod["metadata"]["annotations"]
    assert {
        k: v for k, v in annotations.items() if k.startswith(("volcano.sh/", "scheduling"))
    } == {
        "volcano.sh/task-index": "1",
        "volcano.sh/task-spec": "worker",
        "scheduling.k8s.io/group-name": "vj",
        "volcano.sh/job-name": "vj",
        "volcano.sh/queue-name": "default",
        "volcano.sh/job-version": "0",
        "volcano.sh/template-uid": "vj-worker",
        "volcano.sh/job-retry-count": "0",
    }
    assert pod["spec"]["schedulerName"] == "volcano"


def test_the_job_gives_its_scheduler_priority_and_some_metadata_to_pods_that_have_none(
    tmp_path: Path,
) -> None:
    own = task("a", 1)
    own["template"]["spec"].update(schedulerName="mine", priorityClassName="mine")
    doc = vcjob(own, task("b", 1, topologyPolicy="best-effort"), schedulerName="kube-batch",
                priorityClassName="high")  # fmt: skip
    doc["metadata"]["annotations"] = {
        "volcano.sh/preemptable": "true",
        "volcano.sh/jdb-min-available": "1",
        "volcano.sh/jdb-max-unavailable": "2",
        "other": "no",
    }
    doc["metadata"]["labels"] = {"volcano.sh/cooldown-time": "60s", "team": "x"}
    objs = build(tmp_path, doc, manifests=[{"apiVersion": "scheduling.k8s.io/v1",
                 "kind": "PriorityClass", "metadata": {"name": n}, "value": 1}
                 for n in ("mine", "high")])  # fmt: skip
    a, b = pick(objs, "Pod", "vj-a-0"), pick(objs, "Pod", "vj-b-0")
    assert (a["spec"]["schedulerName"], a["spec"]["priorityClassName"]) == ("mine", "mine")
    assert (b["spec"]["schedulerName"], b["spec"]["priorityClassName"]) == ("kube-batch", "high")
    ann = b["metadata"]["annotations"]
    assert ann["volcano.sh/preemptable"] == "true"
    assert ann["volcano.sh/jdb-min-available"] == "1"
    assert "volcano.sh/jdb-max-unavailable" not in ann  # min-available wins
    assert "other" not in ann
    assert ann["volcano.sh/numa-topology-policy"] == "best-effort"
    assert "volcano.sh/numa-topology-policy" not in a["metadata"]["annotations"]
    assert b["metadata"]["labels"]["volcano.sh/cooldown-time"] == "60s"
    assert "team" not in b["metadata"]["labels"]


def test_the_env_and_svc_plugins_give_every_container_its_index_and_its_peers(
    tmp_path: Path,
) -> None:
    worker = task("param-server", 2)
    worker["template"]["spec"]["initContainers"] = [{"name": "init", "image": "busybox:1.36"}]
    objs = build(tmp_path, vcjob(worker, task("w", 1), plugins={"env": [], "svc": []}))
    pod = pick(objs, "Pod", "vj-param-server-1")
    spec = pod["spec"]
    assert (spec["hostname"], spec["subdomain"]) == ("vj-param-server-1", "vj")
    for c in spec["containers"] + spec["initContainers"]:
        names = [e["name"] for e in c["env"]]
        assert names == ["VK_TASK_INDEX", "VC_TASK_INDEX", "VC_PARAM_SERVER_HOSTS",
                         "VC_PARAM_SERVER_NUM", "VC_W_HOSTS", "VC_W_NUM"]  # fmt: skip
        assert c["env"][0]["value"] == c["env"][1]["value"] == "1"
        ref = c["env"][2]["valueFrom"]["configMapKeyRef"]
        assert ref == {"name": "vj-svc", "key": "VC_PARAM_SERVER_HOSTS"}
        assert c["volumeMounts"] == [{"mountPath": "/etc/volcano", "name": "vj-svc"}]
    assert spec["volumes"] == [{"name": "vj-svc", "configMap": {"name": "vj-svc"}}]
    hosts = pick(objs, "ConfigMap", "vj-svc")["data"]
    assert hosts == {
        "param_server.host": "vj-param-server-0.vj\nvj-param-server-1.vj",
        "VC_PARAM_SERVER_HOSTS": "vj-param-server-0.vj,vj-param-server-1.vj",
        "VC_PARAM_SERVER_NUM": "2",
        "w.host": "vj-w-0.vj",
        "VC_W_HOSTS": "vj-w-0.vj",
        "VC_W_NUM": "1",
    }
    service = pick(objs, "Service", "vj")
    selector = {"volcano.sh/job-name": "vj", "volcano.sh/job-namespace": "vc"}
    assert service["spec"] == {"clusterIP": "None", "selector": selector}
    policy = pick(objs, "NetworkPolicy", "vj")["spec"]
    assert policy["podSelector"] == {"matchLabels": selector}
    assert policy["ingress"] == [{"from": [{"podSelector": {"matchLabels": selector}}]}]


def test_without_plugins_a_pod_gets_no_host_env_or_service(tmp_path: Path) -> None:
    objs = build(tmp_path, vcjob(task("t", 2)))
    assert sorted(o["kind"] for o in objs if o["kind"] != "Namespace") == ["Pod", "Pod", "PodGroup"]
    pod = pick(objs, "Pod", "vj-t-0")
    assert "hostname" not in pod["spec"] and "env" not in pod["spec"]["containers"][0]


def test_a_template_with_its_own_hostname_is_one_host() -> None:
    head = task("head", 3)
    head["template"]["spec"].update(hostname="h", subdomain="sub")
    hosts = generate_hosts(model(vcjob(head)))
    assert hosts == {"head.host": "h.sub", "VC_HEAD_HOSTS": "h.sub", "VC_HEAD_NUM": "1"}


@pytest.mark.parametrize(
    ("args", "flags"),
    [
        ([], (False, False)),
        (["--disable-network-policy"], (False, True)),
        (["-publish-not-ready-addresses"], (True, False)),
        (["--publish-not-ready-addresses=true", "--disable-network-policy=false"], (True, False)),
        (["--disable-network-policy=1", "--disable-network-policy=F"], (False, False)),
    ],
)
def test_the_svc_plugins_flags_read_as_gos_flag_package_reads_them(
    args: list[str], flags: tuple[bool, bool]
) -> None:
    got = svc_flags(args, ("spec", "plugins", "svc"))
    assert (got["publish-not-ready-addresses"], got["disable-network-policy"]) == flags


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.text(max_size=40), max_size=6))
def test_no_svc_argument_breaks_the_plugin(args: list[str]) -> None:
    """Any argument list is read or refused at its index, never anything else."""
    try:
        flags = svc_flags(args, ("spec", "plugins", "svc"))
    except BuildProblem as problem:
        assert problem.path[:3] == ("spec", "plugins", "svc") and len(problem.path) == 4
        k = problem.path[3]
        # The flag may be named, a value never: the message is the same with another value.
        name, eq, _ = args[k].partition("=")
        canary = [*args[:k], f"{name}{eq}QQQQ" if eq else "QQQQ", *args[k + 1 :]]
        if eq or not args[k].startswith("-"):
            with pytest.raises(BuildProblem) as again:
                svc_flags(canary, ("spec", "plugins", "svc"))
            assert (again.value.path, again.value.message) == (problem.path, problem.message)
    else:
        assert set(flags) == {"publish-not-ready-addresses", "disable-network-policy"}
        assert all(a.lstrip("-").partition("=")[0] in flags for a in args)


def test_the_svc_plugins_flags_shape_the_service_and_the_policy(tmp_path: Path) -> None:
    objs = build(tmp_path, vcjob(task("t", 1), plugins={
        "svc": ["--publish-not-ready-addresses", "--disable-network-policy"]}))  # fmt: skip
    assert pick(objs, "Service", "vj")["spec"]["publishNotReadyAddresses"] is True
    assert not [o for o in objs if o["kind"] == "NetworkPolicy"]


# -- the PodGroup (createOrUpdatePodGroup, calcPGMinResources) -------------------------------
def _group(tmp_path: Path, doc: dict[str, Any]) -> dict[str, Any]:
    return pick(build(tmp_path, doc), "PodGroup", doc["metadata"]["name"])["spec"]


def test_a_gang_below_its_tasks_minimums_sums_its_first_pods(tmp_path: Path) -> None:
    # CalcFirstCountResources: 3 pods, 2 of task a (init 3 cpu > main 1 cpu) then 1 of b.
    a = task("a", 2, container={"resources": {"requests": {"cpu": "1", "memory": "512Mi"}}})
    a["template"]["spec"]["initContainers"] = [{"name": "i", "image": "busybox:1.36",
                                                "resources": {"requests": {"cpu": "3"}}}]  # fmt: skip
    b = task("b", 3, container={"resources": {"requests": {"cpu": "250m"}}})
    spec = _group(tmp_path, vcjob(a, b, minAvailable=3))
    assert spec["minMember"] == 3
    assert spec["minTaskMember"] == {"a": 2, "b": 3}
    assert spec["minResources"] == {
        "count/pods": "3", "pods": "3", "cpu": "6250m", "requests.cpu": "6250m",
        "memory": "1Gi", "requests.memory": "1Gi",
    }  # fmt: skip


def test_a_gang_above_its_tasks_minimums_is_filled_up_task_by_task(tmp_path: Path) -> None:
    # CalcPGMinResources: the minimums (a 1, b 2), then the rest of a (2 more) up to 5.
    a = task("a", 3, minAvailable=1, container={"resources": {"requests": {"memory": "1Gi"}}})
    b = task("b", 4, minAvailable=2, container={"resources": {"requests": {"cpu": "1"}}})
    spec = _group(tmp_path, vcjob(a, b, minAvailable=5))
    assert spec["minTaskMember"] == {"a": 1, "b": 2}
    assert spec["minResources"] == {
        "count/pods": "5", "pods": "5", "memory": "3Gi", "requests.memory": "3Gi",
        "cpu": "2", "requests.cpu": "2",
    }  # fmt: skip


def test_extended_resources_count_under_both_names_and_limits_only_for_cpu_and_memory(
    tmp_path: Path,
) -> None:
    t = task("t", 2, container={"resources": {"limits": {"cpu": "2", "nvidia.com/gpu": 1}}})
    spec = _group(tmp_path, vcjob(t))
    # GPUs in limits are normalised to requests too (as in operator mode's Job).
    assert spec["minResources"] == {
        "count/pods": "2", "pods": "2", "limits.cpu": "4",
        "nvidia.com/gpu": "2", "requests.nvidia.com/gpu": "2",
    }  # fmt: skip


def test_the_podgroup_takes_the_jobs_metadata_queue_and_priority(tmp_path: Path) -> None:
    doc = vcjob(task("t", 1), queue="research", priorityClassName="high")
    doc["metadata"].update(labels={"team": "x"}, annotations={"note": "y"})
    objs = build(tmp_path, doc, manifests=[{"apiVersion": "scheduling.k8s.io/v1",
                 "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1}])  # fmt: skip
    group = pick(objs, "PodGroup", "vj")
    assert group["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert group["metadata"]["labels"]["team"] == "x"
    assert group["metadata"]["annotations"]["note"] == "y"
    assert (group["spec"]["queue"], group["spec"]["priorityClassName"]) == ("research", "high")
    assert pick(objs, "Pod", "vj-t-0")["metadata"]["labels"]["volcano.sh/queue-name"] == "research"


# -- operator mode: the webhook's defaults (mutate_job.go createPatch) ------------------------
def test_operator_mode_writes_the_job_as_the_webhook_stores_it(tmp_path: Path) -> None:
    doc = vcjob(task(None, 2), task("m", 1, minAvailable=0), plugins={"mpi": []})
    doc["metadata"]["annotations"] = {"kubetrain.io/mode": "operator"}
    (job,) = [o for o in build(tmp_path, doc) if o["kind"] == "Job"]
    assert job["apiVersion"] == "batch.volcano.sh/v1alpha1"
    spec = job["spec"]
    assert (spec["queue"], spec["schedulerName"], spec["maxRetry"]) == ("default", "volcano", 3)
    assert [t["name"] for t in spec["tasks"]] == ["default0", "m"]
    assert [t["minAvailable"] for t in spec["tasks"]] == [2, 0]
    assert [t["maxRetry"] for t in spec["tasks"]] == [3, 3]
    assert spec["minAvailable"] == 2
    assert spec["plugins"] == {"mpi": [], "svc": [], "ssh": []}
    assert catalog.of(job).key == catalog.GroupKind("batch.volcano.sh", "Job")
    assert catalog.of(job).key != catalog.BATCH_JOB


def test_a_host_network_task_is_defaulted_to_cluster_first_with_host_net() -> None:
    t = task("t", 1)
    t["template"]["spec"]["hostNetwork"] = True
    spec = model(vcjob(t)).defaulted_document()["spec"]
    assert spec["tasks"][0]["template"]["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"


# -- what native mode refuses, and admission ------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "path"),
    [
        ({"plugins": {"mpi": []}}, "spec.plugins.mpi"),
        ({"plugins": {"pytorch": []}}, "spec.plugins.pytorch"),
        ({"volumes": [{"mountPath": "/data", "volumeClaimName": "data"}]}, "spec.volumes"),
    ],
)
def test_what_needs_the_controller_is_refused_natively_and_kept_in_operator_mode(
    tmp_path: Path, spec: dict[str, Any], path: str
) -> None:
    doc = vcjob(task("t", 1), **spec)
    with pytest.raises(InputError) as err:
        build(tmp_path, doc)
    assert path in str(err.value) and "needs Volcano's job controller" in str(err.value)
    doc["metadata"]["annotations"] = {"kubetrain.io/mode": "operator"}
    assert [o["kind"] for o in build(tmp_path, doc) if o["kind"] != "Namespace"] == ["Job"]


@pytest.mark.parametrize(
    ("doc", "path", "says"),
    [
        (vcjob(task("a", 1), task("b", 1, dependsOn={"name": ["c"]})),
         ("spec", "tasks", 1, "dependsOn", "name", 0), "no task named 'c'"),
        (vcjob(task("a", 1, dependsOn={"name": ["b"]}), task("b", 1, dependsOn={"name": ["a"]})),
         ("spec", "tasks"), "directed acyclic graph"),
        (vcjob(task("a", 1), policies=[{"event": "*", "action": "AbortJob"},
                                       {"event": "PodFailed", "action": "RestartJob"}]),
         ("spec", "policies"), "no other policy event"),
        (vcjob(task("a", 1), policies=[{"exitCode": 0, "action": "AbortJob"}]),
         ("spec", "policies", 0, "exitCode"), "0 is not a valid error code"),
        (vcjob(task("a", 1), policies=[{"event": "PodFailed", "exitCode": 3}]),
         ("spec", "policies", 0), "simultaneously"),
        (vcjob(task("a", 1, policies=[{"event": "PodFailed", "action": "Sync"}])),
         ("spec", "tasks", 0, "policies", 0, "action"), "invalid policy action 'Sync'"),
        (vcjob(task("Upper", 1)), ("spec", "tasks", 0, "name"), "DNS-1123 label"),
        (vcjob(task("a", 0)), ("spec", "tasks"), "every task has replicas 0"),
        (vcjob(task("a", 1), volumes=[{"mountPath": "/d"}]), ("spec", "volumes", 0),
         "either volumeClaim or volumeClaimName"),
    ],
)  # fmt: skip
def test_admission_refuses_what_volcanos_webhook_and_policy_refuse(
    doc: dict[str, Any], path: tuple[Any, ...], says: str
) -> None:
    problems = model(doc).semantic_problems(load_settings())
    assert any(p == path and says in m for p, m in problems), problems


def load_settings() -> Any:
    from kubetrain.models import StackSettings

    return StackSettings()


def test_a_pod_name_past_63_characters_is_refused_at_load() -> None:
    doc = vcjob(task("t" * 40, 12), name="j" * 20)
    doc["metadata"]["namespace"] = "vc"
    with pytest.raises(InputError) as err:
        load_job(doc, file="jobs.yaml")
    assert "pod name and hostname" in str(err.value)


# -- bounds ----------------------------------------------------------------------------------
@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture], deadline=None)  # fmt: skip
@given(
    st.lists(st.integers(0, 40), min_size=1, max_size=4),
    st.booleans(),
    st.integers(1, 30),
)
def test_the_estimate_bounds_what_native_mode_writes(
    tmp_path: Path, replicas: list[int], svc: bool, name_len: int
) -> None:
    if not any(replicas):
        replicas[0] = 1
    tasks = [task(f"t{i}", n) for i, n in enumerate(replicas)]
    doc = vcjob(*tasks, name="j" * name_len, plugins={"env": [], "svc": []} if svc else {})
    job = model(doc)
    estimate = job.output_estimate(load_settings(), Mode.NATIVE)
    objs = [o for o in build(tmp_path, doc) if o["kind"] != "Namespace"]
    sizes = [len(yaml.safe_dump(o)) for o in objs]
    assert len(objs) <= estimate.objects
    assert sum(sizes) <= estimate.bytes
    assert max(sizes) <= estimate.largest


# -- updates (validateJobUpdate, the jobs-validating policy) ----------------------------------
def test_an_update_may_change_the_counts_and_nothing_else() -> None:
    from kubetrain.kube.immutable import update_refusals

    before = model(vcjob(task("a", 2), task("b", 1))).defaulted_document()
    before["metadata"] = {"name": "vj", "namespace": "vc"}
    counts = json.loads(json.dumps(before))
    counts["spec"]["tasks"][0].update(replicas=4, minAvailable=3)
    counts["spec"].update(minAvailable=5, priorityClassName="high")
    assert update_refusals(before, counts) == []
    image = json.loads(json.dumps(before))
    image["spec"]["tasks"][1]["template"]["spec"]["containers"][0]["image"] = "busybox:1.37"
    (refusal,) = update_refusals(before, image)
    assert (
        refusal.path == "spec.tasks[b].template.spec.containers[main].image"
        and "may not change" in refusal.message
    )
    fewer = json.loads(json.dumps(before))
    del fewer["spec"]["tasks"][1]
    (refusal,) = update_refusals(before, fewer)
    assert (refusal.path, refusal.message) == (
        "spec.tasks",
        "job updates may not add or remove tasks",
    )


# -- the ssh plugin (mountRsaKey, generateSSHConfig) -------------------------------------------
STORE = {"kind": "ClusterSecretStore", "name": "vault"}


def test_the_ssh_plugins_key_pair_comes_from_the_secret_store_and_its_config_names_hosts(
    tmp_path: Path,
) -> None:
    head = task("head", 1)
    head["template"]["spec"].update(hostname="h", subdomain="s")
    doc = vcjob(head, task("w", 2), plugins={"ssh": ["--ssh-port", "2222"]})
    doc["metadata"]["annotations"] = {"kubetrain.io/ssh-credential": "keys"}
    objs = build(tmp_path, doc, secretStore=STORE)
    secret = pick(objs, "ExternalSecret", "vj-ssh")
    data = {d["secretKey"]: d["remoteRef"] for d in secret["spec"]["data"]}
    assert data == {
        "id_rsa": {"key": "keys", "property": "ssh-privatekey"},
        "id_rsa.pub": {"key": "keys", "property": "ssh-publickey"},
        "authorized_keys": {"key": "keys", "property": "ssh-publickey"},
    }
    template = secret["spec"]["target"]["template"]
    assert template["mergePolicy"] == "Merge"
    assert template["data"]["config"] == (
        "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n"
        "Host h\n  HostName h.s\n  Port 2222\n"
        "Host vj-w-0\n  HostName vj-w-0.vj\n  Port 2222\n"
        "Host vj-w-1\n  HostName vj-w-1.vj\n  Port 2222\n"
    )
    assert secret["metadata"]["annotations"]["kubetrain.io/not-credentials"] == "config"
    spec = pick(objs, "Pod", "vj-w-1")["spec"]
    (volume,) = spec["volumes"]
    assert volume["secret"]["defaultMode"] == 0o600
    assert [i["path"] for i in volume["secret"]["items"]] == [
        ".ssh/id_rsa", ".ssh/id_rsa.pub", ".ssh/authorized_keys", ".ssh/config",
    ]  # fmt: skip
    mount = {"mountPath": "/root/.ssh", "subPath": ".ssh", "name": "vj-ssh"}
    assert spec["containers"][0]["volumeMounts"] == [mount]


def test_an_ssh_key_path_elsewhere_is_mounted_readable_and_the_pulumi_secret_marks_the_keys(
    tmp_path: Path,
) -> None:
    from kubetrain.builders.secrets import marker_ref

    doc = vcjob(task("w", 1), plugins={"ssh": ["--ssh-key-file-path=/home/mpi/.ssh",
                                               "--ssh-port=99999"]})  # fmt: skip
    objs = objects(stack_from(tmp_path, {"kubetrain:namespace": "vc", "kubetrain:jobs": [doc]}),
                   target="pulumi")  # fmt: skip
    pod = pick(objs, "Pod", "vj-w-0")
    assert pod["spec"]["volumes"][0]["secret"]["defaultMode"] == 0o644
    assert pod["spec"]["containers"][0]["volumeMounts"][0]["mountPath"] == "/home/mpi/.ssh"
    secret = pick(objs, "Secret", "vj-ssh")["stringData"]
    assert [k for k, v in secret.items() if marker_ref(v)] == ["authorized_keys", "id_rsa",
                                                               "id_rsa.pub"]  # fmt: skip
    assert "Port 22\n" in secret["config"]  # an invalid port falls back to 22


@pytest.mark.parametrize("mode", ["native", "operator"])
@pytest.mark.parametrize("flag", ["--ssh-private-key", "--ssh-public-key"])
def test_no_key_reaches_the_repository_through_the_ssh_plugins_flags(
    tmp_path: Path, mode: str, flag: str
) -> None:
    doc = vcjob(task("w", 1), plugins={"ssh": [f"{flag}=SECRETKEYTEXT"]})
    doc["metadata"]["annotations"] = {"kubetrain.io/mode": mode}
    with pytest.raises(InputError) as err:
        build(tmp_path, doc, secretStore=STORE)
    assert "key material" in str(err.value) and "SECRETKEYTEXT" not in str(err.value)


def test_validate_refuses_what_load_time_refuses_as_volcanos_webhook() -> None:
    """One rule set: a rendered Job edited by hand meets the same admission as a stack's."""
    from kubetrain.validate.webhooks import webhook_problems

    doc = vcjob(task("a", 1), task("a", 2), minAvailable=9)
    doc["metadata"]["namespace"] = "vc"
    at_load = {(p, m) for p, m in model(doc).admission_problems()}
    at_validate = {(p, m) for origin, p, m in webhook_problems(doc) if origin == "webhook:volcano"}
    assert at_load == at_validate
    assert {p for p, _ in at_load} == {("spec", "tasks", 1, "name"), ("spec", "minAvailable")}
    # A Job of the wrong shape is its schema's finding, never the webhook's traceback.
    assert list(webhook_problems({**doc, "spec": {"tasks": "none"}})) == []


def test_every_native_object_is_labelled_kubetrains_as_every_kinds_are(tmp_path: Path) -> None:
    """app.kubernetes.io/* on each object (how plan, GitOps tooling and the e2e observer know a
    job's pods), a pod's task as its component; the Job of operator mode too."""
    doc = vcjob(task("w", 2), plugins={"svc": [], "ssh": []})
    objs = [o for o in build(tmp_path, doc, secretStore=STORE) if o["kind"] != "Namespace"]
    assert len(objs) == 7  # PodGroup, 2 Pods, ConfigMap, Service, NetworkPolicy, the ssh key
    for obj in objs:
        labels = obj["metadata"]["labels"]
        assert labels["app.kubernetes.io/instance"] == "vj", obj["kind"]
        assert labels["app.kubernetes.io/managed-by"] == "kubetrain", obj["kind"]
    pod = pick(objs, "Pod", "vj-w-1")
    assert pod["metadata"]["labels"]["app.kubernetes.io/component"] == "w"
    doc["metadata"]["annotations"] = {"kubetrain.io/mode": "operator"}
    (job,) = [o for o in build(tmp_path, doc) if o["kind"] == "Job"]
    assert job["metadata"]["labels"]["app.kubernetes.io/name"] == "volcanojob"
