"""``kubetrain``: render, validate, diff, plan and schema, over :mod:`kubetrain.app`.

Exit codes: 0 success, 1 validation failure or drift, 2 bad input or usage. Errors are printed
as ``FILE:LINE: path.to.field: message``, never as a traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar, cast

import click

from . import __version__, app
from .kube.schemas import parse_version
from .models import CheckFailed, InputError, declarations
from .models.source import display_path
from .plan import format_text, to_json
from .validate import DEFAULT_VERSION, format_report

__all__ = ["main"]

F = TypeVar("F", bound=Callable[..., Any])
EXIT_FAILED, EXIT_INPUT = 1, 2


def _errors_to_exit_codes(fn: F) -> F:
    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except InputError as exc:
            for problem in exc.problems:
                click.echo(str(problem), err=True)
            sys.exit(EXIT_INPUT)
        except CheckFailed as exc:
            click.echo(str(exc).rstrip("\n"), err=True)
            sys.exit(EXIT_FAILED)
        except OSError as exc:
            # A path the user gave that cannot be used (an --out under /proc, a read-only
            # folder): bad input, reported without a traceback.
            where = display_path(exc.filename) if exc.filename else "kubetrain"
            click.echo(f"{where}: {exc.strerror or exc}", err=True)
            sys.exit(EXIT_INPUT)

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


def _main_help() -> str:
    """The top-level help: what kubetrain does and the accepted kinds, from their declarations."""
    kinds = "\n".join(
        f"  {d.document.API_VERSION} {d.document.KIND}: {d.summary}" for d in declarations()
    )
    return (
        "Infrastructure as code for distributed training on Kubernetes.\n\n"
        "Expands the job documents of stacks/Pulumi.<env>.yaml into the Kubernetes objects their "
        "operators would create, or into their custom resources. Accepted kinds:\n\n\b\n"
        f"{kinds}"
    )


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, help=_main_help())
@click.version_option(__version__, prog_name="kubetrain")
def main() -> None:
    """The kubetrain command group (help text: :func:`_main_help`)."""


@main.command()
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
@_errors_to_exit_codes
def render(stacks: tuple[str, ...], config: Path | None, out: Path | None) -> None:
    """Render stacks into rendered/<env>/ (validated first; nothing written on any error)."""
    project = app.Project.find(config.parent if config else None)
    for change in app.render(project, stacks, config, out):
        summary = (
            "unchanged"
            if change.unchanged
            else f"{len(change.added)} added, {len(change.changed)} changed, "
            f"{len(change.removed)} removed"
        )
        click.echo(f"{display_path(change.folder)}: {summary}")


@main.command()
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
) -> None:
    """Validate YAML files or folders (default: rendered/) against strict schemas and the
    semantic checks schemas cannot make."""
    project = app.Project.find()
    if not paths:
        paths = (str(project.rendered_dir),)
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
    )
    click.echo(format_report(report, output), nl=False)  # type: ignore[arg-type]
    if not report.ok:
        sys.exit(EXIT_FAILED)


@main.command()
@click.option(
    "--stack", "stacks", multiple=True, metavar="ENV", help="Compare only this stack (repeatable)."
)
@_errors_to_exit_codes
def diff(stacks: tuple[str, ...]) -> None:
    """Show how rendered/ differs from what the stacks produce now (exit 1 on any difference)."""
    text = app.diff(app.Project.find(), stacks)
    if text:
        click.echo(text, nl=False)
        sys.exit(EXIT_FAILED)


@main.command()
@click.option(
    "--stack", "stacks", multiple=True, metavar="ENV", help="Plan only this stack (repeatable)."
)
@click.option(
    "--output",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Report format.",
)
@_errors_to_exit_codes
def plan(stacks: tuple[str, ...], output: str) -> None:
    """Preview what applying the stacks now would change against rendered/, per environment:
    objects to add, change in place, replace (naming the immutable field) and delete, and pods,
    CPU, memory and GPUs before and after. Exits 0 (diff is the drift gate)."""
    plans = app.plan(app.Project.find(), stacks)
    if output == "json":
        click.echo(json.dumps(to_json(plans), indent=2, sort_keys=True))
    else:
        click.echo(format_text(plans), nl=False)


@main.command()
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
    kubetrain defines, in kubeconform's layout (<group>/<kind>_<version>.json)."""
    version = kubernetes_version or DEFAULT_VERSION
    for path, changed in app.write_schemas(app.Project.find(), out, version):
        click.echo(f"{display_path(path)}: {'written' if changed else 'unchanged'}")


if __name__ == "__main__":
    main()
