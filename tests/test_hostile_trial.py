"""The hostile trial of the features added after the first one (patches, plain manifests, CEL,
``init``, ``validate -``, ``diff``): each class of break it found, the input that found it, the
bound or rule that closes it, and a property over the class."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetrain.models.limits import MAX_FILE_BYTES, MAX_OBJECTS
from kubetrain.models.source import expand_list_values, list_problem

PROPERTY = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def config_map(name: str, namespace: str = "ml") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {"k": "v"},
    }


def write_stack(project: Path, config: dict[str, Any]) -> None:
    (project / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))


# --- standard input: bytes that are not UTF-8, input past the limit -----------------------------


def test_bytes_that_are_not_utf8_on_stdin_are_the_inputs_finding(run) -> None:
    done = run("validate", "-", input=b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \xff}\n")
    assert done.exit_code == 1
    assert "<stdin>: not UTF-8 text (invalid start byte) (yaml)" in done.stdout


def test_stdin_past_the_limit_is_an_input_error_not_a_verdict(run, monkeypatch) -> None:
    # What was read of a cut stream is not the input: no finding, exit 2.
    monkeypatch.setattr("kubetrain.validate.engine.MAX_FILE_BYTES", 64)
    done = run("validate", "-", input=b"apiVersion: v1\n" + b"#" * 100)
    assert done.exit_code == 2, done.stdout
    assert done.stdout == ""
    assert done.stderr.startswith("<stdin>: is more than 128 MiB; kubetrain reads files of at most")


def test_a_given_file_past_the_limit_is_an_input_error(tmp_path: Path, run) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as f:
        f.write(b"apiVersion: v1\n")
        f.truncate(MAX_FILE_BYTES + 1)  # sparse
    done = run("validate", str(big), cwd=tmp_path)
    assert done.exit_code == 2
    assert "big.yaml: is 128 MiB; kubetrain reads files of at most 128 MiB" in done.stderr


@PROPERTY
@given(st.binary(max_size=200))
def test_any_bytes_on_stdin_end_in_a_verdict_or_an_input_error(run, data: bytes) -> None:
    done = run("validate", "-", input=data)
    assert done.exit_code in (0, 1, 2)
    assert "Traceback" not in done.stdout + done.stderr


# --- list objects (kind: List) ---------------------------------------------------------------------


def test_validate_takes_the_items_of_a_list_with_their_lines(tmp_path: Path, run) -> None:
    listed = {"apiVersion": "v1", "kind": "List", "items": [config_map("a"), config_map("B")]}
    (tmp_path / "list.yaml").write_text(yaml.safe_dump(listed, sort_keys=False))
    done = run("validate", "list.yaml", cwd=tmp_path)
    assert done.exit_code == 1
    # The second item's name, at its own line; the list itself is no object.
    lines = (tmp_path / "list.yaml").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "name: B" in text)
    assert f"list.yaml:{line}: metadata.name: 'B' is not a valid DNS-1123 subdomain" in done.stdout
    assert "Summary: 2 objects: 1 valid, 1 invalid" in done.stdout
    assert "List" not in done.stdout.replace("list.yaml", "")


def test_a_stack_renders_the_items_of_a_listed_manifest_and_patches_reach_them(
    project: Path, run
) -> None:
    listed = {"apiVersion": "v1", "kind": "ConfigMapList", "items": [config_map("a")]}
    write_stack(
        project,
        {
            "kubetrain:manifests": [listed],
            "kubetrain:patches": [
                {"target": {"kind": "ConfigMap", "name": "a"}, "patch": {"data": {"k": "w"}}}
            ],
        },
    )
    done = run("render", cwd=project)
    assert done.exit_code == 0, done.stderr
    rendered = list((project / "rendered" / "dev").rglob("configmap-a.yaml"))
    assert len(rendered) == 1
    assert yaml.safe_load(rendered[0].read_text())["data"] == {"k": "w"}


def test_a_list_past_the_bound_is_refused_before_its_items_are_read(
    project: Path, run, monkeypatch
) -> None:
    monkeypatch.setattr("kubetrain.models.source.MAX_OBJECTS", 2)
    listed = {"apiVersion": "v1", "kind": "List", "items": [config_map(f"c{i}") for i in range(3)]}
    write_stack(project, {"kubetrain:manifests": [listed]})
    done = run("render", cwd=project)
    assert done.exit_code == 2
    assert (
        "config.kubetrain:manifests[0].items: a list object of 3 items: kubetrain reads at most "
        "2 objects from one list" in done.stderr
    )
    assert not (project / "rendered").exists()


_leaf = st.fixed_dictionaries(
    {"apiVersion": st.just("v1"), "kind": st.sampled_from(["ConfigMap", "Secret", "Pod"])}
)
_listed = st.recursive(
    _leaf,
    lambda inner: st.fixed_dictionaries(
        {
            "apiVersion": st.just("v1"),
            "kind": st.sampled_from(["List", "PodList"]),
            "items": st.lists(inner, max_size=4),
        }
    ),
    max_leaves=12,
)


@settings(max_examples=100, deadline=None)
@given(_listed)
def test_a_list_expands_to_its_leaves_each_at_its_path(data: dict[str, Any]) -> None:
    leaves = list(expand_list_values(data))
    for path, item in leaves:
        found: Any = data
        for part in path:
            found = found[part]
        assert found is item
        assert "items" not in item
    assert len(leaves) == json.dumps(data).count('"kind": "ConfigMap"') + json.dumps(data).count(
        '"kind": "Secret"'
    ) + json.dumps(data).count('"kind": "Pod"')
    assert list_problem(data) is None or len(leaves) > MAX_OBJECTS


# --- patch targets: Go's regular expressions, matched in linear time ---------------------------


def test_a_backtracking_target_name_matches_in_linear_time(project: Path, run) -> None:
    # (a+)+b against a long name of a's backtracks for ever in Python's re; RE2 (Go's
    # language) answers at once that nothing matches.
    name = "a" * 60
    write_stack(
        project,
        {
            "kubetrain:manifests": [config_map(name)],
            "kubetrain:patches": [
                {"target": {"kind": "ConfigMap", "name": "(a+)+b"}, "patch": {"data": {"k": "w"}}}
            ],
        },
    )
    done = run("render", cwd=project)
    assert done.exit_code == 2
    assert "patch target (kind=ConfigMap name=(a+)+b) matches no job or manifest" in done.stderr


@pytest.mark.parametrize(
    ("pattern", "message"),
    [("(?=a)", "invalid perl operator: (?="), ("(a)\\1", "invalid escape sequence: \\1")],
)
def test_a_target_go_cannot_compile_is_refused(
    project: Path, run, pattern: str, message: str
) -> None:
    write_stack(
        project,
        {
            "kubetrain:manifests": [config_map("a")],
            "kubetrain:patches": [
                {"target": {"kind": "ConfigMap", "name": pattern}, "patch": {"data": {"k": "w"}}}
            ],
        },
    )
    done = run("render", cwd=project)
    assert done.exit_code == 2
    assert f"target.name: not a regular expression (error parsing regexp: {message})" in done.stderr


_re_atom = st.sampled_from(["a", "b", ".", "[ab]", "[^a]", "\\d", "x"])


def _re(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return _re_atom
    inner = _re(depth - 1)
    return st.one_of(
        inner,
        st.tuples(inner, inner).map("".join),
        st.tuples(inner, inner).map(lambda p: f"(?:{p[0]}|{p[1]})"),
        inner.map(lambda r: f"(?:{r})*"),
        inner.map(lambda r: f"(?:{r})+"),
        inner.map(lambda r: f"(?:{r})?"),
        inner.map(lambda r: f"(?:{r}){{1,3}}"),
    )


@settings(max_examples=300, deadline=None)
@given(_re(3), st.text(alphabet="ab1x-", max_size=12))
def test_go_patterns_match_as_python_would_on_the_common_language(pattern: str, name: str) -> None:
    import re

    from kubetrain.kube.regex import go_regex

    assert go_regex(pattern).fullmatch(name) == (re.fullmatch(pattern, name) is not None)


# --- leaks: ExternalSecret templates, repoURL tokens, a planted credential in diff -------------


def external_secret(data: dict[str, str], **annotations: str) -> dict[str, Any]:
    return {
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "db", "annotations": annotations},
        "spec": {
            "secretStoreRef": {"name": "vault", "kind": "ClusterSecretStore"},
            "target": {"name": "db", "template": {"data": data}},
            "data": [{"secretKey": "pass", "remoteRef": {"key": "db/pass"}}],
        },
    }


#: A literal no error message holds: where it would be printed, a leak shows.
CANARY = "Kt9canaryQ7"
_secretish = st.text(
    alphabet=st.characters(codec="ascii", categories=["L", "N"]), min_size=6, max_size=30
)


@PROPERTY
@given(_secretish)
def test_a_literal_in_an_external_secret_template_is_refused_unquoted(
    project: Path, run, value: str
) -> None:
    write_stack(project, {"kubetrain:manifests": [external_secret({"password": value})]})
    done = run("render", cwd=project)
    assert done.exit_code == 2
    assert (
        "config.kubetrain:manifests[0].spec.target.template.data.password: a literal value in an "
        "ExternalSecret's template is secret material in the repository" in done.stderr
    )
    # Not leaked: what is printed does not depend on the value at all, and holds no canary
    # (a value such as "creden" is spelt by the message's own "credential": found in CI).
    write_stack(project, {"kubetrain:manifests": [external_secret({"password": CANARY})]})
    baseline = run("render", cwd=project).stderr
    assert CANARY not in baseline
    assert done.stderr == baseline
    assert not (project / "rendered").exists()


def test_a_template_of_store_values_renders(project: Path, run) -> None:
    templated = {"url": "postgres://{{ .user }}:{{ .pass }}@db", "mode": "strict"}
    write_stack(
        project,
        {
            "kubetrain:manifests": [
                external_secret(templated, **{"kubetrain.io/not-credentials": "mode"})
            ]
        },
    )
    done = run("render", cwd=project)
    assert done.exit_code == 0, done.stderr


@PROPERTY
@given(st.sampled_from(["?private_token=", "#access_token=", "?x=1&token=", "#"]), _secretish)
def test_a_repo_url_with_a_query_or_fragment_is_refused_unquoted(
    project: Path, run, where: str, token: str
) -> None:
    url = f"https://git.example.com/ml.git{where}{token}"
    write_stack(project, {"kubetrain:gitops": {"repoURL": url}})
    done = run("render", cwd=project)
    assert done.exit_code == 2
    assert (
        "config.kubetrain:gitops.repoURL: must not have a query (?...) or a fragment" in done.stderr
    )
    assert token not in done.stderr


def tfjob_doc() -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist"},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": 1,
                    "template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf:2"}]}},
                }
            }
        },
    }


@PROPERTY
@given(_secretish)
def test_diff_never_prints_a_credential_planted_in_a_rendered_file(
    project: Path, run, value: str
) -> None:
    write_stack(project, {"kubetrain:namespace": "ml", "kubetrain:jobs": [tfjob_doc()]})
    assert run("render", cwd=project).exit_code == 0
    planted = next((project / "rendered" / "dev").rglob("job-mnist-worker-0.yaml"))
    text = planted.read_text()
    assert text.count("      - image: tf:2\n") == 1  # one container, no env yet

    def planting(secret: str) -> Any:
        env = f"      - env:\n        - name: DB_PASSWORD\n          value: {secret}\n        image: tf:2\n"
        planted.write_text(text.replace("      - image: tf:2\n", env))
        return run("diff", cwd=project)

    done = planting(value)
    assert done.exit_code == 1
    assert "(not shown: it holds what looks like a credential, which render never writes)" in (
        done.stdout
    )
    # Not printed: the output does not depend on the value, and holds no canary (a substring
    # search would fail for a value spelt by the output's own words, as "creden" was).
    baseline = planting(CANARY)
    assert CANARY not in baseline.stdout + baseline.stderr
    assert (done.stdout, done.stderr) == (baseline.stdout, baseline.stderr)


# --- escapes: patch files stay inside the project ------------------------------------------------


@pytest.mark.parametrize("kind", ["parent", "absolute", "link"])
def test_a_patch_file_outside_the_project_is_refused_unread(
    project: Path, tmp_path_factory, run, kind: str
) -> None:
    outside = tmp_path_factory.mktemp("outside") / "p.yaml"
    outside.write_text("spec: {tfReplicaSpecs: {Worker: {replicas: 7}}}\n# SECRET-MARK\n")
    if kind == "parent":
        path = "../" * 8 + str(outside).lstrip("/")
    elif kind == "absolute":
        path = str(outside)
    else:
        (project / "stacks" / "link.yaml").symlink_to(outside)
        path = "stacks/link.yaml"
    write_stack(
        project,
        {
            "kubetrain:jobs": [tfjob_doc()],
            "kubetrain:patches": [{"target": {"kind": "TFJob", "name": "mnist"}, "path": path}],
        },
    )
    done = run("render", cwd=project)
    assert done.exit_code == 2
    assert "config.kubetrain:patches[0].path:" in done.stderr
    assert "outside the project" in done.stderr
    assert "SECRET-MARK" not in done.stderr and "replicas" not in done.stderr


@PROPERTY
@given(
    st.lists(st.sampled_from(["..", "a", ".", "b.yaml", "~", ""]), min_size=1, max_size=5),
    st.booleans(),
)
def test_no_patch_path_reads_outside_the_project(
    project: Path, run, parts: list[str], absolute: bool
) -> None:
    path = ("/" if absolute else "") + "/".join(parts)
    write_stack(
        project,
        {
            "kubetrain:jobs": [tfjob_doc()],
            "kubetrain:patches": [{"target": {"kind": "TFJob", "name": "mnist"}, "path": path}],
        },
    )
    done = run("render", cwd=project)
    # Nothing named exists inside the project: every path ends in exit 2, never in a read of
    # a file outside it (a path that leaves is refused before it is opened).
    assert done.exit_code == 2
    assert "Traceback" not in done.stderr
    leaves = absolute or ".." in parts or path.startswith("~")
    assert ("outside the project" in done.stderr) == leaves or not leaves


# --- a render during a checkout: inputs that change while they are read ------------------------


def _changes_during_read(project: Path, monkeypatch, change: str) -> None:
    """After the first job file is read, change the project as a checkout would."""
    import kubetrain.models.source as source

    real = source.read_text
    done: list[bool] = []

    def reading(path: Any, *args: Any, **kwargs: Any) -> str:
        text = real(path, *args, **kwargs)
        if not done and str(path).endswith("a.yaml"):
            done.append(True)
            stack = project / "stacks" / "Pulumi.dev.yaml"
            if change == "stack-rewritten":
                stack.write_text(stack.read_text() + "\n# another commit\n")
            elif change == "job-replaced":
                (project / "stacks" / "jobs" / "a.yaml").unlink()
                (project / "stacks" / "jobs" / "a.yaml").write_text(yaml.safe_dump(tfjob_doc()))
            elif change == "file-added":
                other = tfjob_doc()
                other["metadata"]["name"] = "other"
                (project / "stacks" / "jobs" / "c.yaml").write_text(yaml.safe_dump(other))
            elif change == "file-removed":
                (project / "stacks" / "jobs" / "b.yaml").unlink()
        return text

    monkeypatch.setattr(source, "read_text", reading)


@pytest.mark.parametrize(
    "change", ["stack-rewritten", "job-replaced", "file-added", "file-removed"]
)
def test_a_project_that_changes_while_read_is_not_rendered(
    project: Path, run, monkeypatch, change: str
) -> None:
    jobs = project / "stacks" / "jobs"
    jobs.mkdir()
    for name in ("a", "b"):
        doc = tfjob_doc()
        doc["metadata"]["name"] = name
        (jobs / f"{name}.yaml").write_text(yaml.safe_dump(doc))
    write_stack(
        project, {"kubetrain:namespace": "ml", "kubetrain:jobFiles": ["stacks/jobs/*.yaml"]}
    )
    _changes_during_read(project, monkeypatch, change)
    done = run("render", cwd=project)
    assert done.exit_code == 2, done.stderr
    assert "the project changed while kubetrain read it" in done.stderr
    assert "nothing was done" in done.stderr
    assert not (project / "rendered").exists()
    # Once the change is complete, the next render reads one state and writes it.
    monkeypatch.undo()
    assert run("render", cwd=project).exit_code == 0


def test_a_project_that_does_not_change_renders(project: Path, run) -> None:
    write_stack(project, {"kubetrain:namespace": "ml", "kubetrain:jobs": [tfjob_doc()]})
    assert run("render", cwd=project).exit_code == 0


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(["stack-rewritten", "job-replaced", "file-added", "file-removed", "none"]),
    st.sampled_from(["a.yaml", "b.yaml", "Pulumi.dev.yaml"]),
)
def test_a_render_acts_on_one_state_of_the_project_or_none(
    tmp_path_factory, change: str, trigger: str
) -> None:
    from click.testing import CliRunner

    import kubetrain.models.source as source
    from kubetrain.cli import main

    project = tmp_path_factory.mktemp("p")
    (project / "Pulumi.yaml").write_text("name: k\nruntime: python\nstackConfigDir: stacks\n")
    jobs = project / "stacks" / "jobs"
    jobs.mkdir(parents=True)
    for name in ("a", "b"):
        doc = tfjob_doc()
        doc["metadata"]["name"] = name
        (jobs / f"{name}.yaml").write_text(yaml.safe_dump(doc))
    write_stack(
        project, {"kubetrain:namespace": "ml", "kubetrain:jobFiles": ["stacks/jobs/*.yaml"]}
    )
    real = source.read_text
    fired: list[bool] = []

    def reading(path: Any, *args: Any, **kwargs: Any) -> str:
        text = real(path, *args, **kwargs)
        if not fired and str(path).endswith(trigger) and change != "none":
            fired.append(True)
            if change == "stack-rewritten":
                stack = project / "stacks" / "Pulumi.dev.yaml"
                stack.write_text(stack.read_text() + "\n# another commit\n")
            elif change == "job-replaced":
                (jobs / "a.yaml").unlink()
                (jobs / "a.yaml").write_text(yaml.safe_dump(tfjob_doc()))
            elif change == "file-added":
                other = tfjob_doc()
                other["metadata"]["name"] = "c"
                (jobs / "c.yaml").write_text(yaml.safe_dump(other))
            elif change == "file-removed":
                (jobs / "b.yaml").unlink()
        return text

    source.read_text = reading  # type: ignore[assignment]
    cwd = Path.cwd()
    try:
        os.chdir(project)
        result = CliRunner().invoke(main, ["render"], catch_exceptions=False)
    finally:
        os.chdir(cwd)
        source.read_text = real  # type: ignore[assignment]
    if result.exit_code == 2:
        # Refused: only because the project changed under it, and nothing written.
        assert fired
        assert "the project changed while kubetrain read it" in result.stderr
        assert not (project / "rendered").exists()
    else:
        # Written: then what it wrote is one state of the project, the one it is in now (a
        # change before the files it touches were read is simply the state read).
        assert result.exit_code == 0, result.stderr
        try:
            os.chdir(project)
            again = CliRunner().invoke(main, ["diff"], catch_exceptions=False)
        finally:
            os.chdir(cwd)
        assert again.exit_code == 0, again.stdout
    if fired and change in ("stack-rewritten", "file-removed") and trigger != "Pulumi.dev.yaml":
        assert result.exit_code == 2  # read, then changed: always caught


# --- init: names, control characters, all or nothing ------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,110}", fullmatch=True), st.text()),
    st.one_of(st.from_regex(r"[a-z]([a-z0-9-]{0,66}[a-z0-9])?", fullmatch=True), st.text()),
)
def test_init_writes_a_project_render_takes_or_nothing(
    tmp_path_factory, stack: str, namespace: str
) -> None:
    from click.testing import CliRunner

    from kubetrain.cli import main

    root = tmp_path_factory.mktemp("init")
    result = CliRunner().invoke(
        main, ["init", str(root / "p"), "--stack", stack, "--namespace", namespace]
    )
    assert result.exit_code in (0, 2), result.output
    shown = result.stdout + result.stderr
    assert not any(ord(c) < 32 and c not in "\n" for c in shown), repr(shown)
    written = [p for p in (root / "p").rglob("*")] if (root / "p").exists() else []
    if result.exit_code == 2:
        assert [p for p in written if p.is_file()] == []
        return
    cwd = Path.cwd()
    try:
        os.chdir(root / "p")
        rendered = CliRunner().invoke(main, ["render", "--stack", stack])
    finally:
        os.chdir(cwd)
    assert rendered.exit_code == 0, rendered.stderr
