"""Everyday commands: render --stdout, validate - / --skip-kind / --reject-kind, diff --stat
and its summary, init, explain, help texts, and the progress line (terminals only)."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner

from kubetrain import cli
from kubetrain.render import diff as diff_module

from conftest import REPO

JOB = """\
config:
  kubetrain:namespace: ml
  kubetrain:jobs:
    - apiVersion: kubeflow.org/v1
      kind: TFJob
      metadata: {name: %s}
      spec:
        tfReplicaSpecs:
          Worker:
            replicas: %d
            template: {spec: {containers: [{name: tensorflow, image: "tf:2"}]}}
"""


def write(project: Path, name: str = "mnist", replicas: int = 2, env: str = "dev") -> None:
    (project / "stacks" / f"Pulumi.{env}.yaml").write_text(JOB % (name, replicas))


# --- render --stdout ---------------------------------------------------------------------------


def test_render_stdout_is_the_rendered_files_as_one_stream(repo_copy: Path, run) -> None:
    shutil.rmtree(repo_copy / "rendered")
    first = run("render", "--stdout", cwd=repo_copy)
    assert first.exit_code == 0, first.stderr
    assert not (repo_copy / "rendered").exists()  # nothing written
    assert run("render", "--stdout", cwd=repo_copy).stdout == first.stdout  # deterministic
    # The oracle: the files render writes (without kustomizations and GitOps objects).
    assert run("render", cwd=repo_copy).exit_code == 0
    files = sorted(
        p
        for env in ("dev", "prod", "staging")
        for p in (repo_copy / "rendered" / env).rglob("*.yaml")
        if p.name != "kustomization.yaml"
    )
    streamed = [doc for doc in yaml.safe_load_all(first.stdout) if doc is not None]
    assert len(streamed) == len(files) > 0
    on_disk = [yaml.safe_load(p.read_text()) for p in files]
    key = lambda o: (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"])  # noqa: E731
    assert sorted(streamed, key=key) == sorted(on_disk, key=key)


def test_render_stdout_applies_to_an_empty_cluster_in_order(repo_copy: Path, run) -> None:
    """kubectl applies a stream in its order: per stack, the Namespaces first, then the CRDs,
    then what admission checks (PriorityClasses, ServiceAccounts...), then the rest; the custom
    resources of a CRD in the stream need a second pass (see docs/lifecycle.md)."""
    out = run("render", "--stdout", "--stack", "dev", cwd=repo_copy)
    assert out.exit_code == 0, out.stderr
    kinds = [doc["kind"] for doc in yaml.safe_load_all(out.stdout) if doc is not None]
    first_other = next(
        i
        for i, k in enumerate(kinds)
        if k not in ("Namespace", "CustomResourceDefinition", "ServiceAccount", "PriorityClass")
    )
    assert kinds[0] == "Namespace" and "CustomResourceDefinition" in kinds[:first_other]
    assert "ServiceAccount" in kinds[:first_other]
    assert not {"Namespace", "CustomResourceDefinition", "ServiceAccount"} & set(
        kinds[first_other:]
    )
    last_namespace = max(i for i, k in enumerate(kinds) if k == "Namespace")
    assert last_namespace < kinds.index("CustomResourceDefinition") < kinds.index("ServiceAccount")


class _Sink(io.RawIOBase):
    """A stdout that counts what it is given and keeps none of it."""

    def __init__(self) -> None:
        self.written = 0
        self.digest = __import__("hashlib").sha256()

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:  # type: ignore[override]
        self.written += len(data)
        self.digest.update(data)
        return len(data)


def test_the_stream_is_written_in_pieces_never_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """``render --stdout`` writes each document after a ``---`` line, in UTF-8, a megabyte at a
    time: 40 MB of documents are written with a few megabytes more memory, not a joined copy
    and an encoded copy of the whole stream (at 60,000 objects, some 200 MB)."""
    import hashlib
    import tracemalloc

    documents = [
        f"# f{i}\nkind: ConfigMap\ndata: {{k: 'caf\u00e9 {'x' * 4000}'}}\n" for i in range(10_000)
    ]
    expected = hashlib.sha256("".join(f"---\n{d}" for d in documents).encode()).hexdigest()
    total = sum(len(d.encode()) + 4 for d in documents)
    sink = _Sink()
    monkeypatch.setattr("sys.stdout", io.TextIOWrapper(io.BufferedWriter(sink), encoding="ascii"))
    tracemalloc.start()
    try:
        cli._write_documents(documents)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sink.written == total > 40_000_000
    assert sink.digest.hexdigest() == expected  # UTF-8 whatever the text stream's encoding
    assert peak < 4 * cli._STREAM_CHUNK  # a chunk, its join and a document: not the stream


def test_a_closed_stdout_drops_the_stream(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``kubetrain render --stdout | head``: nobody reads the rest, no traceback, and what is
    written later goes nowhere."""
    import os

    read, write = os.pipe()
    os.close(read)
    stream = io.TextIOWrapper(io.BufferedWriter(io.FileIO(write, "w")))
    monkeypatch.setattr("sys.stdout", stream)
    cli._write_documents(["kind: A\n" * 300_000, "kind: B\n"])
    stream.write("after\n")
    stream.flush()  # to /dev/null, not EPIPE
    stream.close()


def test_render_stdout_refuses_out(project: Path, run) -> None:
    write(project)
    result = run("render", "--stdout", "--out", "x", cwd=project)
    assert result.exit_code == 2 and "either --stdout or --out" in result.stderr


# --- validate -, --skip-kind, --reject-kind ---------------------------------------------------

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: 'i:1'}]}\n"
BAD_CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nspec: {}\n"


def test_validate_reads_standard_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli.main, ["validate", "-"], input=POD + "---\n" + BAD_CM)
    assert result.exit_code == 1
    # The ConfigMap's spec, after the Pod: the line of the stream, not of the document.
    assert result.stdout.startswith("<stdin>:9: spec: unknown field 'spec' (schema)")
    assert "Summary: 2 objects: 1 valid, 1 invalid" in result.stdout


@pytest.mark.parametrize(
    ("options", "code", "summary"),
    [
        pytest.param([], 1, "1 valid, 1 invalid, 0 errors, 0 skipped", id="plain"),
        pytest.param(["--skip-kind", "ConfigMap"], 0, "1 valid, 0 invalid, 0 errors, 1 skipped", id="skip"),
        pytest.param(["--skip-kind", "v1/ConfigMap"], 0, "1 valid, 0 invalid, 0 errors, 1 skipped", id="skip-gvk"),
        pytest.param(["--skip-kind", "apps/v1/ConfigMap"], 1, "1 invalid", id="skip-other-group"),
        pytest.param(["--skip-kind", "ConfigMap,Pod"], 0, "0 valid, 0 invalid, 0 errors, 2 skipped", id="comma"),
        pytest.param(["--reject-kind", "Pod", "--skip-kind", "ConfigMap"], 1, "0 valid, 0 invalid, 1 errors, 1 skipped", id="reject"),
    ],
)  # fmt: skip
def test_skip_and_reject_kinds_as_kubeconform(
    tmp_path: Path, run, options: list[str], code: int, summary: str
) -> None:
    (tmp_path / "all.yaml").write_text(POD + "---\n" + BAD_CM)
    result = run("validate", "all.yaml", *options, cwd=tmp_path)
    assert result.exit_code == code, result.stdout
    assert summary in result.stdout
    if "--reject-kind" in options:
        assert "prohibited resource kind Pod (reject)" in result.stdout


# --- diff --------------------------------------------------------------------------------------


def test_diff_stat_and_summary(project: Path, run) -> None:
    write(project, replicas=2)
    assert run("render", cwd=project).exit_code == 0
    write(project, replicas=3)
    full = run("diff", cwd=project)
    assert full.exit_code == 1
    added = sum(
        1
        for line in full.stdout.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    )
    removed = sum(
        1
        for line in full.stdout.splitlines()
        if line.startswith("-") and not line.startswith("---")
    )
    changed = re.findall(r"^\+\+\+ b/(\S+)", full.stdout, re.M)
    assert len(changed) == 5  # kustomization, worker 2's pod and service, TF_CONFIG of 0 and 1
    assert full.stderr.strip() == (
        f"{len(changed)} files changed, {added} insertions(+), {removed} deletions(-)"
    )
    stat = run("diff", "--stat", cwd=project)
    assert stat.exit_code == 1
    lines = stat.stdout.splitlines()
    assert lines[-1].strip() == full.stderr.strip()
    assert [line.split("|")[0].strip() for line in lines[:-1]] == changed


def test_diff_of_a_huge_deleted_stack_is_bounded(
    project: Path, run, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project, env="one")
    write(project, name="other", env="two")
    assert run("render", cwd=project).exit_code == 0
    (project / "stacks" / "Pulumi.two.yaml").unlink()
    monkeypatch.setattr(diff_module, "SUMMARY_THRESHOLD", 10)
    result = run("diff", cwd=project)
    assert result.exit_code == 1
    files = sorted(p for p in (project / "rendered" / "two").rglob("*") if p.is_file())
    assert result.stdout.splitlines() == [
        f"deleted file {p.relative_to(project).as_posix()} "
        f"({len(p.read_text().splitlines())} lines)"
        for p in files
    ]
    full = run("diff", "--full", cwd=project)
    assert full.stdout.count("\n") > len(files) * 5 and "+++ /dev/null" in full.stdout


# --- init --------------------------------------------------------------------------------------


def test_init_scaffolds_a_project_that_renders(tmp_path: Path, run) -> None:
    result = run("init", "proj", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    folder = tmp_path / "proj"
    assert yaml.safe_load((folder / "Pulumi.yaml").read_text())["stackConfigDir"] == "stacks"
    assert (folder / "stacks" / "Pulumi.dev.yaml").is_file()
    # The stack's comment lists every job kind kubetrain accepts (from the kind registry).
    from kubetrain.models import job_kinds

    comment = (folder / "stacks" / "Pulumi.dev.yaml").read_text().split("# Job documents (")[1]
    assert comment.split(")")[0].split(", ") == sorted({kind for _, kind in job_kinds()})
    rendered = run("render", cwd=folder)
    assert rendered.exit_code == 0 and rendered.stderr == "", rendered.stderr
    assert (folder / "rendered" / "dev" / "ml" / "job-mnist-worker-1.yaml").is_file()
    assert run("validate", cwd=folder).exit_code == 0
    # Never overwrites: a second init changes nothing.
    before = (folder / "stacks" / "Pulumi.dev.yaml").read_text()
    again = run("init", "proj", cwd=tmp_path)
    assert again.exit_code == 2 and "never overwrites" in again.stderr
    assert (folder / "stacks" / "Pulumi.dev.yaml").read_text() == before


def test_init_refuses_bad_names(tmp_path: Path, run) -> None:
    result = run("init", "--namespace", "Not_A_Label", cwd=tmp_path)
    assert result.exit_code == 2 and "--namespace" in result.stderr
    assert not (tmp_path / "Pulumi.yaml").exists()


# --- explain -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(["tfjob"], ["GROUP:      kubeflow.org", "KIND:       TFJob", "VERSION:    v1", "  spec\t<TFJobSpec> -required-"], id="kind"),
        pytest.param(["TFJob.spec.tfReplicaSpecs"], ["FIELD: tfReplicaSpecs <map[string]TFReplicaSpec>", "  replicas\t<integer>"], id="map-of-models"),
        pytest.param(["tfjob.spec.tfReplicaSpecs.template.spec.containers"], ["FIELD: containers <[]Container>", "  image\t<string>"], id="into-kubernetes-types"),
        pytest.param(["tfjob.spec.tfReplicaSpecs.Worker.restartPolicy"], ["ENUM:", "    ExitCode"], id="enum-through-a-key"),
        pytest.param(["tfjob.spec", "--api-version", "kubeflow.org/v1alpha1"], ["VERSION:    v1alpha1", "  replicaSpecs\t<[]"], id="other-version"),
        pytest.param(["trainingjob.spec.trainer.min-instance"], ["FIELD: min-instance <integer>"], id="seed-keys"),
        pytest.param(["configmap.data"], ["KIND:       ConfigMap", "FIELD: data <map[string]string>"], id="built-in-kind"),
    ],
)  # fmt: skip
def test_explain(run, args: list[str], expected: list[str]) -> None:
    result = run("explain", *args)
    assert result.exit_code == 0, result.stderr
    for line in expected:
        assert line in result.stdout.splitlines() or any(
            out.startswith(line) for out in result.stdout.splitlines()
        ), line


def test_explain_uses_the_models_descriptions(run) -> None:
    from kubetrain.models.kubeflow import ReplicaSpec

    result = run("explain", "tfjob.spec.tfReplicaSpecs.replicas")
    description = ReplicaSpec.model_fields["replicas"].description
    # explain wraps the description at its width: compared word for word.
    assert description and " ".join(description.split()) in " ".join(result.stdout.split())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["tfjb"], "unknown kind 'tfjb'; did you mean 'TFJob'?", id="kind"),
        pytest.param(["tfjob.spec.tfReplicas"], "did you mean 'tfReplicaSpecs'?", id="field"),
        pytest.param(["tfjob", "--api-version", "v9"], "not v9", id="version"),
    ],
)
def test_explain_errors(run, args: list[str], message: str) -> None:
    result = run("explain", *args)
    assert result.exit_code == 2 and message in result.stderr


# --- help --------------------------------------------------------------------------------------

COMMANDS = sorted(cli.main.commands)


def test_top_help_is_never_truncated(run) -> None:
    result = run("--help")
    assert "..." not in result.stdout.replace("COMMAND [ARGS]...", "")
    for name in COMMANDS:
        assert re.search(rf"^  {name}\s+\S", result.stdout, re.M), name
    assert "Exit codes:" in result.stdout and "Examples:" in result.stdout


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_examples_and_exit_codes(run, name: str) -> None:
    result = run(name, "--help")
    assert result.exit_code == 0
    assert "Examples:" in result.stdout and "Exit codes:" in result.stdout
    assert "2  bad input or usage" in result.stdout
    assert "..." not in result.stdout.replace("[PATHS]...", "").replace("[FILES]...", "")


# --- progress ----------------------------------------------------------------------------------


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_on_a_terminal() -> None:
    now = [0.0]
    stream = Tty()
    progress = cli.TerminalProgress(stream, clock=lambda: now[0], delay=0.5, interval=0.1)
    progress.phase("building dev", 4)
    progress.advance()
    assert stream.getvalue() == ""  # quick commands show nothing
    now[0] = 1.0
    progress.advance()
    assert stream.getvalue().endswith("building dev [############............] 2/4")
    progress.advance()  # redrawn at most every 0.1 s
    assert stream.getvalue().endswith("2/4")
    now[0] = 1.2
    progress.phase("writing")
    assert stream.getvalue().endswith("\r\x1b[Kwriting")
    progress.close()
    assert stream.getvalue().endswith("\r\x1b[K")  # erased


def test_no_progress_when_stderr_is_not_a_terminal(project: Path, run) -> None:
    write(project)
    result = run("render", cwd=project)
    assert result.exit_code == 0 and result.stderr == ""
    with cli._progress() as progress:  # CliRunner-free: pytest's stderr is no terminal either
        assert not isinstance(progress, cli.TerminalProgress)


def test_progress_is_shown_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = Tty()
    monkeypatch.setattr("sys.stderr", stream)
    monkeypatch.delenv("TERM", raising=False)
    with cli._progress() as progress:
        assert isinstance(progress, cli.TerminalProgress)
        progress.delay = 0
        progress.phase("checking dev", 1)
    assert "checking dev" in stream.getvalue() and stream.getvalue().endswith("\r\x1b[K")


def test_the_cli_docstring_lists_the_exit_codes() -> None:
    assert cli.EXIT_CODES.split("\n")[1:] == [
        "Exit codes:",
        "  0  success",
        "  1  validation failure or drift",
        "  2  bad input or usage (FILE:LINE: path: message)",
    ]
    assert isinstance(cli.main, click.Group)
    assert REPO.is_dir()


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (
            "tfjob.spec.tfReplicaSpecs.Wroker.replicas",
            "TFJob.spec.tfReplicaSpecs has no key 'Wroker'; did you mean 'Worker'?",
        ),
        (
            "pytorchjob.spec.pytorchReplicaSpecs.worker",
            "PyTorchJob.spec.pytorchReplicaSpecs has no key 'worker'",
        ),
        (
            "kubetrain:namespac",
            "unknown stack-file key 'kubetrain:namespac'; did you mean 'kubetrain:namespace'?",
        ),
        (
            "kubetrain:gitops.argocd.retyr",
            "kubetrain:gitops.argocd has no field 'retyr'; did you mean 'retry'?",
        ),
    ],
    ids=["replica-type-typo", "webhook-spelling", "stack-key-typo", "stack-field-typo"],
)
def test_explain_says_what_a_typo_meant(target: str, expected: str, run) -> None:
    result = run("explain", target)
    assert result.exit_code == 2
    assert expected in result.stderr


def test_explain_covers_stack_file_keys(run) -> None:
    result = run("explain", "kubetrain:gitops.argocd.retry")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("STACK KEY:  kubetrain:gitops\n\nFIELD: retry <ArgoRetry>")
    assert "Retry failed syncs" in result.stdout and "FIELDS:" in result.stdout
    top = run("explain", "kubetrain:nativeWorkload")
    assert top.exit_code == 0 and "Native mode" in top.stdout and "    jobset" in top.stdout
