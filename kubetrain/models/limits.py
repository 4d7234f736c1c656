"""kubetrain's own bounds on what it reads and what it writes (docs/limits.md explains each).

Every bound is checked at load time, before anything is built or written, and a value past it is
an input error naming the file, line and field. They keep a hostile or mistaken input from
costing unbounded time, memory or disk (a TFJob's ``TF_CONFIG`` lists every pod in every pod, so
its output grows with the square of its replicas).
"""

from __future__ import annotations

from ..kube.limits import INT32_MAX, INT64_MAX, INT64_MIN, MAX_OBJECT_BYTES

__all__ = [
    "INT32_MAX",
    "INT64_MAX",
    "INT64_MIN",
    "MAX_ALIAS_VALUES",
    "MAX_CLUSTERS",
    "MAX_DEPTH",
    "MAX_DOCUMENT_NODES",
    "MAX_FILE_BYTES",
    "MAX_FILE_NODES",
    "MAX_NODE_SELECTOR",
    "MAX_OBJECTS",
    "MAX_OBJECT_BYTES",
    "MAX_OUTPUT_BYTES",
    "MAX_PATCH_OPERATIONS",
    "MAX_REPLICAS",
]

#: Largest file kubetrain reads (stack files, job files, files given to ``validate``).
MAX_FILE_BYTES = 128 * 2**20
#: Nodes (scalars, mappings, lists) of one YAML document, and of one file: reading YAML costs
#: some 700 bytes of memory per node while a document is composed (a 6 MB list of 2,000,000
#: empty mappings took 1.5 GB), so these bound what any file within MAX_FILE_BYTES can cost,
#: checked before a document is composed. The largest upstream CRD has 18,000 nodes.
MAX_DOCUMENT_NODES = 1_000_000
MAX_FILE_NODES = 4_000_000
#: Deepest nesting of mappings and lists in one document (Kubernetes objects, CRDs included,
#: nest fewer than 40 levels).
MAX_DEPTH = 100
#: Values YAML aliases may add to a file beyond those written out (an "alias bomb" such as the
#: billion laughs adds 10**9 from a few lines).
MAX_ALIAS_VALUES = 1_000_000
#: Largest replica count of one replica type (TFJob), role (TrainingJob) or learner set: the
#: most pods kubetrain writes for one job kind's replica field.
MAX_REPLICAS = 10_000
#: Objects one stack may render (the benchmark's 5,000 jobs are 60,000).
MAX_OBJECTS = 200_000
#: Estimated bytes one stack may render (its files under rendered/<env>).
MAX_OUTPUT_BYTES = 512 * 2**20
#: Operations of one JSON patch, and the size one patched document may grow to (the size of an
#: object kubetrain writes): a chain of ``copy`` operations doubles a value each time.
MAX_PATCH_OPERATIONS = 10_000
#: Clusters one environment delivers to (``kubetrain:clusters``): each of a fleet renders the
#: whole stack again, so the output budget above counts every cluster's tree.
MAX_CLUSTERS = 50
#: Node labels one cluster's ``nodeSelector`` override adds to every pod template.
MAX_NODE_SELECTOR = 64
