"""Per-environment overrides: Kustomize-style patches applied to job documents (and plain
manifests) before they are validated and expanded.

One job document serves several stacks; each stack's ``kubetrain:patches`` changes what it needs,
in the two forms Kustomize's ``patches`` field accepts, told apart as Kustomize does (a list is
a JSON patch, a mapping a strategic merge patch):

- **strategic merge patch** (a partial document): mappings merge, ``null`` deletes a key, lists
  of Kubernetes types merge by their merge key (containers and env vars by ``name``), other
  lists are replaced; ``$patch: replace`` / ``$patch: delete`` as in Kubernetes. Its target is
  the document its own ``apiVersion``, ``kind`` and ``metadata`` name, unless ``target`` says.
- **JSON patch** (RFC 6902, a list of ``add``/``remove``/``replace``/``move``/``copy``/``test``
  operations), which needs a ``target``; applied with the ``jsonpatch`` library.

Deviation from Kustomize, on purpose: Kustomize knows no schema for a custom resource such as a
TFJob, so its strategic merge replaces the containers list of a TFJob's pod template whole;
kubetrain knows the Kubernetes types a job embeds and merges them as Kubernetes merges a
Deployment's (what a user patching ``containers`` by name expects). And a patch that matches no
document is an error here (Kustomize skips it silently), since it is a typo or a stale name.

Every problem points into the patch: a patch that targets nothing at its ``target``, a bad
operation at the operation, and a schema error in what the patch wrote at the patch's line for
that value (:class:`PatchedDocument`).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonpatch
import jsonpointer

from ..kube.regex import go_regex
from ..kube.schemas import split_api_version
from .base import plain_copy
from .errors import InputError, PathPart, Problem
from .fields import FieldNode, kind_node
from .limits import MAX_OBJECT_BYTES, MAX_PATCH_OPERATIONS
from .source import Document, load_documents, parse_documents, project_file
from .stack import CONFIG_NAMESPACE, Patch, PatchTarget

__all__ = ["PatchSource", "PatchedDocument", "apply_patches", "patch_sources", "targets"]

Path_ = tuple[PathPart, ...]
_DELETE = object()  # a strategic merge directive removed the value
_JSON_OPS = ("add", "remove", "replace", "move", "copy", "test")


@dataclass
class PatchedDocument(Document):
    """A document after patches: values a patch wrote are located in the patch.

    ``overlay`` maps a path of the patched document to the patch (as a document) and the path
    in it that wrote the value there; a problem at or below such a path is reported at the
    patch's file, line and field path, naming the document it patched.
    """

    overlay: dict[Path_, tuple[Document, Path_]] = field(default_factory=dict)
    title: str = ""

    def problem(self, path: Sequence[PathPart], message: str) -> Problem:
        written = self.as_written(path)
        for n in range(len(written), -1, -1):
            hit = self.overlay.get(written[:n])
            if hit is not None:
                site, at = hit
                return site.problem((*at, *written[n:]), f"{message} (patching {self.title})")
        return super().problem(written, message)


@dataclass(frozen=True)
class PatchSource:
    """One patch: its content as a document, where it was declared, what it targets, and
    whether it may add containers, volumes or replica types (``adds``)."""

    content: Document
    entry: Document  # the kubetrain:patches entry, for problems about the patch as a whole
    target: PatchTarget | None
    adds: bool = False

    @property
    def is_json_patch(self) -> bool:
        return isinstance(self.content.data, list)


# --- reading the patches ----------------------------------------------------------------------


def patch_sources(
    stack_doc: Document,
    patches: Sequence[Patch],
    root: Path,
    problems: list[Problem],
    at: Sequence[PathPart] = (),
) -> list[PatchSource]:
    """Every patch of ``kubetrain:patches`` (or of the list at ``at`` in the stack file: a
    cluster's ``patches``), inline or read from its file, in order."""
    out: list[PatchSource] = []
    where = tuple(at) or ("config", f"{CONFIG_NAMESPACE}:patches")
    for i, patch in enumerate(patches):
        entry = stack_doc.sub((*where, i))
        if patch.path is not None:
            # Inside the project, as jobFiles and manifestFiles are: never a file of another
            # project, an absolute path or a link out of it (its values would be echoed).
            file = project_file(stack_doc, (*where, i, "path"), patch.path, root)
            if isinstance(file, Problem):
                problems.append(file)
                continue
            try:
                docs = load_documents(file)
            except InputError as exc:
                problems.append(entry.problem(("path",), str(exc.problems[0])))
                continue
            out += [PatchSource(d, entry, patch.target, patch.adds) for d in docs]
        elif isinstance(patch.patch, str):
            try:
                docs = _inline_text(entry, patch.patch)
            except InputError as exc:
                problems += exc.problems
                continue
            out += [PatchSource(d, entry, patch.target, patch.adds) for d in docs]
        else:
            out.append(PatchSource(entry.sub(("patch",)), entry, patch.target, patch.adds))
    return out


def _inline_text(entry: Document, text: str) -> list[Document]:
    """A patch written as a YAML string (``patch: |``, as in kustomization.yaml): its
    documents, with lines counted in the stack file when it is a block scalar."""
    key_line = entry.line_of(("patch",)) or 0
    source = entry.source.text.splitlines() if entry.source is not None else []
    block = 0 < key_line <= len(source) and re.search(
        r":\s*[|>][-+0-9]*\s*(#.*)?$", source[key_line - 1]
    )
    prefix = (*entry.prefix, "patch")
    try:
        docs = parse_documents(text, entry.file)
    except InputError as exc:
        raise InputError(
            Problem(
                entry.file,
                key_line + (p.line or 0) if block and p.line else key_line or None,
                prefix,
                p.message,
            )
            for p in exc.problems
        ) from None
    out = []
    for doc in docs:
        lines = {path: (key_line + line if block else key_line) for path, line in doc.lines.items()}
        out.append(
            dataclasses.replace(Document.with_lines(entry.file, doc.data, lines), prefix=prefix)
        )
    return out


# --- matching ---------------------------------------------------------------------------------


def _identity(doc: Document, default_namespace: str) -> tuple[str, str, str, str, str] | None:
    """(group, version, kind, name, namespace) of a document, or ``None`` when it has none."""
    data = doc.data
    if not isinstance(data, dict):
        return None
    meta = data.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    api_version, kind, name = data.get("apiVersion"), data.get("kind"), meta.get("name")
    if not (isinstance(api_version, str) and isinstance(kind, str) and isinstance(name, str)):
        return None
    group, version = split_api_version(api_version)
    namespace = meta.get("namespace")
    return (
        group,
        version,
        kind,
        name,
        namespace if isinstance(namespace, str) else default_namespace,
    )


def _target_of(source: PatchSource, problems: list[Problem]) -> PatchTarget | None:
    """The explicit target, else (strategic merge) the document the patch names itself."""
    if source.target is not None:
        return source.target
    if source.is_json_patch:
        problems.append(
            source.entry.problem((), "a JSON patch needs a target (kind and name of the job)")
        )
        return None
    data = source.content.data
    meta = data.get("metadata") if isinstance(data, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    kind = data.get("kind") if isinstance(data, dict) else None
    if not isinstance(name, str) or not isinstance(kind, str):
        problems.append(
            source.content.problem(
                (),
                "a strategic merge patch without a target names the document it patches: "
                "give kind and metadata.name (and apiVersion), or a target",
            )
        )
        return None
    api_version = data.get("apiVersion")
    group, version = (
        split_api_version(api_version) if isinstance(api_version, str) else (None, None)
    )
    namespace = meta.get("namespace") if isinstance(meta, dict) else None
    return PatchTarget(
        group=re.escape(group) if group else group,
        version=re.escape(version) if version is not None else None,
        kind=re.escape(kind),
        name=re.escape(name),
        namespace=re.escape(namespace) if isinstance(namespace, str) else None,
    )


def _matches(target: PatchTarget, identity: tuple[str, str, str, str, str]) -> bool:
    """Kustomize's selector (kustomize/api v0.21.1, as Flux's kustomize-controller v1.9.4 and
    kubectl 1.36 vendor it: ``types.NewSelectorRegex`` and ``SelectorRegex.MatchGvk`` /
    ``MatchName`` / ``MatchNamespace``): every field given is an anchored Go regular
    expression the object's value must match, matched by RE2 in linear time. One deviation,
    documented: a group of ``''`` selects the core group, where Kustomize reads an empty
    field as "any"."""
    group, version, kind, name, namespace = identity
    if target.group == "" and group != "":
        return False
    return all(
        pattern is None or pattern == "" or go_regex(pattern).fullmatch(value)
        for pattern, value in (
            (target.group, group),
            (target.version, version),
            (target.kind, kind),
            (target.name, name),
            (target.namespace, namespace),
        )
    )


def targets(source: PatchSource, doc: Document, default_namespace: str) -> bool:
    """Whether the patch ``source`` applies to ``doc`` (its target, or the document a strategic
    merge patch names)."""
    target = _target_of(source, [])
    identity = _identity(doc, default_namespace)
    return target is not None and identity is not None and _matches(target, identity)


def _title(identity: tuple[str, str, str, str, str]) -> str:
    return f"{identity[2]} {identity[4]}/{identity[3]}"


# --- applying ---------------------------------------------------------------------------------


def apply_patches(
    docs: Sequence[Document],
    sources: Sequence[PatchSource],
    *,
    default_namespace: str,
    version: tuple[int, int],
    problems: list[Problem],
    complete: bool = True,
) -> list[Document]:
    """``docs`` with every patch applied, in order (documents no patch targets are returned
    as they are). A patch that targets nothing is a problem, unless the documents are not
    ``complete`` (a file could not be read, which may hold the target)."""
    out: list[Document] = list(docs)
    for source in sources:
        target = _target_of(source, problems)
        if target is None:
            continue
        hits = 0
        for n, doc in enumerate(out):
            identity = _identity(doc, default_namespace)
            if identity is None or not _matches(target, identity):
                continue
            hits += 1
            patched = _patched(doc, identity, version)
            before = len(problems)
            if source.is_json_patch:
                _json_patch(patched, source.content, problems, source.adds, version)
            else:
                _strategic(patched, source.content, version, problems, source.adds)
            if len(problems) == before:
                out[n] = patched
        if not hits and complete:
            problems.append(_no_match(source, target, out, default_namespace))
    return out


def _patched(
    doc: Document, identity: tuple[str, str, str, str, str], version: Any
) -> PatchedDocument:
    if isinstance(doc, PatchedDocument):
        return dataclasses.replace(doc, data=plain_copy(doc.data), overlay=dict(doc.overlay))
    fields = {f.name: getattr(doc, f.name) for f in dataclasses.fields(Document)}
    fields["data"] = plain_copy(doc.data)
    return PatchedDocument(**fields, title=_title(identity))


def _no_match(
    source: PatchSource, target: PatchTarget, docs: Sequence[Document], default_namespace: str
) -> Problem:
    known = sorted({_title(i) for d in docs if (i := _identity(d, default_namespace)) is not None})
    wanted = " ".join(f"{k}={v}" for k, v in target.model_dump(exclude_none=True).items())
    message = f"patch target ({wanted}) matches no job or manifest of this stack"
    names = sorted({t.rpartition("/")[2] for t in known})
    if target.name and (close := difflib.get_close_matches(target.name, names, n=1)):
        message += f"; did you mean name {close[0]!r}?"
    shown = ", ".join(known[:8]) + (f" and {len(known) - 8} more" if len(known) > 8 else "")
    message += f" (documents: {shown or 'none'})"
    where = ("target",) if source.target is not None else ()
    doc = source.entry if source.target is not None else source.content
    return doc.problem(where, message)


# --- strategic merge --------------------------------------------------------------------------


def _strategic(
    doc: PatchedDocument,
    patch: Document,
    version: tuple[int, int],
    problems: list[Problem],
    adds: bool = False,
) -> None:
    if not isinstance(patch.data, dict):
        problems.append(
            patch.problem((), "a patch is a mapping (strategic merge) or a list (JSON patch)")
        )
        return
    data = doc.data
    node = kind_node(str(data.get("apiVersion")), str(data.get("kind")), version)
    merged = _Merge(doc, patch, problems, adds).merge(data, patch.data, node, (), ())
    if merged is _DELETE:
        problems.append(patch.problem(("$patch",), "a patch cannot delete the whole document"))
        return
    doc.data = merged


@dataclass
class _Merge:
    """One strategic merge patch being applied to one document: where its values come from
    (``site``), the document recording them (``doc.overlay``), and the problems found."""

    doc: PatchedDocument
    site: Document
    problems: list[Problem]
    adds: bool = False

    def record(self, path: Path_, patch_path: Path_) -> None:
        self.doc.overlay[path] = (self.site, patch_path)

    def merge(
        self, original: Any, patch: Any, node: FieldNode | None, path: Path_, patch_path: Path_
    ) -> Any:
        """``patch`` merged into ``original`` as ``strategicpatch.mergeMap`` / ``mergeSlice``
        of k8s.io/apimachinery do (the directives ``$patch: replace|delete`` included;
        ``$retainKeys``, ``$setElementOrder`` and ``$deleteFromPrimitiveList`` are not
        supported)."""
        if isinstance(patch, dict):
            return self.merge_map(original, patch, node, path, patch_path)
        if isinstance(patch, list) and isinstance(original, list):
            merge_key = node.merge_key if node is not None else None
            if merge_key is not None and all(isinstance(item, dict) for item in patch):
                return self.merge_list(original, patch, merge_key, node, path, patch_path)
        new_items = isinstance(patch, list) and all(isinstance(item, dict) for item in patch)
        if original is None and new_items and path and path[-1] in ADDED_LISTS:
            # A list the document does not have: every item is new.
            return self.merge_list([], patch, "name", node, path, patch_path)
        self.record(path, patch_path)
        return _without_nulls(patch)

    def merge_map(
        self,
        original: Any,
        patch: dict[Any, Any],
        node: FieldNode | None,
        path: Path_,
        patch_path: Path_,
    ) -> Any:
        directive = patch.get("$patch")
        body = {k: v for k, v in patch.items() if k != "$patch"}
        if directive == "delete":
            return _DELETE
        for key in [k for k in body if isinstance(k, str) and k.startswith("$")]:
            self.problems.append(
                self.site.problem((*patch_path, key), f"the directive {key!r} is not supported")
            )
        if directive not in (None, "merge", "replace"):
            self.problems.append(
                self.site.problem(
                    (*patch_path, "$patch"), f"must be replace, merge or delete, got {directive!r}"
                )
            )
        if directive == "replace" or not isinstance(original, dict):
            self.record(path, patch_path)
            return _without_nulls(body)
        result = dict(original)
        for key, value in body.items():
            if isinstance(key, str) and key.startswith("$"):
                continue
            adding = value is not None and key not in original and not self.adds
            if adding and path and _is_replica_map(path[-1]):
                self.refuse_addition((*patch_path, key), "replica type", str(key), list(original))
                continue
            child = node.child(key) if node is not None and value is not None else None
            merged = (
                _DELETE
                if value is None
                else self.merge(original.get(key), value, child, (*path, key), (*patch_path, key))
            )
            if merged is _DELETE:
                result.pop(key, None)
                self.record((*path, key), (*patch_path, key))
            else:
                result[key] = merged
        return result

    def merge_list(
        self,
        original: list[Any],
        patch: list[Any],
        key: str,
        node: FieldNode | None,
        path: Path_,
        patch_path: Path_,
    ) -> Any:
        items = [(j, item) for j, item in enumerate(patch) if item.get("$patch") != "replace"]
        result = [] if len(items) < len(patch) else list(original)
        item_node = node.child(0) if node is not None else None
        for j, item in items:
            if key not in item:
                self.problems.append(
                    self.site.problem(
                        (*patch_path, j),
                        f"a list item of this strategic merge patch needs its merge key {key!r}",
                    )
                )
                continue
            found = next(
                (
                    i
                    for i, o in enumerate(result)
                    if isinstance(o, dict) and o.get(key) == item[key]
                ),
                None,
            )
            if item.get("$patch") == "delete":
                if found is not None:
                    del result[found]
            elif found is None:
                # New to the document (with $patch: replace, new to the list replaced).
                names = [o.get(key) for o in original if isinstance(o, dict)]
                if not self.adds and path and path[-1] in ADDED_LISTS and item[key] not in names:
                    what = ADDED_LISTS[str(path[-1])]
                    self.refuse_addition((*patch_path, j, key), what, str(item[key]), names)
                    continue
                result.append(_without_nulls(item))
                self.record((*path, len(result) - 1), (*patch_path, j))
            else:
                result[found] = self.merge(
                    result[found], item, item_node, (*path, found), (*patch_path, j)
                )
        return result

    def refuse_addition(self, at: Path_, what: str, name: str, names: list[Any]) -> None:
        self.problems.append(
            self.site.problem(at, _addition_message(what, name, [str(n) for n in names]))
        )


#: Keyed lists where a patch adding an item is refused unless it says so, by field name.
ADDED_LISTS = {
    "containers": "container",
    "initContainers": "init container",
    "ephemeralContainers": "ephemeral container",
    "volumes": "volume",
}


def _is_replica_map(key: PathPart) -> bool:
    """Whether ``key`` holds a job's replica specs by type (``tfReplicaSpecs``...)."""
    return isinstance(key, str) and key.endswith("ReplicaSpecs")


def _addition_message(what: str, name: str, names: list[str]) -> str:
    message = f"adds the {what} {name!r}, which the document does not have"
    close = difflib.get_close_matches(name, names, n=1)
    if close:
        message += f" (did you mean {close[0]!r}?)"
    elif names:
        message += f" (it has {', '.join(repr(n) for n in names)})"
    return message + "; if the addition is meant, set adds: true on this patch"


def _without_nulls(value: Any) -> Any:
    """A value as a patch writes it where nothing was: ``null`` keys and directives dropped."""
    if isinstance(value, dict):
        return {
            k: _without_nulls(v)
            for k, v in value.items()
            if v is not None and not (isinstance(k, str) and k.startswith("$"))
        }
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


# --- JSON patch (RFC 6902) --------------------------------------------------------------------


def _json_patch(
    doc: PatchedDocument,
    patch: Document,
    problems: list[Problem],
    adds: bool = False,
    version: tuple[int, int] | None = None,
) -> None:
    if len(patch.data) > MAX_PATCH_OPERATIONS:
        problems.append(
            patch.problem(
                (),
                f"has {len(patch.data)} operations, more than the "
                f"{MAX_PATCH_OPERATIONS} a patch may have",
            )
        )
        return
    size = _size(doc.data)
    for j, op in enumerate(patch.data):
        problem = _bad_operation(op)
        if problem is not None:
            problems.append(patch.problem((j, *problem[0]), problem[1]))
            return
        if not adds and (added := _json_addition(doc.data, op)) is not None:
            what, name, names = added
            problems.append(patch.problem((j, "path"), _addition_message(what, name, names)))
            return
        # Bound the growth before the work: an add or copy brings one value's size.
        grows = _added_size(doc.data, op)
        if grows is None or size + grows > MAX_OBJECT_BYTES:
            problems.append(
                patch.problem(
                    (j,),
                    f"would make {doc.title} larger than {MAX_OBJECT_BYTES / 2**20:g} MiB, the "
                    "size of an object kubetrain writes",
                )
            )
            return
        size += grows
        try:
            doc.data = jsonpatch.apply_patch(doc.data, [op], in_place=True)
        except jsonpatch.JsonPatchTestFailed:
            problems.append(
                patch.problem(
                    (j, "value"),
                    f"test failed: the value at {op['path']} is not the one given (in {doc.title})",
                )
            )
            return
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException):
            pointer = op["from"] if op["op"] in ("move", "copy") else op["path"]
            field = "from" if op["op"] in ("move", "copy") else "path"
            problems.append(
                patch.problem(
                    (j, field),
                    _missing(doc.data, pointer, op["op"], doc.title, _node(doc.data, version)),
                )
            )
            return
        written = _as_path(doc.data, op["path"])
        at: Path_ = (j, "value") if op["op"] in ("add", "replace") else (j,)
        if op["op"] != "test":
            doc.overlay[written] = (patch, at)


def _node(data: Any, version: tuple[int, int] | None) -> FieldNode | None:
    """The schema node of a document's kind, when known."""
    if version is None or not isinstance(data, dict):
        return None
    return kind_node(str(data.get("apiVersion")), str(data.get("kind")), version)


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), default=str))


def _added_size(data: Any, op: dict[str, Any]) -> int | None:
    """Bytes an operation adds to the document at most (0 for remove, move and test); ``None``
    when the value it copies is past every bound already."""
    if op["op"] in ("add", "replace"):
        return _size(op.get("value"))
    if op["op"] == "copy":
        try:
            value = jsonpointer.resolve_pointer(data, op["from"])
        except jsonpointer.JsonPointerException:
            return 0  # the operation itself reports the missing path
        return _size(value)
    return 0


def _json_addition(data: Any, op: dict[str, Any]) -> tuple[str, str, list[str]] | None:
    """(what, name, names present) when ``op`` adds a container, volume or replica type."""
    if op["op"] not in ("add", "copy", "move"):
        return None
    parts = _parts(op["path"])
    if len(parts) < 2:
        return None
    try:
        parent = jsonpointer.resolve_pointer(data, "/" + "/".join(_escape(p) for p in parts[:-1]))
    except jsonpointer.JsonPointerException:
        return None
    appends = parts[-1] == "-" or parts[-1].isdigit()
    if isinstance(parent, list) and parts[-2] in ADDED_LISTS and appends:
        value = op.get("value") if op["op"] == "add" else None
        name = value.get("name") if isinstance(value, dict) else None
        names = [str(o.get("name")) for o in parent if isinstance(o, dict)]
        return ADDED_LISTS[parts[-2]], str(name) if name else parts[-1], names
    if isinstance(parent, dict) and _is_replica_map(parts[-2]) and parts[-1] not in parent:
        return "replica type", parts[-1], [str(k) for k in parent]
    return None


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def _bad_operation(op: Any) -> tuple[Path_, str] | None:
    if not isinstance(op, dict):
        return (), "a JSON patch operation is a mapping with op and path"
    if op.get("op") not in _JSON_OPS:
        return ("op",), f"must be one of {', '.join(_JSON_OPS)}, got {op.get('op')!r}"
    for key in ("path", "from") if op["op"] in ("move", "copy") else ("path",):
        value = op.get(key)
        if not isinstance(value, str) or (value and not value.startswith("/")):
            return (key,), f"must be a JSON pointer such as /spec/replicas, got {value!r}"
    if op["op"] in ("add", "replace", "test") and "value" not in op:
        return (), f"a {op['op']} operation needs a value"
    return None


def _parts(pointer: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


def _as_path(data: Any, pointer: str) -> Path_:
    """A JSON pointer as a field path (list indexes as numbers, ``-`` as the last item)."""
    out: list[PathPart] = []
    current = data
    for part in _parts(pointer):
        if isinstance(current, list):
            index = len(current) - 1 if part == "-" else int(part) if part.isdigit() else 0
            out.append(index)
            current = current[index] if 0 <= index < len(current) else None
        else:
            out.append(part)
            current = current.get(part) if isinstance(current, dict) else None
    return tuple(out)


def _missing(data: Any, pointer: str, op: str, title: str, node: FieldNode | None = None) -> str:
    """Why ``pointer`` does not resolve in ``data``: the first step that fails, and what is
    there instead. A key of the kind's schema (``node``) is not "corrected" into a key that is
    none: when the document holds a misspelling of the field, the document is what to fix."""
    current = data
    walked = ""
    parts = _parts(pointer)
    for n, part in enumerate(parts):
        last = n == len(parts) - 1
        if isinstance(current, dict):
            if part not in current:
                if last and op == "add":
                    break
                keys = sorted(str(k) for k in current)
                close = difflib.get_close_matches(part, keys, n=1)
                known = node is not None and node.child(part) is not None
                if close and known and node is not None and node.child(close[0]) is None:
                    return (
                        f"{title} has no {part!r} at {walked or '/'}: it has {close[0]!r}, which "
                        f"is no field there (a misspelling of {part!r} in the document?); fix "
                        "the document"
                    )
                hint = f"; did you mean {close[0]!r}?" if close else f" (keys: {', '.join(keys)})"
                return f"{title} has no {part!r} at {walked or '/'}{hint}"
            current = current[part]
            node = node.child(part) if node is not None else None
        elif isinstance(current, list):
            if not part.isdigit() or int(part) >= len(current) + (last and op == "add"):
                if part == "-" and last and op == "add":
                    break
                return (
                    f"{title} has {len(current)} items at {walked or '/'}, "
                    f"so {part!r} is not an index there"
                )
            current = current[int(part)] if int(part) < len(current) else None
            node = node.child(0) if node is not None else None
        else:
            return f"{title} has a value, not a mapping or list, at {walked or '/'}"
        walked += "/" + part.replace("~", "~0").replace("/", "~1")
    return f"cannot {op} {pointer} in {title}"
