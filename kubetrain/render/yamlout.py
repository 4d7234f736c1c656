"""kubetrain's YAML writer: block-style, deterministic, fast, for plain-data manifests.

:func:`dump` writes one YAML document for a value made of ``dict`` (``str`` keys), ``list``,
``str``, ``int``, ``float``, ``bool`` and ``None``, the way ``kubectl`` and PyYAML
(``default_flow_style=False, indent=2, sort_keys=False``) lay Kubernetes manifests out::

    metadata:
      labels:
        app.kubernetes.io/name: mnist
    spec:
      containers:
      - name: tensorflow
        image: kubeflow/tf-dist-mnist-test:latest

Keys keep the mapping's insertion order (callers put them in canonical order), nothing is
folded, and the output depends on nothing but the value: not on the hash seed, the locale, the
machine or what was written before.

Scalars are written so that every common reader gives the value back:

* A string is written plain (unquoted) only when all of these hold, and double-quoted otherwise:

  1. it has the conservative shape of ``_PLAIN_SHAPE``: ASCII letters, digits and ``_./=+,@()-``,
     a ``:`` only between two such characters, single inner spaces, a first character that is a
     letter, digit, ``_``, ``.`` or ``/`` (or a ``-`` glued to the next one), and no ``---`` or
     ``...`` at the start (document markers at column 0). Nothing in that set is a YAML
     indicator where it can stand, so the parsers all read it as one plain scalar;
  2. PyYAML's implicit resolver (its YAML 1.1 reading, shared by the C and pure loaders)
     resolves it as a string: not ``yes``/``off``/``~``, ``0x1F``, ``1_000``, ``0777``,
     ``1:20``, ``.inf``, ``2001-12-14``...;
  3. it is not a keyword any other reader knows, compared case-insensitively: the YAML 1.2 core
     words, go-yaml v2's ``y``/``n`` booleans (which PyYAML reads as strings), ``inf``/``nan``;
  4. once rid of ``_`` (go-yaml reads ``-_1_0`` as -10), it does not look like a number to YAML
     1.2, go-yaml or the letter of the YAML 1.1 spec (``0o17``, ``1e3``, ``1.5e3``, ``0b1``,
     ``.5``...): a digit, optionally after a sign and a dot, followed only by hex digits,
     ``xob`` and ``.:+-``; nor like the 1.1 spec's float, whose ``[0-9.]*`` also takes ``.``,
     ``1.2.3`` and ``10.0.0.1`` (no common reader does, but they are quoted all the same). So
     ``1.15`` and ``10.0.0.1`` are quoted, while ``500m``, ``1Gi`` and ``1.2.3-beta`` stay plain;
  5. it does not start like a date, ``NNNN-N-N`` (go-yaml v3 reads ``2001-1-2`` as a timestamp,
     PyYAML does not).

* A string with a line break is written as a literal block (``|``, ``|-`` or ``|+``, with the
  indentation indicator when the first line starts with a space, tab or line break) when each
  character is printable and not a line break of YAML 1.1 other than ``\\n``, no line ends in a
  space or tab and there is a non-empty line; otherwise double-quoted.
* A long double-quoted string of JSON (``TF_CONFIG``, which lists every pod of a job) is
  written over several lines, broken after each comma that a non-blank follows, with escaped
  line breaks (``,\\`` at the end of a line): a reader joins the lines back without adding a
  character, so the value is byte for byte the same, and scaling a job from 4 to 6 workers
  changes two lines of the file instead of rewriting one line of hundreds of characters.
* Double-quoted strings escape ``"`` and ``\\``, C0 and C1 controls, DEL, U+2028/U+2029, the BOM
  and U+FFFE/U+FFFF (``\\n``, ``\\t``, ``\\e``, ``\\N``, ``\\L``, ``\\P``, ``\\xNN``, ``\\uNNNN``).
  A lone surrogate has no UTF-8 form, and libyaml refuses its escape, so it raises ValueError.
* Floats use ``repr`` (the shortest string that round-trips) with ``.0`` added before an
  exponent that has no dot, as YAML 1.1 needs a dot (``1.0e+16``); ``.inf``, ``-.inf``, ``.nan``.
* Keys follow the string rules (never a block). A key whose written form is longer than 128
  characters is written as an explicit ``? key`` entry, as PyYAML and go-yaml do, since readers
  only accept implicit keys up to 1024 characters.

The decisions per string are memoised in bounded caches, since label values and keys repeat
across thousands of objects. The emitter is a recursive function per collection type that
appends finished lines to one list, joined once; ``bench/emitters.py`` measures it against
PyYAML's C and pure-Python dumpers.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Mapping
from typing import Any, Final

import yaml
import yaml_rs

from ..models.source import GENERATED_MARK

__all__ = ["clear_caches", "dump", "dump_all", "dump_commented", "is_plain", "read_generated"]

# --------------------------------------------------------------------------------------------
# Which strings are safe unquoted
# --------------------------------------------------------------------------------------------

_SAFE = r"A-Za-z0-9_./=+,@()\-"
_PLAIN_SHAPE: Final = re.compile(
    r"(?!---|\.\.\.)"  # no document marker, should the scalar land in column 0
    rf"(?:[A-Za-z0-9_./]|-(?=[A-Za-z0-9_./\-]))"  # no indicator first; "-x" but never "- x"
    rf"(?:[{_SAFE}]|:(?=[{_SAFE}])| (?=[{_SAFE}]))*"  # ": " and " #" can never occur
)
# Words some reader resolves to a bool, null or float; compared after str.lower().
_KEYWORDS: Final = frozenset(
    {
        "~", "null", "true", "false",  # YAML 1.2 core and 1.1
        "yes", "no", "on", "off", "y", "n",  # YAML 1.1 booleans (y/n: go-yaml v2, not PyYAML)
        ".inf", "-.inf", "+.inf", ".nan",  # YAML floats
        "inf", "-inf", "+inf", "nan", "infinity", "-infinity", "+infinity",  # margin
    }
)  # fmt: skip
# Number-like for YAML 1.2 / go-yaml (which strips "_" and uses Go's base-0 integer syntax).
_NUMBERISH: Final = re.compile(r"[-+]?\.?[0-9][0-9A-Fa-fXxOoBb_.:+\-]*")
# The float of yaml.org/type/float.html (YAML 1.1), to the letter: "." and "1.2.3" included.
_SPEC11_FLOAT: Final = re.compile(r"[-+]?(?:[0-9][0-9_]*)?\.[0-9.]*(?:[eE][-+][0-9]+)?")
# go-yaml's timestamps accept one-digit months and days ("2006-1-2").
_DATEISH: Final = re.compile(r"[0-9]{4}-[0-9][0-9]?-[0-9][0-9]?")
_PYYAML_RESOLVERS: Final = yaml.resolver.Resolver.yaml_implicit_resolvers


def is_plain(s: str) -> bool:
    """Whether ``s`` can be written plain and be read back as the same string by PyYAML, by
    go-yaml v2 (kubectl) and v3 (kustomize), and under the YAML 1.2 core schema."""
    if _PLAIN_SHAPE.fullmatch(s) is None:  # also rules out ""
        return False
    if s.lower() in _KEYWORDS or _DATEISH.match(s) is not None:
        return False
    digits = s.replace("_", "")  # as go-yaml does before parsing a number: "-_1_0" is -10
    if _NUMBERISH.fullmatch(digits) is not None or _SPEC11_FLOAT.fullmatch(digits) is not None:
        return False
    for _tag, regexp in (*_PYYAML_RESOLVERS.get(s[0], ()), *_PYYAML_RESOLVERS.get(None, ())):
        if regexp.match(s):
            return False
    return True


# --------------------------------------------------------------------------------------------
# Double-quoted and literal block scalars
# --------------------------------------------------------------------------------------------

# Characters a double-quoted scalar must not carry raw: not printable for YAML 1.1/1.2 (C0 but
# tab and LF, DEL, C1, surrogates, U+FFFE/U+FFFF), line breaks of YAML 1.1 (NEL, LS, PS), the
# BOM; tab and LF are escaped to keep the scalar on one line and visible.
_NEEDS_ESCAPE: Final = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_NAMED_ESCAPES: Final = {
    "\0": "\\0",
    "\x07": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\x0b": "\\v",
    "\f": "\\f",
    "\r": "\\r",
    "\x1b": "\\e",
    '"': '\\"',
    "\\": "\\\\",
    "\x85": "\\N",
    "\u2028": "\\L",
    "\u2029": "\\P",
}
_ESCAPE_TABLE: Final[dict[int, str]] = {
    **{c: f"\\x{c:02X}" for c in (*range(0x20), *range(0x7F, 0xA0))},
    **{c: f"\\u{c:04X}" for c in (0xFEFF, 0xFFFE, 0xFFFF)},
    **{ord(ch): esc for ch, esc in _NAMED_ESCAPES.items()},
}
# A literal block keeps its text as is: only printable characters, no line break but LF (CR,
# NEL, LS and PS are breaks to YAML 1.1 readers), no BOM, no trailing space or tab on a line.
_BLOCK_UNFIT: Final = re.compile(
    "[^\t\n\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
    "|[\u2028\u2029]|[ \t](?:\n|\\Z)"
)


def _quoted(s: str) -> str:
    """``s`` as a double-quoted scalar on one line."""
    if _NEEDS_ESCAPE.search(s) is None:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    bad = _SURROGATE.search(s)
    if bad is not None:
        raise ValueError(
            f"string contains the lone surrogate U+{ord(bad.group()):04X} at index {bad.start()},"
            " which YAML (UTF-8) cannot carry"
        )
    return '"' + s.translate(_ESCAPE_TABLE) + '"'


def _block_fit(s: str) -> bool:
    return _BLOCK_UNFIT.search(s) is None and s.strip("\n") != ""


def _write_block(s: str, ind: str, out: list[str]) -> None:
    """Append a literal block scalar (header and lines) for a node at indentation ``ind``, or
    a folded double-quoted one (see :func:`_write_folded`)."""
    if "\n" not in s:
        out[-1] = out[-1].rstrip(" ")
        _write_folded(s, ind, out)
        return
    if s[-1] == "\n":
        chomp = "+" if s.endswith("\n\n") else ""
        body = s[:-1]
    else:
        chomp = "-"
        body = s
    indicator = "2" if s[0] in " \t\n" else ""
    sub = ind + "  "
    out.append(f"|{indicator}{chomp}\n")
    out.append("".join([f"{sub}{line}\n" if line else "\n" for line in body.split("\n")]))


# --------------------------------------------------------------------------------------------
# Memoised scalar texts
# --------------------------------------------------------------------------------------------

_CACHE_LIMIT: Final = 1 << 15  # entries per cache; the caches are emptied when they fill up
_CACHED_LEN: Final = 128  # longer strings are rendered each time, not kept alive
_BLOCK: Final = ""  # value-cache marker: write a literal block (depends on indentation)
#: Double-quoted strings at least this long that hold JSON are written over several lines.
_FOLD_FROM: Final = 100
#: A comma that ends a line of a folded string: one a non-blank follows (a reader strips the
#: blanks that start a continuation line, so a break before one would change the value).
_FOLD_AT: Final = re.compile(r",(?=[^ \t])")

# str -> " text\n" as it follows "key:" or "-", or _BLOCK.
_VALUES: dict[str, str] = {}
# str -> "text:" for a simple key; keys needing the explicit form are never cached.
_KEYS: dict[str, str] = {}


def clear_caches() -> None:
    """Forget the memoised scalar texts (the output does not depend on them)."""
    _VALUES.clear()
    _KEYS.clear()


def _foldable(s: str) -> bool:
    """Whether ``s`` is written as a folded double-quoted string: long JSON on one line."""
    return len(s) >= _FOLD_FROM and s[0] in "{[" and '",' in s and "\n" not in s


def _write_folded(s: str, ind: str, out: list[str]) -> None:
    """Append the rest of a double-quoted scalar broken after its commas (the first part is on
    the line already written): ``\\`` ends every line but the last, the continuation lines
    indented below the key."""
    text = _quoted(s)
    parts = _FOLD_AT.split(text)
    sub = ind + "  "
    out.append(" " + parts[0] + (",\\\n" if len(parts) > 1 else "\n"))
    for n, part in enumerate(parts[1:], start=2):
        out.append(f"{sub}{part}" + (",\\\n" if n < len(parts) else "\n"))


def _value_text(s: str) -> str:
    if "\n" in s and _block_fit(s):
        text = _BLOCK
    elif is_plain(s):
        text = f" {s}\n"
    elif _foldable(s):
        return _BLOCK  # written by _write_folded, which depends on the indentation
    else:
        text = f" {_quoted(s)}\n"
    if len(s) <= _CACHED_LEN:
        if len(_VALUES) >= _CACHE_LIMIT:
            _VALUES.clear()
        _VALUES[s] = text
    return text


def _key_text(k: Any, ind: str) -> str:
    """``"key:"``, or ``"? key\\n<ind>:"`` for a key too long to be an implicit key."""
    if type(k) is not str:
        if not isinstance(k, str):
            raise TypeError(f"mapping keys must be str, not {type(k).__name__}: {k!r}")
        k = str.__str__(k)
    text = k if is_plain(k) else _quoted(k)
    if len(text) > 128:
        return f"? {text}\n{ind}:"
    if len(_KEYS) >= _CACHE_LIMIT:
        _KEYS.clear()
    _KEYS[k] = text + ":"
    return text + ":"


def _float_text(v: float) -> str:
    if v != v:
        return ".nan"
    if v in (float("inf"), float("-inf")):
        return ".inf" if v > 0 else "-.inf"
    text = float.__repr__(v)
    if "e" in text and "." not in text:  # 1e+16 is a string to YAML 1.1: write 1.0e+16
        mantissa, _, exponent = text.partition("e")
        text = f"{mantissa}.0e{exponent}"
    return text


# --------------------------------------------------------------------------------------------
# The emitter
# --------------------------------------------------------------------------------------------


def _normalise(v: Any) -> Any:
    """An exact-type equivalent of a value the fast paths did not recognise."""
    if v is None or type(v) in (bool, float):
        return v
    if isinstance(v, bool):
        return bool(v)
    if isinstance(v, int):
        return int.__int__(v)
    if isinstance(v, float):
        return float.__float__(v)
    if isinstance(v, str):
        return str.__str__(v)
    if isinstance(v, Mapping):
        return dict(v.items())
    if isinstance(v, list | tuple):
        return list(v)
    raise TypeError(f"cannot write a {type(v).__name__} as YAML: {v!r}")


def _scalar_text(v: Any) -> str:
    """`` text\\n`` for a non-str scalar of exact type bool, None, int or float."""
    if v is True:
        return " true\n"
    if v is False:
        return " false\n"
    if v is None:
        return " null\n"
    if type(v) is int:
        return f" {v}\n"
    return f" {_float_text(v)}\n"


def _map(d: dict[Any, Any], ind: str, out: list[str], pre: str) -> None:
    """Append the entries of non-empty ``d`` with keys at ``ind``; the first line begins with
    ``pre`` instead (``ind`` itself, or the ``"- "`` of a sequence entry)."""
    ap = out.append
    keys = _KEYS
    values = _VALUES
    sub = ind + "  "
    for k, v in d.items():
        kt = keys.get(k)
        if kt is None:
            kt = _key_text(k, ind)
        t = type(v)
        if t is str:
            text = values.get(v)
            if text is None:
                text = _value_text(v)
            if text:
                ap(f"{pre}{kt}{text}")
            else:
                ap(f"{pre}{kt} ")
                _write_block(v, ind, out)
        elif t is dict:
            if v:
                ap(f"{pre}{kt}\n")
                _map(v, sub, out, sub)
            else:
                ap(f"{pre}{kt} {{}}\n")
        elif t is int:
            ap(f"{pre}{kt} {v}\n")
        elif t is list:
            if v:
                ap(f"{pre}{kt}\n")
                _seq(v, ind, out, ind)
            else:
                ap(f"{pre}{kt} []\n")
        elif t is bool or v is None or t is float:
            ap(f"{pre}{kt}{_scalar_text(v)}")
        else:
            _map({k: _normalise(v)}, ind, out, pre)
        pre = ind


def _seq(items: list[Any], ind: str, out: list[str], pre: str) -> None:
    """Append the entries of non-empty ``items`` with their ``-`` at ``ind``; the first line
    begins with ``pre`` instead."""
    ap = out.append
    values = _VALUES
    sub = ind + "  "
    for v in items:
        t = type(v)
        if t is str:
            text = values.get(v)
            if text is None:
                text = _value_text(v)
            if text:
                ap(f"{pre}-{text}")
            else:
                ap(f"{pre}- ")
                _write_block(v, ind, out)
        elif t is dict:
            if v:
                _map(v, sub, out, pre + "- ")
            else:
                ap(f"{pre}- {{}}\n")
        elif t is list:
            if v:
                _seq(v, sub, out, pre + "- ")
            else:
                ap(f"{pre}- []\n")
        elif t is int:
            ap(f"{pre}- {v}\n")
        elif t is bool or v is None or t is float:
            ap(f"{pre}-{_scalar_text(v)}")
        else:
            _seq([_normalise(v)], ind, out, pre)
        pre = ind


def dump(obj: Mapping[str, Any]) -> str:
    """One YAML document (no ``---``) for ``obj``, in block style; see the module docstring.

    A sequence or a scalar is accepted at the top too. Raises TypeError for a value of another
    type or a non-str key, ValueError for a string holding a lone surrogate; a value that
    contains itself exhausts the recursion limit.
    """
    value: Any = obj
    t = type(value)
    if t is not dict and t is not list:
        value = _normalise(value)
        t = type(value)
    out: list[str] = []
    if t is dict:
        if not value:
            return "{}\n"
        _map(value, "", out, "")
    elif t is list:
        if not value:
            return "[]\n"
        _seq(value, "", out, "")
    elif t is str:
        return f"{value}\n" if is_plain(value) else f"{_quoted(value)}\n"
    else:
        return _scalar_text(value)[1:]
    return "".join(out)


def dump_all(objs: Iterable[Mapping[str, Any]]) -> str:
    """Several documents, separated by ``---`` lines."""
    return "---\n".join([dump(obj) for obj in objs])


#: A field path in a document: mapping keys and list indexes.
CommentPath = tuple[str | int, ...]


def dump_commented(obj: Mapping[str, Any], comments: Mapping[CommentPath, str]) -> str:
    """:func:`dump`, with a comment above the entries ``comments`` names (a field path: keys and
    list indexes; ``()`` heads the document). A comment of several lines keeps them; each is
    written as ``# ...`` at the entry's indentation (a list item's at its ``-``), wrapped at
    :data:`COMMENT_WIDTH` columns, so the value read back is the one :func:`dump` writes. For
    files people keep (``kubetrain convert``)."""
    out: list[str] = []
    _comment(comments.get(()), "", out)
    if not isinstance(obj, dict) or not obj:
        return "".join(out) + dump(obj)
    prefixes = {path[:n] for path in comments for n in range(len(path) + 1)}
    _cmap(obj, "", out, "", (), comments, prefixes)
    return "".join(out)


#: Columns a comment line is wrapped at (its indentation included).
COMMENT_WIDTH = 100


def _comment(text: str | None, ind: str, out: list[str]) -> None:
    if not text:
        return
    width = max(40, COMMENT_WIDTH - len(ind) - 2)
    for paragraph in text.splitlines():
        for line in textwrap.wrap(paragraph, width, break_on_hyphens=False) or [""]:
            out.append(f"{ind}# {line}".rstrip() + "\n")


def _cmap(
    d: dict[Any, Any],
    ind: str,
    out: list[str],
    pre: str,
    path: CommentPath,
    comments: Mapping[CommentPath, str],
    prefixes: set[CommentPath],
) -> None:
    sub = ind + "  "
    for k, v in d.items():
        here = (*path, k)
        # The first key of a list item starts the "- " line: its comment goes above the dash.
        _comment(comments.get(here), " " * (len(pre) - 2) if pre != ind else ind, out)
        if here not in prefixes or not v or type(v) not in (dict, list):
            _map({k: v}, ind, out, pre)
        elif type(v) is dict:
            out.append(f"{pre}{_key_text(k, ind)}\n")
            _cmap(v, sub, out, sub, here, comments, prefixes)
        else:
            out.append(f"{pre}{_key_text(k, ind)}\n")
            _cseq(v, ind, out, ind, here, comments, prefixes)
        pre = ind


def _cseq(
    items: list[Any],
    ind: str,
    out: list[str],
    pre: str,
    path: CommentPath,
    comments: Mapping[CommentPath, str],
    prefixes: set[CommentPath],
) -> None:
    for i, v in enumerate(items):
        here = (*path, i)
        _comment(comments.get(here), " " * (len(pre) - len(pre.lstrip(" "))), out)
        if here in prefixes and type(v) is dict and v:
            _cmap(v, ind + "  ", out, pre + "- ", here, comments, prefixes)
        elif here in prefixes and type(v) is list and v:
            _cseq(v, ind + "  ", out, pre + "- ", here, comments, prefixes)
        else:
            _seq([v], ind, out, pre)
        pre = ind


# --------------------------------------------------------------------------------------------
# Reading back what the writer wrote, fast
# --------------------------------------------------------------------------------------------

# A line whose content starts past this column may be nested past MAX_DEPTH: any two levels of
# the writer's block style move content right by at least two columns (a list directly under
# a key by none, anything else by two), so content within 90 columns is within 92 levels. The
# fast parser has no depth limit of its own (it crashes on thousands of levels).
# (Searched as a first line, then after a line break: a tenth of MULTILINE's ``^``'s time.)
_DEEP_FIRST_LINE: Final = re.compile(r"[ -]{90}")
_DEEP_LINE: Final = re.compile(r"\n[ -]{90}")


# What value_problems refuses, as the writer writes it: non-finite floats (``.inf``, ``.nan``),
# integers that may pass int64 (19 digits or more), and the escapes of characters kustomize
# cannot read (DEL and the C1 controls but NEL, U+FFFE, U+FFFF; a lone surrogate makes dump
# raise). Mapping keys that are not strings make dump raise too. A string that merely contains
# such text is a false alarm: PyYAML reads that file, as it reads any other.
_NOT_PLAIN_TEXT: Final = re.compile(
    r"\.(?:inf|nan)\b|[0-9]{19}|\\x(?:7F|8[0-46-9A-F]|9[0-9A-F])|\\uFFF[EF]"
)
# What the search looks for, found faster (the regular expression takes 15 microseconds a file,
# a tenth of reading it): the text of those escapes and keywords, and the runs of digits, seen
# as runs of 9 once every digit is a 9. Only a text where one is found is searched.
_NOT_PLAIN_HINTS: Final = (".inf", ".nan", "\\x", "\\uFFF")
_NINES: Final = str.maketrans("012345678", "999999999")
_LONG_NUMBER: Final = "9" * 19


def _not_plain_text(body: str) -> bool:
    """Whether ``body`` holds what :data:`_NOT_PLAIN_TEXT` finds."""
    if _LONG_NUMBER in body.translate(_NINES) or any(h in body for h in _NOT_PLAIN_HINTS):
        return _NOT_PLAIN_TEXT.search(body) is not None
    return False


def read_generated(text: str) -> list[Any] | None:
    """The document of a file this writer wrote, read with yaml-rs (a YAML 1.2 parser, about
    nine times kubetrain's libyaml loader; bench/loaders.py), or ``None`` when that is not
    proven to give that loader's values.

    The proof: after its header comments, the text is exactly what :func:`dump` writes for the
    value yaml-rs read. :func:`dump` writes plain only strings that every reader concerned
    (go-yaml v2 as kubectl and kubetrain's loader read, PyYAML, YAML 1.2) gives back unchanged,
    and numbers and booleans in forms they all agree on (tests/test_yamlout.py and
    tests/test_yaml_scalars.py check both), so the loader would read the same value. Any other
    text (a hand edit, an alias, a tag, ``yes`` unquoted) is left to the loader, which reads it
    as kubectl does. The value must also obey every rule of
    :func:`~kubetrain.models.source.value_problems`, as a document the loader reads must.
    """
    if not text.startswith(GENERATED_MARK):
        return None
    start = 0
    while text.startswith("#", start):
        end = text.find("\n", start)
        if end < 0:
            return None
        start = end + 1
    body = text[start:]
    if _DEEP_FIRST_LINE.match(body) is not None or _DEEP_LINE.search(body) is not None:
        return None
    try:
        value = yaml_rs.loads(body, parse_datetime=False)
        if type(value) is not dict or dump(value) != body:
            return None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # a parse error, or a panic of the Rust parser: PyYAML decides
        return None
    # The text is now exactly what the writer writes for ``value``, so whatever
    # value_problems would refuse shows in the text itself (searched once, not value by value).
    if _not_plain_text(body):
        return None
    return [value]
