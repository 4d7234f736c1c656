"""kubetrain: infrastructure as code for distributed ML training on Kubernetes."""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

try:
    #: The installed release: the git tag it was built from (setuptools-scm, pyproject.toml),
    #: ``<next>.devN+g<commit>`` between tags.
    __version__ = _version("kubetrain")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0.0.0"
