"""Argo CD's ApplicationSet list generator, as far as kubetrain's ApplicationSets use it: the
template expanded once per element with ``goTemplate`` and ``missingkey=error`` (argo-cd v3.6.1
``applicationset/utils`` ``Render.RenderTemplateParams``). No ApplicationSet controller runs in
the tests or in ``make e2e`` (it is a controller of its own beside the sync engine); the tests
of the fleet (tests/test_clusters.py) and the e2e tier (e2e/test_fleet.py, which syncs each
Application this makes with Argo CD's engine) expand it here."""

from __future__ import annotations

from typing import Any


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
