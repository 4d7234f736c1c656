"""``kubetrain``: render, validate, diff, plan, convert, schema, init and explain, over
:mod:`kubetrain.app`.

Exit codes: 0 success, 1 validation failure or drift, 2 bad input or usage. Errors are printed
as ``FILE:LINE: path.to.field: message``, never as a traceback; warnings as
``FILE:LINE: path.to.field: warning: message``, on stderr.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from functools import wraps
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn, TypeVar, cast

import click

from . import app
from .kube.schemas import parse_version
from .models import CheckFailed, InputError, declarations
from .models.errors import printable
from .models.source import display_path
from .plan import format_kubectl, format_text, to_json
from .validate import DEFAULT_VERSION, format_report

if TYPE_CHECKING:  # imported where used: only kubetrain convert needs them
    from .convert.run import Mode as ConvertMode

__all__ = ["main", "run", "tune_gc"]

F = TypeVar("F", bound=Callable[..., Any])
EXIT_FAILED, EXIT_INPUT, EXIT_INTERRUPTED = 1, 2, 130


def _echo(text: str, *, err: bool = False, nl: bool = True) -> None:
    """``click.echo`` to stdout or stderr, which may be closed (``kubetrain validate | head``,
    ``2>&-``): the output is then dropped, and the exit code stays the command's own."""
    try:
        click.echo(text, err=err, nl=nl)
    except OSError:  # EPIPE, EBADF: nobody reads; later writes (and the flush at exit) go nowhere
        stream = sys.stderr if err else sys.stdout
        try:
            fd = stream.fileno()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, fd)
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass


#: Bytes of the stream written at once by :func:`_write_documents`.
_STREAM_CHUNK = 1 << 20


def _write_documents(documents: list[str]) -> None:
    """``render --stdout``'s stream: each document after a ``---`` line, in UTF-8, written a
    megabyte at a time and let go as written (the stream of 60,000 objects, some 100 MB, is
    never joined into one string nor encoded as a whole). A closed stdout drops the rest, as
    :func:`_echo` does."""
    pending: list[bytes] = []
    size = 0
    try:
        sys.stdout.flush()
        out = sys.stdout.buffer
        for i, text in enumerate(documents):
            data = text.encode()
            documents[i] = ""
            pending += (b"---\n", data)
            size += len(data) + 4
            if size >= _STREAM_CHUNK:
                out.write(b"".join(pending))
                pending, size = [], 0
        out.write(b"".join(pending))
        out.flush()
    except OSError:  # EPIPE, EBADF: nobody reads; the rest (and the flush at exit) goes nowhere
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, out.fileno())
            os.close(devnull)


def _errors_to_exit_codes(fn: F) -> F:
    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except InputError as exc:
            for problem in exc.problems:
                _echo(str(problem), err=True)
            sys.exit(EXIT_INPUT)
        except CheckFailed as exc:
            _echo(str(exc).rstrip("\n"), err=True)
            sys.exit(EXIT_FAILED)
        except OSError as exc:
            # A path the user gave that cannot be used (an --out under /proc, a read-only
            # folder): bad input, reported without a traceback. Every OS error kubetrain lets
            # through names its path; the fallback names the command.
            where = display_path(exc.filename) if exc.filename else "kubetrain"
            _echo(printable(f"{where}: {exc.strerror or exc}"), err=True)
            sys.exit(EXIT_INPUT)
        except MemoryError:
            # Inputs within every bound of docs/limits.md fit in about 1.1 GB; a process
            # allowed less (ulimit -v) stops here, having written nothing (as for any error).
            _echo(
                "kubetrain: out of memory: the inputs need more memory than this process may "
                "use (docs/limits.md says what each input costs)",
                err=True,
            )
            sys.exit(EXIT_INPUT)
        except KeyboardInterrupt:
            # The writers stopped and their staging folders are gone (PendingTree): every
            # folder holds its old tree or its new one.
            _echo("kubetrain: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)

    return cast(F, wrapper)


def _version(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> tuple[int, int] | None:
    if value is None:
        return None
    parsed = parse_version(value)
    if isinstance(parsed, str):
        raise click.BadParameter(parsed)
    return parsed


class TerminalProgress:
    """One line of progress on a terminal (``building dev [#####.....] 1200/2000``): drawn only
    once a command has run for ``delay`` seconds, redrawn at most every ``interval`` seconds,
    and erased at the end, so short commands and their output look as without it."""

    WIDTH = 24

    def __init__(
        self,
        stream: IO[str],
        clock: Callable[[], float] = time.monotonic,
        delay: float = 0.5,
        interval: float = 0.1,
    ) -> None:
        self.stream = stream
        self.clock = clock
        self.delay = delay
        self.interval = interval
        self.started = clock()
        self.drawn_at: float | None = None
        self.what = ""
        self.total: int | None = None
        self.done = 0

    def phase(self, what: str, total: int | None = None) -> None:
        self.what, self.total, self.done = what, total, 0
        self._draw(force=True)

    def advance(self, n: int = 1) -> None:
        self.done += n
        self._draw()

    def _draw(self, force: bool = False) -> None:
        now = self.clock()
        if now - self.started < self.delay:
            return
        if not force and self.drawn_at is not None and now - self.drawn_at < self.interval:
            return
        self.drawn_at = now
        line = self.what
        if self.total:
            filled = min(self.WIDTH, self.WIDTH * self.done // self.total)
            line += f" [{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done}/{self.total}"
        self.stream.write(f"\r\x1b[K{line}")
        self.stream.flush()

    def close(self) -> None:
        if self.drawn_at is not None:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


@contextlib.contextmanager
def _progress() -> Iterator[app.Progress]:
    """A progress line on stderr when it is a terminal; nothing otherwise (CI logs, pipes)."""
    stream = sys.stderr
    if not stream.isatty() or os.environ.get("TERM") == "dumb":
        yield app.SILENT
        return
    progress = TerminalProgress(stream)
    try:
        yield progress
    finally:
        progress.close()


def _echo_warnings(warnings: list[str]) -> None:
    for line in warnings:
        _echo(line, err=True)


_STRICT_HELP = (
    "Treat warnings as errors: a field rewritten or not used exits 2 (bad input), a check's "
    "warning exits 1 (validation failure)."
)

EXIT_CODES = """\b
Exit codes:
  0  success
  1  validation failure or drift
  2  bad input or usage (FILE:LINE: path: message)"""


def _main_help() -> str:
    """The top-level help: what kubetrain does, the accepted kinds (from their declarations)
    and examples."""
    kinds = "\n".join(
        f"  {d.document.API_VERSION} {d.document.KIND}: {d.summary}" for d in declarations()
    )
    return (
        "Infrastructure as code for distributed training on Kubernetes.\n\n"
        "Expands the job documents of stacks/Pulumi.<env>.yaml into the Kubernetes objects their "
        "operators would create, or into their custom resources. Accepted kinds:\n\n\b\n"
        f"{kinds}\n\n"
        "\b\nExamples:\n"
        "  kubetrain init                 scaffold a project (Pulumi.yaml, a stack, a job)\n"
        "  kubetrain render               render every stack into rendered/<env>/\n"
        "  kubetrain diff                 exit 1 when rendered/ is not what the stacks render\n"
        "  kubetrain plan                 what applying the stacks would change, with totals\n"
        "  kubetrain convert --stack dev  v1 training-operator jobs as Trainer v2 TrainJobs\n"
        "  kubetrain validate             check rendered/ (schemas and semantic checks)\n"
        "  kubetrain explain tfjob.spec   field documentation, as kubectl explain"
    )


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    help=_main_help(),
    epilog=EXIT_CODES,
)
@click.version_option(package_name="kubetrain", prog_name="kubetrain")
def main() -> None:
    """The kubetrain command group (help text: :func:`_main_help`)."""


@main.command(
    short_help="Render stacks into rendered/<env>/, validated first.",
    epilog=EXIT_CODES,
)
@click.option(
    "--stack", "stacks", multiple=True, metavar="ENV", help="Render only this stack (repeatable)."
)
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Render one stack file (its name from Pulumi.<name>.yaml).",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Output folder (default rendered/<name>/).",
)
@click.option(
    "--stdout",
    "to_stdout",
    is_flag=True,
    help="Print every object as one multi-document YAML stream instead; nothing is written.",
)
@click.option("--strict", is_flag=True, help=_STRICT_HELP)
@_errors_to_exit_codes
def render(
    stacks: tuple[str, ...],
    config: Path | None,
    out: Path | None,
    to_stdout: bool,
    strict: bool,
) -> None:
    """Render stacks into rendered/<env>/: every object validated first, nothing written on
    any error. Warnings (a field rewritten or not used, a placement fact) go to stderr.

    \b
    Examples:
      kubetrain render                          every stacks/Pulumi.<env>.yaml
      kubetrain render --stack dev --strict     one stack; warnings fail it
      kubetrain render --stack dev --stdout | kubectl apply -f -
                                                namespaces, CRDs and what pods need come
                                                first; custom resources of CRDs in the
                                                stream need a second run once the CRDs
                                                are established (docs/lifecycle.md)
      kubetrain render --config other/Pulumi.ci.yaml --out /tmp/ci
    """
    project = app.Project.find(config.parent if config else None)
    warnings: list[str] = []
    if to_stdout:
        if out is not None:
            raise InputError.single("--stdout", "give either --stdout or --out, not both")
        with _progress() as progress:
            documents = app.render_stream_documents(
                project, stacks, config, strict=strict, warnings=warnings, progress=progress
            )
        _echo_warnings(warnings)
        _write_documents(documents)
        return
    with _progress() as progress:
        changes = app.render(
            project, stacks, config, out, strict=strict, warnings=warnings, progress=progress
        )
    _echo_warnings(warnings)
    for change in changes:
        summary = (
            "unchanged"
            if change.unchanged
            else f"{len(change.added)} added, {len(change.changed)} changed, "
            f"{len(change.removed)} removed"
        )
        _echo(printable(f"{display_path(change.folder)}: {summary}"))


def _kinds(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """Repeatable, and comma-separated as kubeconform takes them."""
    return tuple(k.strip() for value in values for k in value.split(",") if k.strip())


@main.command(
    short_help="Validate YAML files or folders (default: rendered/).",
    epilog=EXIT_CODES,
)
@click.argument("paths", nargs=-1)
@click.option(
    "--kubernetes-version",
    callback=_version,
    metavar="X.Y",
    help="Kubernetes version (default: each rendered file's header, else 1.33).",
)
@click.option(
    "--schema-location",
    "locations",
    multiple=True,
    metavar="LOC",
    help="Extra schema location, kubeconform template syntax (repeatable; tried first).",
)
@click.option(
    "--crd",
    "crds",
    multiple=True,
    metavar="FILE|DIR",
    help="CustomResourceDefinition manifests (files or folders) to check custom resources "
    "against, as the API server would; wins over built-in schemas (repeatable).",
)
@click.option(
    "--ignore-missing-schemas", is_flag=True, help="Skip kinds without a schema instead of failing."
)
@click.option(
    "--output",
    type=click.Choice(["text", "json", "junit"]),
    default="text",
    show_default=True,
    help="Report format.",
)
@click.option(
    "--engine",
    type=click.Choice(["builtin", "kubeconform"]),
    default="builtin",
    show_default=True,
    help="Schema validation by kubetrain itself, or by kubeconform (must be on PATH).",
)
@click.option(
    "--stack",
    metavar="ENV",
    help="Check every file with the settings of stacks/Pulumi.ENV.yaml "
    "(default: rendered/<env>/ uses <env>'s stack, other files the defaults).",
)
@click.option(
    "--skip-check",
    "skip_checks",
    multiple=True,
    metavar="RULE",
    help="Do not run this semantic rule (repeatable); rule ids: docs/validation.md.",
)
@click.option(
    "--skip-kind",
    "skip_kinds",
    multiple=True,
    metavar="KIND",
    callback=_kinds,
    help="Skip objects of this kind, or apiVersion/kind (repeatable or comma-separated; "
    "kubeconform's -skip).",
)
@click.option(
    "--reject-kind",
    "reject_kinds",
    multiple=True,
    metavar="KIND",
    callback=_kinds,
    help="Refuse objects of this kind, or apiVersion/kind (repeatable or comma-separated; "
    "kubeconform's -reject).",
)
@click.option("--strict", is_flag=True, help="Treat warnings (host-port) as failures (exit 1).")
@_errors_to_exit_codes
def validate(
    paths: tuple[str, ...],
    kubernetes_version: tuple[int, int] | None,
    locations: tuple[str, ...],
    crds: tuple[str, ...],
    ignore_missing_schemas: bool,
    output: str,
    engine: str,
    stack: str | None,
    skip_checks: tuple[str, ...],
    skip_kinds: tuple[str, ...],
    reject_kinds: tuple[str, ...],
    strict: bool,
) -> None:
    """Validate YAML files or folders (default: rendered/; - reads standard input) against
    strict schemas and the semantic checks schemas cannot make. Warnings are reported but
    fail only with --strict.

    \b
    Examples:
      kubetrain validate                         rendered/, each env with its stack's settings
      kubetrain validate rendered/dev --output junit > report.xml
      kubectl kustomize rendered/dev | kubetrain validate -
      kubetrain validate manifests/ --skip-kind CustomResourceDefinition --reject-kind Secret
    """
    project = app.Project.find()
    if not paths:
        paths = (str(project.rendered_dir),)
    with _progress() as progress:
        report = app.validate_paths(
            paths,
            version=kubernetes_version,
            schema_locations=locations,
            ignore_missing_schemas=ignore_missing_schemas,
            project=project,
            stack=stack,
            skip_checks=skip_checks,
            engine=engine,  # type: ignore[arg-type]
            crds=crds,
            skip_kinds=skip_kinds,
            reject_kinds=reject_kinds,
            strict=strict,
            progress=progress,
        )
    _echo(format_report(report, output), nl=False)  # type: ignore[arg-type]
    if not report.ok:
        sys.exit(EXIT_FAILED)


@main.command(
    short_help="Show how rendered/ differs from the stacks (exit 1 on any difference).",
    epilog=EXIT_CODES,
)
@click.option(
    "--stack", "stacks", multiple=True, metavar="ENV", help="Compare only this stack (repeatable)."
)
@click.option(
    "--stat", is_flag=True, help="One line per changed file and a summary, as git diff --stat."
)
@click.option(
    "--full",
    is_flag=True,
    help="Show every line of the files of a deleted stack (default: one line per file).",
)
@_errors_to_exit_codes
def diff(stacks: tuple[str, ...], stat: bool, full: bool) -> None:
    """Show how rendered/ differs from what the stacks produce now, as a unified diff, and a
    summary line on stderr; exit 1 on any difference (the CI drift gate).

    \b
    Examples:
      kubetrain diff                 every stack, and the output of deleted stacks
      kubetrain diff --stack prod --stat
    """
    warnings: list[str] = []
    with _progress() as progress:
        drift = app.diff(
            app.Project.find(), stacks, full=full, progress=progress, warnings=warnings
        )
    _echo_warnings(warnings)
    if drift:
        _echo(drift.stat() if stat else drift.text, nl=False)
        if not stat:
            _echo(drift.summary, err=True)
        sys.exit(EXIT_FAILED)


@main.command(
    short_help="Preview what the stacks would change: add, change, replace, delete; totals.",
    epilog=EXIT_CODES,
)
@click.option(
    "--stack", "stacks", multiple=True, metavar="ENV", help="Plan only this stack (repeatable)."
)
@click.option(
    "--output",
    type=click.Choice(["text", "json", "kubectl"]),
    default="text",
    show_default=True,
    help="Report format; kubectl: the kubectl delete commands to run before kubectl apply.",
)
@_errors_to_exit_codes
def plan(stacks: tuple[str, ...], output: str) -> None:
    """Preview what applying the stacks now would change against rendered/, per environment:
    the objects to add, change in place, replace (naming the immutable field that forces it)
    and delete, the jobs whose runs restart, and pods, CPU, memory and GPUs before and after,
    per namespace and per job. Nothing is written; exits 0 (diff is the drift gate).

    \b
    Examples:
      kubetrain plan                          every stack, and deleted stacks' output
      kubetrain plan --stack prod --output json
      kubetrain plan --stack dev --output kubectl | sh    before applying with kubectl
    """
    with _progress() as progress:
        plans = app.plan(app.Project.find(), stacks, progress)
    if output == "json":
        _echo(json.dumps(to_json(plans), indent=2, sort_keys=True))
    elif output == "kubectl":
        _echo(format_kubectl(plans), nl=False)
    else:
        _echo(format_text(plans), nl=False)


@main.command(
    short_help="Convert v1 training-operator jobs into Kubeflow Trainer v2 TrainJobs.",
    epilog=EXIT_CODES,
)
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--stack",
    metavar="ENV",
    help="Convert the jobs of stacks/Pulumi.ENV.yaml (those of FILES among them), with its "
    "settings and its patches.",
)
@click.option("--job", "jobs", multiple=True, metavar="NAME", help="Only this job (repeatable).")
@click.option("--stdout", "to_stdout", is_flag=True, help="Print the files instead of writing.")
@click.option(
    "--in-place",
    is_flag=True,
    help="Replace each job file by its TrainJobs (every document of it must convert).",
)
@click.option(
    "--compare",
    is_flag=True,
    help="Show what the pods get before and after, per replica; nothing is written.",
)
@click.option(
    "--skip-refused",
    is_flag=True,
    help="Convert the other jobs when some are refused (each refusal becomes a warning).",
)
@click.option(
    "--output",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Report format.",
)
@_errors_to_exit_codes
def convert(
    files: tuple[Path, ...],
    stack: str | None,
    jobs: tuple[str, ...],
    to_stdout: bool,
    in_place: bool,
    compare: bool,
    skip_refused: bool,
    output: str,
) -> None:
    """Convert PyTorchJobs, XGBoostJobs, JAXJobs, TFJobs of one replica (training operator
    v1.9) and MPIJobs (MPI Operator v2beta1, OpenMPI) into TrainJobs of Kubeflow Trainer
    v2.3.0, on Kubeflow's runtime when it matches, else on a TrainingRuntime written beside
    them; the stack's patches that target them are converted too. Files are written beside
    their sources, never over a file (FILE.trainjob.yaml, runtimes/JOB.yaml); the stack file is
    not edited: what to change in it is printed. A job that cannot be converted is refused
    with the reason (exit 2, nothing written).

    \b
    Examples:
      kubetrain convert --stack dev --job pytorch-simple --compare
      kubetrain convert --stack dev --job pytorch-simple
      kubetrain convert stacks/jobs/bert.yaml --in-place
      kubetrain convert --stack dev --compare --output json --skip-refused
    """
    chosen = [
        name
        for name, on in (("--stdout", to_stdout), ("--in-place", in_place), ("--compare", compare))
        if on
    ]
    if len(chosen) > 1:
        raise InputError.single(chosen[1], "give one of --stdout, --in-place, --compare")
    mode: ConvertMode = (
        "stdout" if to_stdout else "in-place" if in_place else "compare" if compare else "write"
    )
    project = app.Project.find()
    result = app.convert(project, files, stack, jobs, mode=mode, skip_refused=skip_refused)
    refusals = [dataclasses.replace(p, severity="warning") for p in result.problems]
    if output == "json":
        from .convert.run import convert_json

        _echo(json.dumps(convert_json(result, mode), indent=2, sort_keys=True))
        return
    # The comparison shows the notes itself; refusals skipped are warnings.
    _echo_warnings([str(w) for w in [*refusals, *([] if compare else result.warnings)]])
    if mode == "compare":
        from .convert.compare import format_comparison

        _echo(format_comparison(result.comparisons), nl=False)
        return
    if mode == "stdout":
        _echo("".join(f"---\n# {display_path(f.path)}\n{f.text}" for f in result.files), nl=False)
    else:
        for f in result.files:
            what = "replaced" if f.replaces else "written"
            _echo(printable(f"{display_path(f.path)}: {what}"))
    if result.edits:
        _echo("To deliver it, change the stack file:")
        for edit in result.edits:
            for line in edit.splitlines():
                _echo(printable(f"  {line}"))


@main.command(
    short_help="Write JSON schemas for editors and kubeconform.",
    epilog=EXIT_CODES,
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write (default: schemas/ in the project root).",
)
@click.option(
    "--kubernetes-version",
    callback=_version,
    metavar="X.Y",
    help="Kubernetes version of the embedded Kubernetes types (default 1.33).",
)
@_errors_to_exit_codes
def schema(out: Path | None, kubernetes_version: tuple[int, int] | None) -> None:
    """Write JSON schemas: the stack file's and a job document's (for editors), and one per CRD
    kubetrain defines, in kubeconform's layout (<group>/<kind>_<version>.json).

    \b
    Examples:
      kubetrain schema                               into schemas/
      kubetrain schema --out /tmp/s --kubernetes-version 1.31
    """
    version = kubernetes_version or DEFAULT_VERSION
    for path, changed in app.write_schemas(app.Project.find(), out, version):
        _echo(printable(f"{display_path(path)}: {'written' if changed else 'unchanged'}"))


@main.command(
    short_help="Scaffold a project: Pulumi.yaml, a stack file and a job.",
    epilog=EXIT_CODES,
)
@click.argument(
    "folder", required=False, type=click.Path(file_okay=False, path_type=Path), default="."
)
@click.option(
    "--stack", "stack", default="dev", show_default=True, metavar="ENV", help="Stack name."
)
@click.option(
    "--namespace", default=None, help="Namespace of the stack's jobs (a new project: ml)."
)
@click.option(
    "--from",
    "copy_of",
    metavar="ENV",
    help="In an existing project: the new stack is a copy of ENV's stack file.",
)
@_errors_to_exit_codes
def init(folder: Path, stack: str, namespace: str | None, copy_of: str | None) -> None:
    """Create a kubetrain project in FOLDER (default: here) that runs end to end: Pulumi.yaml
    and its program, requirements.txt pinning this kubetrain, stacks/Pulumi.ENV.yaml with a TFJob
    in stacks/jobs/, editor schemas, the CI workflow, pre-commit hooks and a .gitignore. Refuses
    to overwrite any file, and writes all of them or none.

    In an existing project (FOLDER has a Pulumi.yaml), adds environment ENV: its stack file
    only, a new one reading the project's job files, or with --from a copy of another
    environment's (change what differs with kubetrain:patches, docs/stack-file.md).

    \b
    Examples:
      kubetrain init && kubetrain render
      kubetrain init ml-platform --stack staging --namespace ml-staging
      kubetrain init --stack prod --from dev --namespace ml-prod   (a new environment)
    """
    project = app.Project(folder.resolve())
    if project.pulumi_yaml is not None:
        added = app.add_stack(project, stack, namespace, copy_of)
        _echo(printable(f"{display_path(added)}: written"))
        _echo(printable(f"next: kubetrain render --stack {stack}, then commit rendered/{stack}"))
        return
    if copy_of is not None:
        raise InputError.single("--from", f"{display_path(folder)} has no project to copy from")
    for path in app.init_project(folder, stack, namespace or "ml"):
        _echo(printable(f"{display_path(path)}: written"))
    requirement = app.kubetrain_requirement()
    if "file:" in requirement:
        # An install from a local folder: CI elsewhere cannot install it (docs/releasing.md).
        click.echo(
            printable(
                f"note: requirements.txt installs kubetrain from this machine ({requirement}); "
                "before CI runs it, pin a release or a git URL (see docs/releasing.md)"
            ),
            err=True,
        )


@main.command(
    short_help="Show the fields of a kind, as kubectl explain.",
    epilog=EXIT_CODES,
)
@click.argument("target", metavar="KIND[.FIELD.PATH]")
@click.option(
    "--api-version",
    metavar="GROUP/VERSION",
    help="The kind's apiVersion when it has several (default: the newest, e.g. kubeflow.org/v1).",
)
@click.option(
    "--kubernetes-version",
    callback=_version,
    metavar="X.Y",
    help="Kubernetes version of the built-in kinds and embedded types (default 1.33).",
)
@_errors_to_exit_codes
def explain(
    target: str, api_version: str | None, kubernetes_version: tuple[int, int] | None
) -> None:
    """Print the documentation of a job kind, a Kubernetes kind for kubetrain:manifests, or one
    of their fields, from the models kubetrain validates with.

    \b
    Examples:
      kubetrain explain tfjob
      kubetrain explain tfjob.spec.tfReplicaSpecs.template.spec.containers
      kubetrain explain trainingjob.spec.trainer.min-instance
      kubetrain explain tfjob.spec --api-version kubeflow.org/v1alpha1
      kubetrain explain configmap.data
    """
    _echo(app.explain(target, api_version, kubernetes_version or DEFAULT_VERSION), nl=False)


def tune_gc() -> None:
    """Render and validate make hundreds of thousands of small objects and no cycles worth
    collecting: at the default thresholds the cyclic garbage collector runs thousands of times
    for nothing (a sixth of validate's time), so it runs rarely (once per million objects
    made and kept: not at all in a render of 1,000 jobs, where every collection was a pause of
    several milliseconds for nothing), and what was loaded at import is frozen out of its way
    (which also spares the pages of processes forked later, kubetrain.parallel)."""
    gc.freeze()
    gc.set_threshold(1_000_000, 20, 100)


def run(args: list[str] | None = None) -> NoReturn:
    """The ``kubetrain`` command (the console script): :func:`main` with :func:`tune_gc`, then
    the process ends at once with the command's exit code, its output flushed. The interpreter
    would otherwise free what the command leaves in memory (schema definitions, compiled
    validators, caches) object by object before it ends, which took a twentieth of a render or
    validate of 10,000 objects; kubetrain registers nothing to run at exit, and its files are
    all written and closed by then."""
    try:
        tune_gc()
        main(args)
        code: object = 0
    except SystemExit as exc:
        code = exc.code if exc.code is not None else 0
    except KeyboardInterrupt:  # before the command's own handler is reached (click's parsing)
        code = None
    # The command is over: a Ctrl-C now ends the process at once (exit 130), no traceback.
    with contextlib.suppress(ValueError, OSError):
        signal.signal(signal.SIGINT, lambda *_: os._exit(EXIT_INTERRUPTED))
    if code is None:
        _echo("kubetrain: interrupted", err=True)
        code = EXIT_INTERRUPTED
    if code is not None and not isinstance(code, int):  # as sys.exit("message") does
        _echo(str(code), err=True)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # nobody reads (see _echo): dropped
            stream.flush()
    os._exit(code or 0)


if __name__ == "__main__":
    run()
