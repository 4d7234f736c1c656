"""kubetrain's components as a Pulumi package (a source-based component provider).

Pulumi starts this plugin when a program in any language uses ``kubetrain:index:TFJob`` (and
the other components of :data:`components.ALL_COMPONENTS`). The schema other languages see is
inferred from the components' argument TypedDicts, their field docstrings included.
"""

import re

from pulumi.provider.experimental import component_provider_host

import kubetrain
from components import ALL_COMPONENTS

#: The package name: the first part of every type token (kubetrain:index:TFJob).
PACKAGE = "kubetrain"


def semver(version: str) -> str:
    """kubetrain's version (PEP 440, from its git tag: ``0.2.0``, or between tags
    ``0.2.1.dev3+g1a2b3c``) as the semantic version Pulumi packages carry
    (``0.2.1-dev.3+g1a2b3c``)."""
    return re.sub(r"\.dev(\d+)", r"-dev.\1", version)


if __name__ == "__main__":
    component_provider_host(
        components=list(ALL_COMPONENTS), name=PACKAGE, version=semver(kubetrain.__version__)
    )
