"""One YAML reading for every input, as kubectl reads it (go-yaml v2's scalars), and
every YAML construct JSON cannot hold, or that would cost unbounded time, refused with
``FILE:LINE: path: message`` and exit 2 (exit 1, a finding, for files ``validate`` checks)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kubetrain.models import InputError
from kubetrain.models.source import load_all, parse_documents
from kubetrain.render import dump

from conftest import REPO, needs_upstream_crds

# Imported where used: the tests above them run against any kubetrain, the ones below name the
# pieces this reading is made of.

TFJOB = """\
config:
  kubetrain:namespace: ml
  kubetrain:jobs:
  - apiVersion: kubeflow.org/v1
    kind: TFJob
    metadata: {name: mnist}
    spec:
      tfReplicaSpecs:
        Worker:
          replicas: %s
          template: {spec: {containers: [{name: tensorflow, image: tf}]}}
"""


def render(project: Path, run, text: str):
    (project / "stacks" / "Pulumi.dev.yaml").write_text(text)
    return run("render", cwd=project)


def laughs(levels: int, name: str = "l") -> str:
    """The billion laughs: each level lists the previous one ten times."""
    lines = [f"{name}0: &{name}0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels):
        lines.append(f"{name}{i}: &{name}{i} [" + ", ".join([f"*{name}{i - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def merge_bomb(levels: int) -> str:
    lines = ["m0: &m0 {x: 1}"]
    for i in range(1, levels):
        lines.append(f"m{i}: &m{i} {{<<: [" + ", ".join([f"*m{i - 1}"] * 10) + "]}")
    return "\n".join(lines) + "\n"


# Each case: a stack file (or a fragment under config) and the stderr line expected.
CASES = [
    pytest.param(
        "config:\n  kubetrain:namespace: ml\n  kubetrain:external:\n    secrets: {yes: x}\n",
        "stacks/Pulumi.dev.yaml:4: config.kubetrain:external.secrets: a key must be a string, "
        "not the boolean true",
        id="bool-key",
    ),
    pytest.param(
        "config:\n  kubetrain:external:\n    1: x\n",
        "stacks/Pulumi.dev.yaml:2: config.kubetrain:external: a key must be a string, not the number 1",
        id="int-key",
    ),
    pytest.param(
        "config:\n  kubetrain:external:\n    ~: x\n",
        "stacks/Pulumi.dev.yaml:2: config.kubetrain:external: a key must be a string, not null",
        id="null-key",
    ),
    pytest.param(
        "config:\n  kubetrain:namespace: !!binary bWw=\n",
        "stacks/Pulumi.dev.yaml:2: config.kubetrain:namespace: a !!binary value is not JSON",
        id="binary",
    ),
    pytest.param(
        "config:\n  kubetrain:namespace: !!timestamp 2001-12-14\n",
        "stacks/Pulumi.dev.yaml:2: config.kubetrain:namespace: a !!timestamp value is not JSON",
        id="timestamp",
    ),
    pytest.param(
        "config:\n  kubetrain:namespace: !!timestamp hello\n",
        "stacks/Pulumi.dev.yaml:2: invalid YAML: the value tagged !!timestamp is not one",
        id="timestamp-tag-on-no-timestamp",
    ),
    pytest.param(
        "config:\n  kubetrain:namespace: !!int 0x\n",
        "stacks/Pulumi.dev.yaml:2: invalid YAML: the value tagged !!int is not one",
        id="int-tag-on-no-int",
    ),
    pytest.param(
        "config:\n  kubetrain:skipChecks: !!set {host-port}\n",
        "stacks/Pulumi.dev.yaml:2: config.kubetrain:skipChecks: a !!set is not JSON",
        id="set",
    ),
    pytest.param(
        "config:\n  kubetrain:jobs: &a [*a]\n",
        "stacks/Pulumi.dev.yaml:2: config.kubetrain:jobs[0]: a recursive alias",
        id="recursive-alias",
    ),
    pytest.param(
        "config:\n  kubetrain:external:\n    secrets: " + "[" * 150 + "]" * 150 + "\n",
        "nested more than 100 levels deep below here",
        id="too-deep",
    ),
    pytest.param(
        TFJOB % ".nan",
        "stacks/Pulumi.dev.yaml:10: config.kubetrain:jobs[0].spec.tfReplicaSpecs.Worker.replicas: "
        "NaN (.nan) is not a number JSON, or Kubernetes, can hold",
        id="nan",
    ),
    pytest.param(
        TFJOB % "-.inf",
        "Worker.replicas: infinity (.inf) is not a number",
        id="infinity",
    ),
    pytest.param(
        TFJOB % "9223372036854775808",
        "Worker.replicas: an integer beyond int64",
        id="beyond-64-bits",
    ),
    pytest.param(
        "config:\n  kubetrain:namespace: ml\n  kubetrain:jobs:\n  - apiVersion: kubeflow.org/v1\n"
        '    kind: TFJob\n    metadata: {name: m, annotations: {note: "a\\x7fb"}}\n',
        "stacks/Pulumi.dev.yaml:6: config.kubetrain:jobs[0].metadata.annotations.note: holds the "
        "character U+007F, which kustomize and kubectl cannot read back",
        id="del-in-a-string",
    ),
    pytest.param(
        "config:\n  kubetrain:namespace: a\n  kubetrain:namespace: b\n",
        "stacks/Pulumi.dev.yaml:3: config.kubetrain:namespace: duplicate key 'kubetrain:namespace' "
        "(first given on line 2)",
        id="duplicate-key",
    ),
    pytest.param(
        "config:\n  kubetrain:namespace: [a\n  kubetrain:mode: native\n",
        "stacks/Pulumi.dev.yaml:3: invalid YAML: while parsing a flow sequence (from line 2) did "
        "not find expected ',' or ']'",
        id="syntax-error-on-one-line",
    ),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_yaml_that_json_cannot_hold_is_refused(
    project: Path, run, text: str, expected: str
) -> None:
    result = render(project, run, text)
    assert result.exit_code == 2, result.stderr
    assert expected in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert not (project / "rendered").exists()


@pytest.mark.parametrize(
    ("bomb", "expected"),
    [
        (laughs(9), "aliases expand this document to more than 1,000,000 values"),
        # Merges keep one entry per key: ten levels of ten merges are one key, and harmless.
        (merge_bomb(9), "config.kubetrain:mode: Input should be 'native' or 'operator'"),
    ],
    ids=["billion-laughs", "merge-bomb"],
)
def test_alias_bombs_are_refused_without_expanding_them(
    project: Path, run, bomb: str, expected: str
) -> None:
    # Another error in the file makes kubetrain look for lines: that pass must not expand
    # the aliases either. The bomb sits under kubetrain's own key and under another package's.
    for where in ("kubetrain:external", "aws:tags"):
        body = "".join(f"    {line}\n" for line in bomb.splitlines())
        text = f"config:\n  kubetrain:mode: bad\n  {where}:\n{body}"
        result = render(project, run, text)
        assert result.exit_code == 2
        assert expected in result.stderr


def test_a_merge_bomb_of_unique_keys_stays_small() -> None:
    (doc,) = load_all(merge_bomb(12), "f.yaml")
    assert doc["m11"] == {"x": 1}


@pytest.mark.parametrize(
    "fragment",
    [
        # A key a merge brings in may be given again: the error is the value's, on its line.
        "  my:defaults: &d {replicas: 2}\n",
        # Values of another Pulumi package's namespace are not kubetrain's to judge.
        "  my:deep: " + "[" * 500 + "]" * 500 + "\n  my:keys: {yes: .nan, 1: !!binary bWw=}\n",
    ],
    ids=["merge-override", "other-namespace"],
)
def test_nothing_else_in_the_file_hides_the_real_error(project: Path, run, fragment: str) -> None:
    text = (TFJOB % "many").replace("config:\n", "config:\n" + fragment, 1)
    if "my:defaults" in fragment:
        text = text.replace("        Worker:\n", "        Worker:\n          <<: *d\n")
    line = text.splitlines().index("          replicas: many") + 1
    result = render(project, run, text)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"stacks/Pulumi.dev.yaml:{line}: config.kubetrain:jobs[0].spec.tfReplicaSpecs.Worker."
        "replicas: Input should be a valid integer, got 'many'"
    ]


# --- one reading: what kubectl reads ----------------------------------------------------------

HEADER = "# Generated by kubetrain from stacks/Pulumi.dev.yaml (TFJob ml/x). Do not edit\n"


@pytest.mark.parametrize(
    ("scalar", "message"),
    [
        ("value: yes", "the value given (a boolean, not shown) is not of type null or string"),
        ("value: 'on'", None),
    ],
)
def test_validate_reads_a_generated_file_as_kubectl_does(
    tmp_path: Path, run, scalar: str, message: str | None
) -> None:
    """A file headed like kubetrain's output is still read as YAML 1.1: ``yes`` is true."""
    from kubetrain.render.yamlout import read_generated

    text = (
        HEADER
        + "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ml\nspec:\n  containers:\n"
        + f"  - name: c\n    image: i\n    ports:\n    - containerPort: 010\n    env:\n    - name: A\n      {scalar}\n"
    )
    (tmp_path / "pod.yaml").write_text(text)
    result = run("validate", "pod.yaml", "--output", "json", cwd=tmp_path)
    report = json.loads(result.stdout)
    errors = [e["msg"] for r in report["resources"] for e in r.get("validationErrors", [])]
    if message is None:
        assert result.exit_code == 0, errors
    else:
        assert result.exit_code == 1
        assert message in errors, errors
    # 010 is 8 to kubectl, as it is here.
    assert read_generated(text) is None
    (doc,) = load_all(text, "pod.yaml", fast=read_generated)
    assert doc["spec"]["containers"][0]["ports"][0]["containerPort"] == 8


def test_the_fast_reader_answers_only_for_the_writers_own_output() -> None:
    from kubetrain.render.yamlout import read_generated

    rendered = sorted((REPO / "rendered").rglob("*.yaml"))
    assert rendered
    for path in rendered:
        text = path.read_text(encoding="utf-8")
        fast = read_generated(text)
        assert fast is not None, path
        assert fast == [yaml.load(text, Loader=yaml.SafeLoader)]
        # One changed scalar (a hand edit) and the fast reader steps aside.
        edited = text.replace("kind: ", "kind:  ", 1)
        assert read_generated(edited) is None


def _readable(c: str) -> bool:
    from kubetrain.models.source import UNREADABLE

    return UNREADABLE.match(c) is None


READABLE = st.characters(exclude_categories=("Cs",)).filter(_readable)
PLAIN = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(READABLE, max_size=12)
    | st.sampled_from(["yes", "off", "010", "0x1F", "1_000", "1:20", ".inf", "~", "2001-12-14"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(READABLE, max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=st.dictionaries(st.text(READABLE, min_size=1, max_size=6), PLAIN, min_size=1, max_size=4)
)
def test_the_fast_reader_gives_pyyamls_values_or_nothing(value: dict[str, Any]) -> None:
    from kubetrain.render.yamlout import read_generated

    text = HEADER + dump(value)
    fast = read_generated(text)
    slow = load_all(text, "f.yaml")
    assert fast is None or fast == slow
    assert slow == [value]


#: Values of every kind the writer can write, the ones the value rules refuse included:
#: unreadable characters, integers past int64, infinities and NaN.
ANY_VALUE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats()
    | st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
    | st.sampled_from(
        ["\x7f", "\x85", "\x9f", "\ufffe", "\uffff", 2**63, -(2**63) - 1, math.inf, math.nan]
    ),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=st.dictionaries(st.text(min_size=1, max_size=6), ANY_VALUE, min_size=1, max_size=4))
@example(value={"a": math.inf})
@example(value={"a": [-math.inf]})
@example(value={"a": {"b": math.nan}})
@example(value={"a": "x\x7fy"})
@example(value={"a": "\uffff"})
@example(value={"a": 2**63})
def test_the_fast_reader_never_answers_for_what_the_value_rules_refuse(
    value: dict[str, Any],
) -> None:
    """The fast reader checks the rules on the writer's text, not value by value: whatever
    value_problems refuses must make it step aside, so PyYAML's reading reports it."""
    from kubetrain.models.source import value_problems
    from kubetrain.render.yamlout import read_generated

    try:
        text = HEADER + dump(value)
    except ValueError:  # a lone surrogate has no UTF-8 form: the writer refuses it
        return
    fast = read_generated(text)
    if value_problems(value):
        assert fast is None
    else:
        assert fast is None or fast == [value]


def test_kustomize_cannot_read_exactly_the_characters_kubetrain_refuses(tmp_path: Path) -> None:
    """The oracle is kubectl's own kustomize: a ConfigMap value holding the character, written
    escaped as kubetrain's writer would, builds or fails."""
    from kubetrain.models.source import UNREADABLE

    kubectl = shutil.which("kubectl") or str(Path(REPO / ".venv/bin/kubectl"))
    samples = [0x01, 0x1B, 0x7E, 0x7F, 0x84, 0x85, 0x86, 0x9F, 0xA0, 0xFEFF, 0xFFFD, 0xFFFE, 0xFFFF]
    verdicts = {}
    for code in samples:
        folder = tmp_path / f"c{code:x}"
        folder.mkdir()
        cm = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "x"},
            "data": {"a": chr(code)},
        }
        (folder / "cm.yaml").write_text(dump(cm), encoding="utf-8")
        (folder / "kustomization.yaml").write_text("resources:\n- cm.yaml\n")
        done = subprocess.run([kubectl, "kustomize", str(folder)], capture_output=True, timeout=60)
        verdicts[code] = done.returncode == 0
    assert len(verdicts) == len(samples)
    assert verdicts == {code: UNREADABLE.match(chr(code)) is None for code in samples}


@needs_upstream_crds
def test_depth_limit_matches_what_documents_need() -> None:
    """The deepest upstream CRD nests under 40 levels; the limit leaves room."""
    from kubetrain.models.limits import MAX_DEPTH

    deepest = 0
    for path in (REPO.parent / "shared" / "crds").rglob("*.yaml"):
        for doc in parse_documents(path.read_text(encoding="utf-8"), str(path)):
            stack: list[tuple[Any, int]] = [(doc.data, 0)]
            while stack:
                value, depth = stack.pop()
                deepest = max(deepest, depth)
                if isinstance(value, dict):
                    stack += [(v, depth + 1) for v in value.values()]
                elif isinstance(value, list):
                    stack += [(v, depth + 1) for v in value]
    assert 20 < deepest < MAX_DEPTH / 2


def test_problems_in_one_job_file_name_their_line(project: Path, run) -> None:
    (project / "stacks" / "jobs").mkdir()
    (project / "stacks" / "jobs" / "a.yaml").write_text(
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: a\n  labels: {on: x}\n"
    )
    result = render(project, run, "config:\n  kubetrain:jobFiles: ['stacks/jobs/*.yaml']\n")
    assert result.exit_code == 2
    assert (
        "stacks/jobs/a.yaml:5: metadata.labels: a key must be a string, not the boolean true"
        in result.stderr
    )


def test_load_all_and_parse_documents_agree_on_errors() -> None:
    for text in ("a: {b: .nan}\n", "a: &x [*x]\n", "a: !!binary YQ==\n", "{1: 2}\n"):
        with pytest.raises(InputError) as fast:
            load_all(text, "f.yaml")
        with pytest.raises(InputError) as slow:
            parse_documents(text, "f.yaml")
        assert str(fast.value) == str(slow.value)


ANY = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**64), 2**64)
    | st.floats()
    | st.text(max_size=4)
    | st.sampled_from(["\x7f", "\ufffe", "ok"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=3) | st.integers() | st.booleans(), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(
    config=st.dictionaries(
        st.sampled_from(["kubetrain:jobs", "kubetrain:mode", "aws:region", "x", 1]), ANY, max_size=4
    ),
    deep=st.integers(0, 105),
)
def test_the_quick_pass_and_the_full_rules_agree(config: dict, deep: int) -> None:
    """The quick pass (no paths kept) answers exactly when the full rules find nothing, with
    and without another package's values to skip."""
    from kubetrain.models.source import foreign_config, is_plain_data, value_problems

    nested: Any = "x"
    for _ in range(deep):
        nested = [nested]
    for doc in ({"config": config}, {"config": {**config, "kubetrain:jobs": nested}}):
        for skip in (None, foreign_config):
            assert is_plain_data(doc, skip) == (not value_problems(doc, skip=skip))


# Pieces of YAML a hostile text is made of: tags (explicit ones on texts not of their type),
# anchors and aliases, merges, indicators, directives, keywords go-yaml and PyYAML part on.
_PIECES = [
    "y", "<<", "=", "~", "0o17", "1e3", "-.5", "08", "1:20", ".inf", "!!int", "!!float",
    "!!bool", "!!null", "!!str", "!!binary", "!!set", "!!omap", "!!pairs", "!!timestamp",
    "!!merge", "!!seq", "!!map", "!x", "!!python/name:os.system", "2001-01-01", "&a", "*a",
    "&a [*a]", "<<: *a", "{<<: [*a, *b]}", "?", "-", ":", "{", "}", "[", "]", ",", "#", "|",
    ">", "'x'", '"y"', "0x", "9" * 30, "key", "\n", "\n  ", "\n- ", "%YAML 1.1\n---", "---\n",
    "...\n", "\t", '"\\ud800"', "\ufeff",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@example([("!!timestamp", " "), ("key", "")])
@example([("a", ": "), ("!!int", " "), ("0x", "")])
@given(
    st.lists(
        st.tuples(st.sampled_from(_PIECES), st.sampled_from([" ", ": ", "\n", "", ", "])),
        min_size=1,
        max_size=14,
    )
)
def test_any_text_ends_in_values_or_an_input_error(pieces: list[tuple[str, str]]) -> None:
    """Whatever the text, reading it gives documents or an InputError with a line, never
    another exception (``!!timestamp hello`` was an AttributeError inside PyYAML)."""
    text = "".join(a + b for a, b in pieces)
    for read in (load_all, parse_documents):
        try:
            read(text, "f.yaml")
        except InputError as exc:
            assert all(p.file == "f.yaml" for p in exc.problems)
