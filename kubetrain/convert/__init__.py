"""``kubetrain convert``: v1 training-operator and MPI Operator jobs as Kubeflow Trainer v2.3.0
TrainJobs, the stack's patches converted with them, and a comparison of what the pods get
before and after (:mod:`.compare`)."""

from .trainjob import CONVERTIBLE_KINDS, Conversion, Note, Pair, Refused, convert_job, is_v1_job

__all__ = [
    "CONVERTIBLE_KINDS",
    "Conversion",
    "Note",
    "Pair",
    "Refused",
    "convert_job",
    "is_v1_job",
]
