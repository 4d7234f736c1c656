"""Running Pulumi code under mocks, isolated, and recording what reaches the engine.

The Pulumi CLI and engine are not available to the tests; the SDK's mock monitor stands in for
the engine. Mocks are process-global, so every run resets the runtime settings, installs fresh
mocks and config, and runs its program to completion (pytest-xdist runs tests of one worker one
after the other in one process; workers are separate processes).

The recording monitor keeps each ``RegisterResource`` request as the engine would see it:
parent URN, provider reference, ``protect``, ``retainOnDelete``, ``deleteBeforeReplace``,
``replaceOnChanges``, aliases, dependencies, transforms, and the inputs with secret values still
wrapped (``MockResourceArgs`` has no parent and no protect).
"""

from __future__ import annotations

import json
import runpy
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import yaml
from pulumi.runtime import mocks, rpc
from pulumi.runtime import settings as runtime_settings
from pulumi.runtime.stack import Stack, run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from components._secrets import MARKER

from conftest import REPO

PROJECT = "kubetrain"
PROGRAM = REPO / "stacks" / "__main__.py"


@dataclass(frozen=True)
class Registration:
    """One ``RegisterResource`` request."""

    type: str
    name: str
    urn: str
    parent: str
    custom: bool
    provider: str
    protect: bool
    dependencies: tuple[str, ...]
    transforms: tuple[Callable[..., Any], ...]
    #: Inputs as the engine receives them; secret values stay wrapped (see :func:`is_secret`).
    inputs: dict[str, Any]
    retain_on_delete: bool = False
    delete_before_replace: bool = False
    replace_on_changes: tuple[str, ...] = ()
    #: Former identities: ``("urn", URN)`` or ``("spec", name, type, parent URN, no parent)``.
    aliases: tuple[tuple[Any, ...], ...] = ()

    @property
    def plain(self) -> dict[str, Any]:
        """The inputs with every secret unwrapped."""
        return unwrap(self.inputs)

    @property
    def is_kubernetes_object(self) -> bool:
        return self.custom and self.type.startswith("kubernetes:")


def is_secret(value: Any) -> bool:
    """Whether an input value reached the engine as a secret."""
    return rpc.is_rpc_secret(value)


def unwrap(value: Any) -> Any:
    if rpc.is_rpc_secret(value):
        return unwrap(rpc.unwrap_rpc_secret(value))
    if isinstance(value, dict):
        return {k: unwrap(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unwrap(v) for v in value]
    return value


def walk_plain(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every scalar outside secret wrappers, with its path."""
    if rpc.is_rpc_secret(value):
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from walk_plain(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from walk_plain(v, (*path, i))
    else:
        yield path, value


class _Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        # The state echoes the inputs, as a create would.
        return f"{args.name}-id", args.inputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], None]:
        raise AssertionError(f"unexpected provider function call {args.token}")


def _alias(alias: Any) -> tuple[Any, ...]:
    if alias.WhichOneof("alias") == "urn":
        return ("urn", alias.urn)
    spec = alias.spec
    return ("spec", spec.name, spec.type, spec.parentUrn, spec.noParent)


class _Monitor(mocks.MockMonitor):
    def __init__(self, mocks_: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks_)
        self.registrations: list[Registration] = []
        self.outputs: dict[str, Any] = {}

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        self.registrations.append(
            Registration(
                type=request.type,
                name=request.name,
                urn=response.urn,
                parent=request.parent,
                custom=request.custom,
                provider=request.provider,
                protect=request.protect,
                dependencies=tuple(request.dependencies),
                transforms=tuple(mocks._resolve_callbacks(request.transforms)),
                inputs=rpc.deserialize_properties(request.object),
                retain_on_delete=bool(request.retainOnDelete),
                delete_before_replace=bool(request.deleteBeforeReplace),
                replace_on_changes=tuple(request.replaceOnChanges),
                aliases=tuple(_alias(a) for a in request.aliases),
            )
        )
        return response

    def RegisterResourceOutputs(self, request: Any) -> Any:
        self.outputs[request.urn] = rpc.deserialize_properties(request.outputs)
        return super().RegisterResourceOutputs(request)


@dataclass
class Run:
    """What one program run registered, and the value its program returned (outputs resolved)."""

    registrations: list[Registration]
    outputs: dict[str, Any]
    result: Any = None
    by_urn: dict[str, Registration] = field(init=False)

    def __post_init__(self) -> None:
        self.by_urn = {r.urn: r for r in self.registrations}

    def of_type(self, type_: str) -> list[Registration]:
        return [r for r in self.registrations if r.type == type_]

    def one(self, type_: str, name: str) -> Registration:
        found = [r for r in self.registrations if r.type == type_ and r.name == name]
        assert len(found) == 1, f"expected one {type_} {name}, found {len(found)}"
        return found[0]

    def kubernetes_objects(self) -> list[Registration]:
        return [r for r in self.registrations if r.is_kubernetes_object]

    def parent_of(self, registration: Registration) -> Registration | None:
        return self.by_urn.get(registration.parent)

    def engine_urn(self, registration: Registration) -> str:
        """The URN the Pulumi engine gives ``registration``. (The mock monitor's differ: they
        name the root stack's type in its children's, which the engine leaves out.)"""
        parent = self.parent_of(registration)
        parent_urn = self.engine_urn(parent) if parent is not None else ""
        return engine_urn(
            _stack_of(registration.urn), parent_urn, registration.type, registration.name
        )

    def alias_urns(self, registration: Registration) -> list[str]:
        """The former URNs ``registration`` answers to, as the engine computes them."""
        out = []
        for alias in registration.aliases:
            if alias[0] == "urn":
                out.append(alias[1])
                continue
            _, name, type_, parent_urn, no_parent = alias
            if not parent_urn and not no_parent:
                parent = self.parent_of(registration)
                parent_urn = self.engine_urn(parent) if parent is not None else ""
            out.append(
                engine_urn(
                    _stack_of(registration.urn),
                    parent_urn,
                    type_ or registration.type,
                    name or registration.name,
                )
            )
        return out

    def ancestors(self, registration: Registration) -> list[Registration]:
        out = []
        current = self.parent_of(registration)
        while current is not None:
            out.append(current)
            current = self.parent_of(current)
        return out


def engine_urn(stack: str, parent_urn: str, type_: str, name: str) -> str:
    """A URN by the engine's rule (``resource.NewURN``): the parent's qualified type, unless the
    parent is the root stack, joined to the type with ``$``."""
    if parent_urn:
        parent_type = parent_urn.split("::")[2]
        if parent_type != "pulumi:pulumi:Stack":
            type_ = f"{parent_type}${type_}"
    return f"urn:pulumi:{stack}::{PROJECT}::{type_}::{name}"


def _stack_of(urn: str) -> str:
    return urn.split("::")[0].removeprefix("urn:pulumi:")


def run_pulumi(
    program: Callable[[], Any],
    *,
    stack: str = "test",
    config: Mapping[str, str] | None = None,
    secret_keys: Sequence[str] = (),
) -> Run:
    """Run ``program`` under fresh mocks with ``config`` (full keys, Pulumi's string values).

    Whatever ``program`` returns is resolved (outputs awaited) into ``Run.result``. When the
    program fails, the exception carries the partial run as ``pulumi_run``.
    """
    runtime_settings.reset_options(project=PROJECT, stack=stack, preview=False)
    fake = _Mocks()
    monitor = _Monitor(fake)
    pulumi.runtime.set_mocks(fake, project=PROJECT, stack=stack, preview=False, monitor=monitor)
    pulumi.runtime.set_all_config(dict(config or {}), list(secret_keys))
    runtime_settings.SETTINGS.rpc_manager.clear()
    runtime_settings.SETTINGS.outputs.clear()
    # set_mocks registered and finished a root stack already; run under a fresh one whose
    # outputs (pulumi.export) are registered when the program is done, as Pulumi does.
    runtime_settings.ROOT.set(None)
    box: dict[str, Any] = {}

    def body() -> None:
        stack_resource = Stack()
        try:
            box["result"] = _sync_await(pulumi.Output.from_input(program()).future())
        finally:
            stack_resource._finish()

    def finished() -> Run:
        # The root stack set_mocks made and the program's share one URN: keep the program's.
        last = {r.urn: r for r in monitor.registrations}
        registrations = [r for r in monitor.registrations if last[r.urn] is r]
        return Run(registrations, monitor.outputs, box.get("result"))

    try:
        _sync_await(run_pulumi_func(body))
    except Exception as exc:
        exc.pulumi_run = finished()  # type: ignore[attr-defined]  # what was registered anyway
        raise
    return finished()


def pulumi_config(config: Mapping[str, Any]) -> dict[str, str]:
    """A stack file's ``config`` block as the Pulumi CLI hands it to a program: strings as they
    are, everything else JSON-encoded."""
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}


def stack_file_config(path: Path) -> dict[str, str]:
    return pulumi_config(yaml.safe_load(path.read_text(encoding="utf-8")).get("config") or {})


def run_program(
    stack: str,
    config: Mapping[str, str],
    secret_keys: Sequence[str] = (),
    program: Path = PROGRAM,
) -> Run:
    """Run a Pulumi program (``stacks/__main__.py`` by default) as Pulumi does (``runpy`` with
    ``__name__ == "__main__"``, in a fresh module namespace; the caller sets the working
    directory)."""

    def run_it() -> None:
        runpy.run_path(str(program), run_name="__main__")

    return run_pulumi(
        run_it,
        stack=stack,
        config=config,
        secret_keys=secret_keys,
    )


def by_identity(regs: list[Registration]) -> dict[tuple[str, str, str], str]:
    """Registered Kubernetes objects by (kind, namespace, name), in :func:`same` form."""
    return {
        (
            r.plain["kind"],
            r.plain["metadata"].get("namespace", ""),
            r.plain["metadata"]["name"],
        ): same(r.plain)
        for r in regs
    }


def expected_identity(objs: list[dict[str, Any]]) -> dict[tuple[str, str, str], str]:
    """Manifests by (kind, namespace, name), in :func:`same` form."""
    return {
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): same(o)
        for o in objs
    }


def nothing_but_the_stack(exc: BaseException) -> bool:
    """Whether a failed run registered nothing besides the stack itself."""
    run = exc.pulumi_run  # type: ignore[attr-defined]
    return all(r.type == "pulumi:pulumi:Stack" for r in run.registrations)


def wire(value: Any) -> Any:
    """A value as a Pulumi SDK in another language sends it: every number a float."""
    return json.loads(json.dumps(value), parse_int=float)


def with_values(value: Any, creds: Mapping[str, Mapping[str, str]]) -> Any:
    """A Pulumi-mode manifest with each credential marker replaced by its value in ``creds``."""
    if isinstance(value, dict) and set(value) == {MARKER}:
        return creds[value[MARKER]["name"]][value[MARKER]["key"]]
    if isinstance(value, dict):
        return {k: with_values(v, creds) for k, v in value.items()}
    if isinstance(value, list):
        return [with_values(v, creds) for v in value]
    return value


def same(value: Any) -> str:
    """A strict comparison form: canonical JSON, integral floats as ints (every number crosses
    the wire as a float), so ``True`` and ``1`` or ``"1"`` and ``1`` stay different."""

    def norm(v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): norm(x) for k, x in v.items()}
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, float) and v.is_integer():
            return int(v)
        return v

    return json.dumps(norm(value), sort_keys=True)
