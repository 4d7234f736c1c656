"""The TrainJob component: operator mode on a runtime Kubeflow publishes (by name), native mode
on a runtime given by its spec, the same objects as ``kubetrain render`` writes, the webhooks'
refusals as component errors, and its outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from components import TrainJob
from kubetrain.models import InputError

from conftest import REPO
from pulumi_harness import run_pulumi

EXAMPLES = REPO / "stacks" / "trainer-examples"
RUNTIME = yaml.safe_load((EXAMPLES / "runtimes" / "torch-distributed-volcano.yaml").read_text())


def args(**extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "metadata": {"name": "bert", "namespace": "ml"},
        "spec": {
            "runtime_ref": {"name": "torch-distributed"},
            "trainer": {"num_nodes": 3, "command": ["torchrun", "train.py"]},
        },
    }
    out.update(extra)
    return out


def test_operator_mode_on_a_runtime_by_name() -> None:
    def program() -> Any:
        job = TrainJob("ml/bert", args())
        return {"mode": job.mode, "pods": job.pods, "jobset": job.jobset, "sel": job.label_selector}

    run = run_pulumi(program)
    (cr,) = [r for r in run.kubernetes_objects()]
    assert cr.type == "kubernetes:trainer.kubeflow.org/v1alpha1:TrainJob"
    assert cr.plain["spec"]["trainer"]["numNodes"] == 3
    assert run.result == {
        "mode": "operator",
        "pods": 3,
        "jobset": "bert",
        "sel": "jobset.sigs.k8s.io/jobset-name=bert",
    }


def test_native_mode_on_a_runtime_given_by_its_spec() -> None:
    runtime = {"name": "torch-distributed-volcano", "spec": RUNTIME["spec"]}
    spec = {
        "runtime_ref": {"name": "torch-distributed-volcano"},
        "trainer": {"num_nodes": 4, "resources_per_node": {"requests": {"cpu": "1"}}},
    }

    def program() -> Any:
        job = TrainJob(
            "ml/bert",
            {
                "metadata": {"name": "bert", "namespace": "ml"},
                "spec": spec,
                "runtime": runtime,
                "settings": {"native_workload": "jobset"},
            },
        )
        return {"mode": job.mode, "pods": job.pods}

    run = run_pulumi(program)
    kinds = sorted(r.plain["kind"] for r in run.kubernetes_objects())
    assert kinds == ["JobSet", "PodGroup"]
    assert run.result == {"mode": "native", "pods": 4}
    jobset = next(r for r in run.kubernetes_objects() if r.plain["kind"] == "JobSet")
    node = jobset.plain["spec"]["replicatedJobs"][0]
    assert node["template"]["spec"]["parallelism"] == 4


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        pytest.param(
            {"runtime": {"name": "mine"}},
            "runtime: is ClusterTrainingRuntime mine, but the job's runtimeRef names "
            "ClusterTrainingRuntime torch-distributed",
            id="another-runtime",
        ),
        pytest.param(
            {"spec": {"runtime_ref": {"name": "unknown"}}},
            "runtime.spec: kubetrain knows no runtime 'unknown' by name",
            id="unknown-by-name",
        ),
        pytest.param(
            {
                "spec": {
                    "runtime_ref": {"name": "torch-distributed"},
                    "trainer": {"env": [{"name": "PET_NNODES", "value": "9"}]},
                }
            },
            "spec.trainer.env: must not have reserved envs",
            id="reserved-env",
        ),
    ],
)
def test_what_the_component_refuses(extra: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as caught:
        run_pulumi(lambda: TrainJob("ml/bert", args(**extra)) and None)
    assert message in "\n".join(str(p) for p in caught.value.problems)


def test_the_examples_run_through_the_stack_program(tmp_path: Path) -> None:
    """tests/test_pulumi_program.py runs the dev stack, TrainJobs included; here: a runtime
    the stack delivers reaches its TrainJob's component."""
    from components import deploy_stack

    from helpers import stack_from

    job = yaml.safe_load((EXAMPLES / "04-volcano-integration.yaml").read_text())
    stack = stack_from(
        tmp_path,
        {"kubetrain:namespace": "ml", "kubetrain:jobs": [job], "kubetrain:manifests": [RUNTIME]},
    )
    run = run_pulumi(lambda: deploy_stack(stack) and None)
    trainjob = next(r for r in run.kubernetes_objects() if r.plain["kind"] == "TrainJob")
    runs = trainjob.plain["metadata"]["annotations"]["kubetrain.io/runs"]
    assert '"pods":4' in runs
