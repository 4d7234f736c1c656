"""GPUs normalised in one place: aliases read, conflicts and fractions rejected, one name
written with requests equal to limits."""

from __future__ import annotations

import pytest

from kubetrain.models.resources import gpu_count, gpu_problems, normalize_gpus

GPU = "nvidia.com/gpu"


@pytest.mark.parametrize(
    ("resources", "count"),
    [
        pytest.param({"limits": {GPU: 2}}, 2, id="limits"),
        pytest.param({"limits": {"alpha.kubernetes.io/nvidia-gpu": 1}}, 1, id="alpha-alias"),
        pytest.param({"requests": {GPU: "3"}}, 3, id="requests-only-string"),
        pytest.param({"limits": {"cpu": "1"}}, 0, id="none"),
        pytest.param(None, 0, id="no-resources"),
    ],
)
def test_gpu_count(resources, count) -> None:
    assert gpu_count(resources, GPU) == count


@pytest.mark.parametrize(
    ("resources", "message"),
    [
        pytest.param(
            {"limits": {GPU: "500m"}}, "GPUs are whole devices, got '500m'", id="fraction"
        ),
        pytest.param(
            {"limits": {GPU: 1, "alpha.kubernetes.io/nvidia-gpu": 2}},
            "conflicting GPU counts",
            id="conflict",
        ),
        pytest.param(
            {"limits": {GPU: 2}, "requests": {GPU: 1}},
            "GPU requests must equal limits, got requests 1, limits 2",
            id="requests-differ",
        ),
    ],
)
def test_gpu_problems(resources, message) -> None:
    assert any(message in m for _, m in gpu_problems(resources, GPU))


def test_consistent_gpus_have_no_problems() -> None:
    assert (
        gpu_problems(
            {"limits": {GPU: 1, "alpha.kubernetes.io/nvidia-gpu": 1}, "requests": {GPU: "1"}}, GPU
        )
        == []
    )


def test_normalize_writes_the_stack_resource_with_requests_equal_to_limits() -> None:
    got = normalize_gpus(
        {"limits": {"alpha.kubernetes.io/nvidia-gpu": 2, "cpu": "1"}, "requests": {"cpu": "500m"}},
        "example.com/gpu",
    )
    assert got == {
        "limits": {"cpu": "1", "example.com/gpu": 2},
        "requests": {"cpu": "500m", "example.com/gpu": 2},
    }


def test_normalize_leaves_resources_without_gpus_alone() -> None:
    resources = {"limits": {"cpu": "1"}}
    assert normalize_gpus(resources, GPU) == resources
