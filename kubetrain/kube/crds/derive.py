"""Derive kubetrain's copy of the third-party CRDs' schemas from the real CRDs.

``python -m kubetrain.kube.crds.derive DIR`` reads every CustomResourceDefinition under ``DIR``
(the project's ``../shared/crds``: upstream files, each headed by a ``# source: ...`` comment
naming its repository, path and commit) and writes ``kubetrain/kube/crds/data/``:

- ``<group>/<plural>.json``: per CRD, what the API server's validation of its custom resources
  reads, and nothing else: the group, kind, plural, scope, the source comment, and per served
  version its ``openAPIV3Schema`` and ``subresources``. Descriptions are dropped (the server
  never reads them) and so are printer columns, conversion and selectable fields.
- ``shared.json``: subtrees of at least :data:`SHARED_MIN` bytes that occur more than once
  (a pod template in every replica spec of every Kubeflow CRD), stored once and referred to as
  ``{"$kubetrain:shared": "<digest>"}`` where they occur; :func:`~kubetrain.kube.crds.expand`
  puts them back.

The output is canonical (keys sorted, one-space indent), so deriving twice from the same CRDs
gives the same bytes: ``tests/test_derived_crds.py`` derives again from ``../shared/crds`` and
fails on any difference (drift), naming the file to regenerate.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

__all__ = ["SHARED_KEY", "SHARED_MIN", "derive", "derive_tree", "main", "write"]

#: The key of a reference to a shared subtree.
SHARED_KEY = "$kubetrain:shared"
#: Subtrees smaller than this (in compact JSON) are written where they occur.
SHARED_MIN = 1500
#: What each derived file says it is.
NOTE = (
    "Derived by kubetrain.kube.crds.derive from the CRD named in 'source'; do not edit: "
    "regenerate with python -m kubetrain.kube.crds.derive ../shared/crds"
)


#: Keys of a schema whose values are data, kept as they are.
_DATA = frozenset({"default", "enum", "required", "x-kubernetes-validations",
                   "x-kubernetes-list-map-keys"})  # fmt: skip


def _strip(value: Any, in_properties: bool = False) -> Any:
    """The schema without what validation never reads: ``description`` and ``example`` (a
    property named so is kept: under ``properties`` every key is a field name; defaults, enums
    and rules are data, kept whole)."""
    if isinstance(value, Mapping):
        return {
            str(k): v
            if k in _DATA and not in_properties
            else _strip(v, k == "properties" and not in_properties)
            for k, v in value.items()
            if in_properties or k not in ("description", "example")
        }
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _source(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("# source:"):
            return line.removeprefix("# source:").strip()
        if line and not line.startswith("#"):
            break
    return ""


def derive(crd: Mapping[str, Any], source: str) -> dict[str, Any]:
    """The derived form of one CRD (before shared subtrees are taken out)."""
    spec = crd["spec"]
    versions = []
    for version in spec.get("versions") or ():
        if not version.get("served", True):
            continue
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        entry: dict[str, Any] = {
            "name": version["name"],
            "storage": bool(version.get("storage")),
            "schema": _strip(schema) if schema else None,
        }
        if version.get("subresources"):
            entry["subresources"] = version["subresources"]
        versions.append(entry)
    return {
        "note": NOTE,
        "source": source,
        "group": spec["group"],
        "kind": spec["names"]["kind"],
        "plural": spec["names"]["plural"],
        "scope": spec["scope"],
        "versions": versions,
    }


def _crds(folder: Path) -> Iterator[tuple[Path, dict[str, Any], str]]:
    for file in sorted(folder.rglob("*.yaml")):
        text = file.read_text(encoding="utf-8")
        for doc in yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                yield file, doc, _source(text)


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _subtrees(value: Any, counts: Counter[str], sizes: dict[str, int]) -> None:
    if isinstance(value, dict):
        text = json.dumps(value, sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        counts[digest] += 1
        sizes[digest] = len(text)
        for item in value.values():
            _subtrees(item, counts, sizes)
    elif isinstance(value, list):
        for item in value:
            _subtrees(item, counts, sizes)


def _share(value: Any, counts: Counter[str], sizes: dict[str, int], table: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        digest = _digest(value)
        inner = {k: _share(v, counts, sizes, table) for k, v in value.items()}
        if counts[digest] > 1 and sizes[digest] >= SHARED_MIN:
            table[digest] = inner
            return {SHARED_KEY: digest}
        return inner
    if isinstance(value, list):
        return [_share(v, counts, sizes, table) for v in value]
    return value


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def derive_tree(folder: Path) -> dict[str, str]:
    """Relative path -> text of every file :func:`write` writes for the CRDs under ``folder``."""
    derived = {}
    for _, doc, source in _crds(folder):
        out = derive(doc, source)
        derived[f"{out['group']}/{out['plural']}.json"] = out
    counts: Counter[str] = Counter()
    sizes: dict[str, int] = {}
    for out in derived.values():
        for version in out["versions"]:
            _subtrees(version["schema"], counts, sizes)
    table: dict[str, Any] = {}
    files = {}
    for rel, out in sorted(derived.items()):
        for version in out["versions"]:
            version["schema"] = _share(version["schema"], counts, sizes, table)
        files[rel] = _dump(out)
    files["shared.json"] = _dump({"note": NOTE, "shared": table})
    return files


def write(folder: Path, out: Path) -> list[str]:
    """Derive from the CRDs under ``folder`` into ``out`` (removing files no CRD gives any
    more); the relative paths written."""
    files = derive_tree(folder)
    for old in sorted(out.rglob("*.json")) if out.is_dir() else []:
        if old.relative_to(out).as_posix() not in files:
            old.unlink()
    for rel, text in files.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return sorted(files)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not Path(args[0]).is_dir():
        print("usage: python -m kubetrain.kube.crds.derive CRD_FOLDER", file=sys.stderr)
        return 2
    written = write(Path(args[0]), Path(__file__).resolve().parent / "data")
    print(f"wrote {len(written)} files under kubetrain/kube/crds/data")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
