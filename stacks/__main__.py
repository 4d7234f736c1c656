"""The Pulumi program of the kubetrain project: ``pulumi up -s <env>`` deploys what
``kubetrain render --stack <env>`` writes (:func:`components.program.main`; Pulumi runs it from
``stacks/``, the ``main`` of Pulumi.yaml)."""

from pathlib import Path

from components.program import main

if __name__ == "__main__":
    main(Path(__file__).resolve().parent)
