"""kubetrain: infrastructure as code for distributed ML training on Kubernetes."""

from typing import Any


def __getattr__(name: str) -> Any:
    """``__version__``, read from the installed package's metadata when first asked for (not at
    import: :mod:`importlib.metadata` costs every command a tenth of its start-up)."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        #: The installed release: the git tag it was built from (setuptools-scm,
        #: pyproject.toml), ``<next>.devN+g<commit>`` between tags.
        found = version("kubetrain")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        found = "0.0.0"
    globals()["__version__"] = found
    return found
