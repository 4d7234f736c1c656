"""What kubetrain knows of Kubernetes itself, independent of its job kinds: API versions and the
JSON schemas of built-in kinds (:mod:`.schemas`), naming rules (:mod:`.names`) and resource
quantities (:mod:`.quantity`). The lowest layer: it imports nothing else of kubetrain's, and every
other layer may use it. Code here that mirrors kube-apiserver names the upstream function it
follows.
"""
