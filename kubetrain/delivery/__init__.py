"""Delivery: how objects reach a cluster, apart from what Kubernetes is (:mod:`kubetrain.kube`)
and from what a job is (:mod:`kubetrain.models`).

- :mod:`.engines`: what each delivery engine (Flux, Argo CD, Pulumi, kubectl) does with an
  edit of one object; imports only :mod:`kubetrain.kube`;
- :mod:`.gitops`: the models of the GitOps objects kubetrain emits (Flux's GitRepository and
  Kustomization, Argo CD's Application, ApplicationSet and AppProject), registered as resource
  kinds so ``validate`` checks them; built by :mod:`kubetrain.builders.delivery`.

Importing this package registers the GitOps kinds (``kubetrain.builders`` does).
"""

from . import gitops  # noqa: F401  (registers the GitOps resource kinds)
