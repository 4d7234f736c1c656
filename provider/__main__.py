"""kubetrain's components as a Pulumi package (a source-based component provider).

Pulumi starts this plugin when a program in any language uses ``kubetrain:index:TFJob`` (and
the other components of :data:`components.ALL_COMPONENTS`). The schema other languages see is
inferred from the components' argument TypedDicts, their field docstrings included.
"""

from pulumi.provider.experimental import component_provider_host

import kubetrain
from components import ALL_COMPONENTS

#: The package name: the first part of every type token (kubetrain:index:TFJob).
PACKAGE = "kubetrain"

if __name__ == "__main__":
    component_provider_host(
        components=list(ALL_COMPONENTS), name=PACKAGE, version=kubetrain.__version__
    )
