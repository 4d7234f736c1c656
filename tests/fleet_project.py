"""The fleet project the tests of ``kubetrain:clusters`` share (tests/test_clusters.py and the
e2e tier's e2e/test_fleet.py): a Kueue queue and Kubeflow's PyTorchJob queued to it, and Argo
CD's ApplicationSet list generator as far as kubetrain's ApplicationSets use it: the template
expanded once per element with ``goTemplate`` and ``missingkey=error`` (argo-cd v3.6.1
``applicationset/utils`` ``Render.RenderTemplateParams``). No ApplicationSet controller runs in
the tests or in ``make e2e`` (it is a controller of its own beside the sync engine); the e2e
tier syncs each Application this makes with Argo CD's engine."""

from __future__ import annotations

from typing import Any

QUEUE = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [cpu, memory, nvidia.com/gpu, amd.com/gpu]
      flavors:
        - name: default-flavor
          resources:
            - {name: cpu, nominalQuota: 16}
            - {name: memory, nominalQuota: 64Gi}
            - {name: nvidia.com/gpu, nominalQuota: 8}
            - {name: amd.com/gpu, nominalQuota: 8}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team}
spec: {clusterQueue: team}
"""
JOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: bert
  labels: {kueue.x-k8s.io/queue-name: team}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
            - name: pytorch
              image: registry.example.com/bert:1.0
              resources: {limits: {cpu: "2", memory: 4Gi, nvidia.com/gpu: 1}}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - name: pytorch
              image: registry.example.com/bert:1.0
              resources: {limits: {cpu: "2", memory: 4Gi, nvidia.com/gpu: 1}}
"""


def expand_template(template: Any, element: dict[str, str]) -> Any:
    """Argo CD's list generator with goTemplate and missingkey=error, for the only form
    kubetrain writes (``{{.key}}`` inside strings): an unknown key fails."""
    if isinstance(template, dict):
        return {k: expand_template(v, element) for k, v in template.items()}
    if isinstance(template, list):
        return [expand_template(v, element) for v in template]
    if isinstance(template, str) and "{{" in template:
        out = template
        for key, value in element.items():
            out = out.replace("{{." + key + "}}", value)
        assert "{{" not in out, f"missingkey=error: {template}"
        return out
    return template
