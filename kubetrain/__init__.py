"""kubetrain: infrastructure as code for distributed ML training on Kubernetes."""

__version__ = "0.1.0"
