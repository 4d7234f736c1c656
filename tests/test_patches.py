"""kubetrain:patches: one job document, changed per environment with Kustomize-style patches
(strategic merge and JSON 6902), every problem located in the patch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetrain.models import InputError, Stack, load_stack

from helpers import container, objects, pick

JOB: dict[str, Any] = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "metadata": {"name": "mnist"},
    "spec": {
        "tfReplicaSpecs": {
            "PS": {"template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf:1"}]}}},
            "Worker": {
                "replicas": 2,
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "tensorflow",
                                "image": "tf:1",
                                "args": ["--steps", "10"],
                                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                            },
                            {"name": "sidecar", "image": "busybox"},
                        ]
                    }
                },
            },
        }
    },
}


def project(tmp_path: Path, patches: Any, *, extra: str = "") -> Path:
    """A project whose stack takes JOB from a job file and applies ``patches``."""
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir(exist_ok=True)
    (tmp_path / "stacks" / "job.yaml").write_text(yaml.safe_dump(JOB, sort_keys=False))
    stack = tmp_path / "stacks" / "Pulumi.prod.yaml"
    stack.write_text(
        "config:\n  kubetrain:namespace: prod\n  kubetrain:jobFiles: [stacks/job.yaml]\n"
        + yaml.safe_dump({"kubetrain:patches": patches}, sort_keys=False, indent=2)
        .replace("\n", "\n  ")
        .join(["  ", ""])
        + extra
    )
    return stack


def loaded(tmp_path: Path, patches: Any) -> Stack:
    return load_stack(project(tmp_path, patches))


def worker(stack: Stack) -> dict[str, Any]:
    spec = stack.jobs[0].document.spec.tf_replica_specs["Worker"]  # type: ignore[attr-defined]
    return {"replicas": spec.replicas, **spec.template["spec"]}


TARGET = {"kind": "TFJob", "name": "mnist"}


@pytest.mark.parametrize(
    ("patch", "expect"),
    [
        pytest.param(
            {"spec": {"tfReplicaSpecs": {"Worker": {"replicas": 8}}}},
            lambda w: w["replicas"] == 8 and len(w["containers"]) == 2,
            id="scalar",
        ),
        pytest.param(
            {
                "spec": {
                    "tfReplicaSpecs": {
                        "Worker": {
                            "template": {
                                "spec": {"containers": [{"name": "tensorflow", "image": "tf:2"}]}
                            }
                        }
                    }
                }
            },
            # Containers merge by name (Kubernetes' patchMergeKey): the sidecar stays, the
            # tensorflow container keeps its args and env.
            lambda w: (
                [c["name"] for c in w["containers"]] == ["tensorflow", "sidecar"]
                and w["containers"][0]["image"] == "tf:2"
                and w["containers"][0]["args"] == ["--steps", "10"]
            ),
            id="containers-merge-by-name",
        ),
        pytest.param(
            {
                "spec": {
                    "tfReplicaSpecs": {
                        "Worker": {
                            "template": {
                                "spec": {
                                    "containers": [
                                        {
                                            "name": "tensorflow",
                                            "env": [
                                                {"name": "B", "value": "20"},
                                                {"name": "C", "value": "3"},
                                            ],
                                        }
                                    ]
                                }
                            }
                        }
                    }
                }
            },
            lambda w: (
                w["containers"][0]["env"]
                == [
                    {"name": "A", "value": "1"},
                    {"name": "B", "value": "20"},
                    {"name": "C", "value": "3"},
                ]
            ),
            id="env-merge-by-name-and-append",
        ),
        pytest.param(
            {
                "spec": {
                    "tfReplicaSpecs": {
                        "Worker": {
                            "template": {
                                "spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}
                            }
                        }
                    }
                }
            },
            lambda w: [c["name"] for c in w["containers"]] == ["tensorflow"],
            id="delete-list-item",
        ),
        pytest.param(
            {
                "spec": {
                    "tfReplicaSpecs": {
                        "Worker": {
                            "template": {
                                "spec": {
                                    "containers": [
                                        {"$patch": "replace"},
                                        {"name": "tensorflow", "image": "tf:3"},
                                    ]
                                }
                            }
                        }
                    }
                }
            },
            lambda w: w["containers"] == [{"name": "tensorflow", "image": "tf:3"}],
            id="replace-list",
        ),
        pytest.param(
            {
                "spec": {
                    "tfReplicaSpecs": {
                        "Worker": {
                            "template": {
                                "spec": {"containers": [{"name": "tensorflow", "args": None}]}
                            }
                        }
                    }
                }
            },
            lambda w: "args" not in w["containers"][0],
            id="null-deletes-a-key",
        ),
        pytest.param(
            {
                "spec": {
                    "tfReplicaSpecs": {
                        "Worker": {
                            "template": {
                                "spec": {"containers": [{"name": "tensorflow", "args": ["--x"]}]}
                            }
                        }
                    }
                }
            },
            lambda w: w["containers"][0]["args"] == ["--x"],
            id="scalar-list-is-replaced",
        ),
    ],
)
def test_strategic_merge(tmp_path: Path, patch: dict[str, Any], expect: Any) -> None:
    stack = loaded(tmp_path, [{"target": TARGET, "patch": patch}])
    assert expect(worker(stack))


@pytest.mark.parametrize(
    ("ops", "expect"),
    [
        pytest.param(
            [{"op": "replace", "path": "/spec/tfReplicaSpecs/Worker/replicas", "value": 4}],
            lambda w: w["replicas"] == 4,
            id="replace",
        ),
        pytest.param(
            [
                {
                    "op": "add",
                    "path": "/spec/tfReplicaSpecs/Worker/template/spec/containers/0/args/-",
                    "value": "--fast",
                }
            ],
            lambda w: w["containers"][0]["args"] == ["--steps", "10", "--fast"],
            id="add-to-end",
        ),
        pytest.param(
            [{"op": "remove", "path": "/spec/tfReplicaSpecs/Worker/template/spec/containers/1"}],
            lambda w: len(w["containers"]) == 1,
            id="remove",
        ),
        pytest.param(
            [
                {"op": "test", "path": "/spec/tfReplicaSpecs/Worker/replicas", "value": 2},
                {
                    "op": "copy",
                    "from": "/spec/tfReplicaSpecs/Worker/replicas",
                    "path": "/spec/tfReplicaSpecs/PS/replicas",
                },
            ],
            lambda w: w["replicas"] == 2,
            id="test-and-copy",
        ),
    ],
)
def test_json_patch(tmp_path: Path, ops: list[Any], expect: Any) -> None:
    stack = loaded(tmp_path, [{"target": TARGET, "patch": ops}])
    assert expect(worker(stack))


def test_patches_apply_in_order_and_a_string_patch_reads_as_in_kustomization(
    tmp_path: Path,
) -> None:
    text = "- op: replace\n  path: /spec/tfReplicaSpecs/Worker/replicas\n  value: 5\n"
    stack = loaded(
        tmp_path,
        [
            {"target": TARGET, "patch": {"spec": {"tfReplicaSpecs": {"Worker": {"replicas": 3}}}}},
            {"target": TARGET, "patch": text},
        ],
    )
    assert worker(stack)["replicas"] == 5


def test_strategic_patch_without_target_names_its_document(tmp_path: Path) -> None:
    patch = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist"},
        "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 6}}},
    }
    assert worker(loaded(tmp_path, [{"patch": patch}]))["replicas"] == 6


@pytest.mark.parametrize(
    ("target", "hits"),
    [
        pytest.param({"kind": "TFJob", "name": "mni.*"}, True, id="name-regex"),
        pytest.param({"kind": "TFJob", "namespace": "prod"}, True, id="default-namespace"),
        pytest.param({"group": "kubeflow.org", "version": "v1", "kind": "TFJob"}, True, id="gvk"),
        pytest.param({"kind": "TFJob", "name": "mnis"}, False, id="name-is-anchored"),
        pytest.param({"kind": "TFJob", "namespace": "dev"}, False, id="other-namespace"),
        pytest.param({"kind": "TrainingJob"}, False, id="other-kind"),
        # Kustomize's group, version and kind are anchored regular expressions too.
        pytest.param({"kind": "TF.*", "version": "v[0-9]+"}, True, id="kind-regex"),
        pytest.param({"kind": "TF"}, False, id="kind-is-anchored"),
        pytest.param({"group": "kubeflow\\..*"}, True, id="group-regex"),
        pytest.param({"group": "", "kind": "TFJob"}, False, id="empty-group-is-core"),
    ],
)
def test_targets_select_as_kustomize(tmp_path: Path, target: dict[str, str], hits: bool) -> None:
    patches = [{"target": target, "patch": {"metadata": {"labels": {"env": "prod"}}}}]
    if hits:
        assert loaded(tmp_path, patches).jobs[0].document.metadata.labels == {"env": "prod"}
    else:
        with pytest.raises(InputError, match="matches no job or manifest of this stack"):
            loaded(tmp_path, patches)


def test_patch_file_is_located_in_that_file(tmp_path: Path) -> None:
    stack = project(tmp_path, [{"path": "stacks/patches/prod.yaml"}])
    (tmp_path / "stacks" / "patches").mkdir()
    (tmp_path / "stacks" / "patches" / "prod.yaml").write_text(
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: mnist}\n"
        "spec:\n  tfReplicaSpecs:\n    Worker:\n      replicas: -1\n"
    )
    with pytest.raises(InputError) as err:
        load_stack(stack)
    (problem,) = err.value.problems
    assert problem.file.endswith("stacks/patches/prod.yaml")
    assert (problem.line, problem.path) == (7, ("spec", "tfReplicaSpecs", "Worker", "replicas"))
    assert problem.message.endswith("(patching TFJob prod/mnist)")


def test_errors_outside_what_a_patch_wrote_stay_in_the_job(tmp_path: Path) -> None:
    """Only values the patch wrote are located in the patch."""
    bad = dict(JOB, spec={"tfReplicaSpecs": {"Worker": {"replicas": "many"}}})
    stack = project(tmp_path, [{"target": TARGET, "patch": {"metadata": {"labels": {"a": "b"}}}}])
    (tmp_path / "stacks" / "job.yaml").write_text(yaml.safe_dump(bad, sort_keys=False))
    with pytest.raises(InputError) as err:
        load_stack(stack)
    assert any(
        p.file.endswith("job.yaml") and p.path[-1] == "replicas" for p in err.value.problems
    ), err.value


def test_a_patched_stack_renders_the_patched_job(tmp_path: Path) -> None:
    stack = loaded(
        tmp_path,
        [
            {
                "target": TARGET,
                "patch": {
                    "spec": {
                        "tfReplicaSpecs": {
                            "Worker": {
                                "replicas": 3,
                                "template": {
                                    "spec": {
                                        "containers": [{"name": "tensorflow", "image": "tf:9"}]
                                    }
                                },
                            }
                        }
                    }
                },
            }
        ],
    )
    objs = objects(stack)
    assert container(pick(objs, "Job", "mnist-worker-2"))["image"] == "tf:9"
    assert container(pick(objs, "Job", "mnist-ps-0"))["image"] == "tf:1"


def test_the_example_prod_stack_patches_the_shared_job_file() -> None:
    """stacks/Pulumi.prod.yaml changes Kubeflow's dist-mnist (as the dev stack renders it
    unchanged): 8 workers, 1 parameter server, more memory."""
    from conftest import REPO

    prod = load_stack(REPO / "stacks" / "Pulumi.prod.yaml")
    dev = load_stack(REPO / "stacks" / "Pulumi.dev.yaml")

    def job(stack: Stack) -> Any:
        return next(j for j in stack.jobs if j.document.name == "dist-mnist-for-e2e-test")

    specs = job(prod).document.spec.tf_replica_specs  # type: ignore[attr-defined]
    assert (specs["Worker"].replicas, specs["PS"].replicas) == (8, 1)
    dev_specs = job(dev).document.spec.tf_replica_specs  # type: ignore[attr-defined]
    assert (dev_specs["Worker"].replicas, dev_specs["PS"].replicas) == (4, 2)


# --- hostile patches ---------------------------------------------------------------------------

_keys = st.sampled_from(
    [
        "spec",
        "tfReplicaSpecs",
        "Worker",
        "template",
        "containers",
        "$patch",
        "replicas",
        "name",
        "x",
    ]
)
_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from(["delete", "replace", "tf", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3),
    max_leaves=12,
)
_pointers = st.lists(
    st.sampled_from(
        ["spec", "tfReplicaSpecs", "Worker", "template", "spec", "containers", "0", "-", "~1", "9"]
    ),
    max_size=7,
).map(lambda parts: "/" + "/".join(parts))
_ops = st.fixed_dictionaries(
    {
        "op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"]),
        "path": _pointers,
    },
    optional={"value": _values, "from": _pointers},
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    patch=_values
    | st.lists(_ops, max_size=4)
    | st.lists(_values, max_size=3).map(
        lambda c: {
            "spec": {"tfReplicaSpecs": {"Worker": {"template": {"spec": {"containers": c}}}}}
        }
    )
)
def test_no_patch_makes_a_traceback(tmp_path: Path, patch: Any) -> None:
    """Any patch either applies or is an input error located in the stack file."""
    try:
        loaded(tmp_path, [{"target": TARGET, "patch": patch}])
    except InputError as exc:
        assert exc.problems and all(p.file.endswith(".yaml") for p in exc.problems)


# --- additions a patch must declare ---------------------------------------------------------------


def _worker_patch(**template_spec: Any) -> dict[str, Any]:
    return {"spec": {"tfReplicaSpecs": {"Worker": {"template": {"spec": template_spec}}}}}


@pytest.mark.parametrize(
    ("patch", "words"),
    [
        pytest.param(
            _worker_patch(containers=[{"name": "tensorfow", "image": "tf:2"}]),
            "adds the container 'tensorfow', which the document does not have (did you mean "
            "'tensorflow'?)",
            id="misspelt-container",
        ),
        pytest.param(
            _worker_patch(volumes=[{"name": "scratch", "emptyDir": {}}]),
            "adds the volume 'scratch', which the document does not have;",
            id="volume",
        ),
        pytest.param(
            {"spec": {"tfReplicaSpecs": {"Workers": {"replicas": 3}}}},
            "adds the replica type 'Workers', which the document does not have (did you mean "
            "'Worker'?)",
            id="replica-type",
        ),
        pytest.param(
            [
                {
                    "op": "add",
                    "path": "/spec/tfReplicaSpecs/Worker/template/spec/containers/-",
                    "value": {"name": "tensorfow", "image": "tf:2"},
                }
            ],
            "adds the container 'tensorfow'",
            id="json-container",
        ),
        pytest.param(
            [{"op": "add", "path": "/spec/tfReplicaSpecs/Chief", "value": {"replicas": 1}}],
            "adds the replica type 'Chief', which the document does not have (it has 'PS', "
            "'Worker')",
            id="json-replica-type",
        ),
    ],
)
def test_an_addition_is_refused_unless_the_patch_says_so(
    tmp_path: Path, patch: Any, words: str
) -> None:
    entry = {"target": TARGET, "patch": patch}
    with pytest.raises(InputError) as raised:
        loaded(tmp_path, [entry])
    assert words in str(raised.value)
    assert "set adds: true on this patch" in str(raised.value)
    assert "kubetrain:patches[0].patch" in str(raised.value)


def test_a_patch_that_says_adds_may_add(tmp_path: Path) -> None:
    patch = _worker_patch(
        containers=[{"name": "metrics", "image": "statsd:1"}],
        volumes=[{"name": "scratch", "emptyDir": {}}],
    )
    stack = loaded(tmp_path, [{"target": TARGET, "patch": patch, "adds": True}])
    spec = worker(stack)
    assert [c["name"] for c in spec["containers"]] == ["tensorflow", "sidecar", "metrics"]
    assert [v["name"] for v in spec["volumes"]] == ["scratch"]


def test_changing_what_exists_needs_no_declaration(tmp_path: Path) -> None:
    patch = _worker_patch(containers=[{"name": "tensorflow", "image": "tf:2"}])
    stack = loaded(tmp_path, [{"target": TARGET, "patch": patch}])
    assert container({"kind": "Pod", "spec": worker(stack)})["image"] == "tf:2"


# --- growth is bounded before the work -------------------------------------------------------------


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(doublings=st.integers(min_value=1, max_value=60), seed=st.integers(1, 4096))
def test_a_copy_chain_cannot_grow_a_document_past_the_object_bound(
    tmp_path: Path, doublings: int, seed: int
) -> None:
    """Each copy of the annotations map into itself doubles it: a chain past 1.5 MiB stops with
    an input error at the operation that would pass it, before doing it (a 60-step chain would be
    2**60 times the seed); a short one reaches the schema, which refuses a map as an annotation."""
    ops: list[dict[str, Any]] = [
        {"op": "add", "path": "/metadata/annotations", "value": {"a0": "x" * seed}}
    ]
    ops += [
        {"op": "copy", "from": "/metadata/annotations", "path": f"/metadata/annotations/a{i + 1}"}
        for i in range(doublings)
    ]
    with pytest.raises(InputError) as raised:
        loaded(tmp_path, [{"target": TARGET, "patch": ops}])
    grown = (seed + len('{"a0":""}')) * 2**doublings  # the map doubles, keys and all
    if grown > 2 * 2**20:
        assert "larger than 1.5 MiB, the size of an object kubetrain writes" in str(raised.value)
    elif grown < 2**20:
        assert "larger than" not in str(raised.value)


def test_a_patch_is_not_said_to_match_nothing_when_its_target_could_not_be_read(
    tmp_path: Path,
) -> None:
    """A YAML error in the job file hides the job the patch targets: the YAML error is the one
    problem, not a follow-on "matches no job" of the patch."""
    stack = project(
        tmp_path, [{"target": TARGET, "patch": {"spec": {"runPolicy": {"suspend": True}}}}]
    )
    (tmp_path / "stacks" / "job.yaml").write_text(
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: mnist\n"
    )
    with pytest.raises(InputError) as raised:
        load_stack(stack)
    assert [p.message.split(":")[0] for p in raised.value.problems] == ["invalid YAML"]
