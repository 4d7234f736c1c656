"""Kubernetes' own numeric bounds: the integer formats of its API and the size of one object.

``int32`` and ``int64`` are the formats of Kubernetes' OpenAPI (``replicas``, ``parallelism``
and ports are ``int32``; ``activeDeadlineSeconds`` is ``int64``). An object is stored in etcd
whole, and etcd refuses requests over 1.5 MiB (its default ``--max-request-bytes``), so an
object that large can never be created, whatever kubetrain writes.
"""

from __future__ import annotations

__all__ = ["INT32_MAX", "INT64_MAX", "INT64_MIN", "MAX_OBJECT_BYTES", "MAX_QUANTITY"]

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
#: etcd's default request limit (``--max-request-bytes``, 1.5 MiB): no larger object is stored.
MAX_OBJECT_BYTES = 3 * 2**19
#: The largest magnitude of a quantity kubetrain reads: 2**63 - 1 units. Kubernetes caps a
#: binary quantity there (``maxAllowed`` in apimachinery v0.36.2 ``ParseQuantity``) and counts
#: every quantity in 64 bits (``Value``, ``MilliValue``: the scheduler's and Kueue's sums), so a
#: larger one (``1e5000``) is never a count anything in a cluster can use.
MAX_QUANTITY = 2**63 - 1
