"""The stack program's logic, importable and testable: one component per job of a loaded stack.

``stacks/__main__.py`` loads the stack from Pulumi config and calls :func:`deploy_stack`.
"""

from collections.abc import Collection, Mapping
from typing import Any, Protocol

import pulumi

from kubetrain.builders import build_stack
from kubetrain.builders.context import Target
from kubetrain.builders.gang import priority_classes
from kubetrain.models import InputError, JobDocument, LoadedJob, Problem, Stack, declarations

from . import (  # noqa: F401  (attach the components)
    jaxjob,
    learner,
    mpijob,
    paddlejob,
    pytorchjob,
    tfjob,
    trainingjob,
    trainjob,
    volcanojob,
    xgboostjob,
)
from ._job import job_args
from ._resources import Identity, identity, prerequisites_of, register
from ._secrets import Credentials, find_markers

__all__ = ["COMPONENTS", "JobComponent", "component_name", "component_urn", "deploy_stack"]


class JobComponent(Protocol):
    """What the program needs of a job component class."""

    def __init__(
        self,
        name: str,
        args: Any,
        opts: pulumi.ResourceOptions | None = None,
        *,
        exclude: Collection[Identity] = (),
        warn: bool = True,
    ) -> None: ...

    def exports(self) -> dict[str, Any]: ...


#: The component of each job kind, by the document class builders expand (a v1alpha1 TFJob is
#: expanded as a v1 TFJob), from the kinds' declarations (each component module attaches itself).
#: A kind without a component cannot be deployed with Pulumi.
COMPONENTS: Mapping[type[JobDocument], type[JobComponent]] = {
    d.document: d.component for d in declarations() if d.component is not None
}


def component_name(loaded: LoadedJob) -> str:
    """The Pulumi name of a job's component: ``<namespace>/<name>`` (the kind is in its type)."""
    return f"{loaded.document.namespace}/{loaded.document.name}"


def component_urn(loaded: LoadedJob) -> pulumi.Output[str]:
    """The URN of a job's component (a child of the stack)."""
    cls = COMPONENTS[type(loaded.job)]
    return pulumi.create_urn(component_name(loaded), f"kubetrain:index:{cls.__name__}")


def deploy_stack(stack: Stack) -> dict[str, JobComponent]:
    """Create the component of every job of ``stack``, by component name.

    Objects of the stack (the Namespaces it creates, and the objects jobs may share, such as a
    CRD or a pull Secret, however many jobs need them) are what ``kubetrain render`` writes once:
    they are registered once, as children of the stack, and every job's objects depend on them.
    They stay there when jobs come and go, so their URN never changes; each also answers to the
    URN it had under the component of a job that builds it (what kubetrain did before such
    objects always belonged to the stack). Nothing is registered unless every job has a
    component and every credential the jobs need is set.
    """
    missing = [job for job in stack.jobs if type(job.job) not in COMPONENTS]
    if missing:
        raise InputError(
            Problem(
                job.source.file,
                job.source.line,
                job.source.path,
                f"{job.title}: kind {job.document.KIND} has no Pulumi component yet "
                "(kubetrain render can still write it)",
            )
            for job in missing
        )
    warnings: list[Problem] = []
    built = build_stack(stack, Target.PULUMI, warnings=warnings)
    for warning in sorted(warnings):  # what `kubetrain render` prints on stderr
        pulumi.log.warn(str(warning))
    # Every credential of every job first: a missing one must stop the program before any job
    # is registered, not halfway through.
    Credentials(f"stack {stack.name}").check([m for b in built for m in find_markers(b.obj)])
    shared = {identity(b.obj): b for b in built if b.job is None}
    depends_on: list[pulumi.Resource] = []
    if shared:
        registered = register(
            None,
            [b.obj for b in shared.values()],
            where=f"stack {stack.name}",
            aliases={
                key: [pulumi.Alias(parent=component_urn(job)) for job in b.builders]
                for key, b in shared.items()
            },
        )
        depends_on = list(prerequisites_of(registered))
    # What the jobs' components leave to the stack: its own objects, and the CRDs another
    # environment installs (kubetrain:external.customResourceDefinitions).
    exclude = frozenset(shared) | {
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", name)
        for name in stack.settings.external.custom_resource_definitions
    }
    priorities = priority_classes(m.obj for m in stack.manifests)
    out: dict[str, JobComponent] = {}
    for loaded in stack.jobs:
        name = component_name(loaded)
        cls = COMPONENTS[type(loaded.job)]
        opts = pulumi.ResourceOptions(depends_on=depends_on) if depends_on else None
        # The stack's warnings are logged above, located in the stack file: not again here.
        out[name] = cls(
            name,
            job_args(loaded, stack.settings, stack.runtimes, priorities),
            opts,
            exclude=exclude,
            warn=False,
        )
    return out
