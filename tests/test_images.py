"""Image references parsed as the kubelet parses them (distribution/reference's grammar, as
ParseNormalizedNamed applies it), and the rules over them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetrain.kube.images import ImageReference, parse_image

SHA = "sha256:" + "a" * 64


@pytest.mark.parametrize(
    ("text", "name", "tag", "digest"),
    [
        ("ubuntu", "ubuntu", None, None),
        ("ubuntu:22.04", "ubuntu", "22.04", None),
        ("docker.io/library/ubuntu:22.04", "docker.io/library/ubuntu", "22.04", None),
        ("localhost:5000/a/b:1", "localhost:5000/a/b", "1", None),
        (
            "Registry.Example.com:443/team/x:v1.2-rc_3",
            "Registry.Example.com:443/team/x",
            "v1.2-rc_3",
            None,
        ),
        (f"gcr.io/proj/img@{SHA}", "gcr.io/proj/img", None, SHA),
        (f"gcr.io/proj/img:1@{SHA}", "gcr.io/proj/img", "1", SHA),
        ("[::1]:5000/x:y", "[::1]:5000/x", "y", None),
        ("a__b/c.d-e--f:T_1", "a__b/c.d-e--f", "T_1", None),
    ],
)
def test_references_the_kubelet_parses(
    text: str, name: str, tag: str | None, digest: str | None
) -> None:
    assert parse_image(text) == ImageReference(name, tag, digest)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("gcr.io/<your_project>/x:latest", "invalid reference format: expected"),
        ("Ubuntu:22.04", "must be lowercase"),
        ("team/My-Image", "must be lowercase"),
        ("busy box", "no spaces"),
        ("x:", "invalid reference format"),
        (":tag", "invalid reference format"),
        ("x@sha256:abc", "invalid reference format"),
        ("a//b", "invalid reference format"),
        ("-a", "invalid reference format"),
        ("a___b", "invalid reference format"),
        ("a" * 64, "64-byte hexadecimal"),
        ("x" * 256, "more than 255 characters"),
        ("x" * 2000, "longer than 1024"),
    ],
)
def test_references_the_kubelet_refuses(text: str, words: str) -> None:
    problem = parse_image(text)
    assert isinstance(problem, str) and words in problem


ALNUM = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)
COMPONENT = st.builds(
    lambda parts, seps: parts[0] + "".join(s + p for s, p in zip(seps, parts[1:], strict=False)),
    st.lists(ALNUM, min_size=1, max_size=4),
    st.lists(st.sampled_from([".", "_", "__", "-", "--"]), min_size=3, max_size=3),
)


@settings(max_examples=200, deadline=None)
@given(
    domain=st.sampled_from(["", "docker.io/", "localhost:5000/", "registry.example.com/"]),
    path=st.lists(COMPONENT, min_size=1, max_size=3),
    tag=st.one_of(st.none(), st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}", fullmatch=True)),
)
def test_every_reference_of_the_grammar_parses(
    domain: str, path: list[str], tag: str | None
) -> None:
    text = domain + "/".join(path) + (f":{tag}" if tag else "")
    parsed = parse_image(text)
    assert isinstance(parsed, ImageReference), (text, parsed)
    assert parsed.tag == tag


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=1500))
def test_any_text_gets_an_answer(text: str) -> None:
    """Every text gets a reference or a reason (the pattern only ever sees texts of at most
    1024 characters, so no input makes it run long)."""
    parsed = parse_image(text)
    assert isinstance(parsed, ImageReference | str)
    if len(text) > 1024:
        assert isinstance(parsed, str) and "longer than 1024" in parsed


# --- the kubelet's own verdicts ---------------------------------------------------------------

ORACLE = Path(__file__).parent / "oracles" / "distribution-reference" / "images.jsonl"
ORACLE_CASES = [json.loads(line) for line in ORACLE.read_text().splitlines()]


def test_the_oracle_holds_digests_of_every_shape() -> None:
    errors = {c.get("error", "").split(":")[0] for c in ORACLE_CASES}
    assert {"unsupported digest algorithm", "invalid checksum digest length"} <= errors
    assert any("@sha512:" in c["image"] and "error" not in c for c in ORACLE_CASES)


@pytest.mark.parametrize("case", ORACLE_CASES, ids=[c["image"][:60] for c in ORACLE_CASES])
def test_parse_image_agrees_with_the_kubelets_parser(case: dict) -> None:
    """tests/oracles/distribution-reference/images.jsonl: what
    reference.ParseNormalizedNamed (distribution/reference v0.6.0, go-digest v1.0.0) makes of
    each reference; kubetrain refuses exactly those, and reads the same tag and digest."""
    got = parse_image(case["image"])
    if "error" in case:
        assert isinstance(got, str), case
        return
    assert not isinstance(got, str), (got, case)
    assert (got.tag, got.digest) == (case.get("tag"), case.get("digest"))


@settings(max_examples=200, deadline=None)
@given(
    algorithm=st.sampled_from(["sha256", "sha384", "sha512", "md5", "sha1", "Sha256", "blake3"]),
    hex_digits=st.text(alphabet="0123456789abcdefABCDEF", min_size=32, max_size=140),
    tagged=st.booleans(),
)
def test_only_a_digest_the_kubelet_can_verify_is_accepted(
    algorithm: str, hex_digits: str, tagged: bool
) -> None:
    """Every digest the grammar admits (an algorithm, 32 or more hex digits) is refused unless
    it is one the kubelet verifies: sha256, sha384 or sha512, in lower-case hex of exactly that
    algorithm's length (go-digest v1.0.0 ``Digest.Validate``)."""
    image = f"registry.example.com/ml/tf{':1' if tagged else ''}@{algorithm}:{hex_digits}"
    lengths = {"sha256": 64, "sha384": 96, "sha512": 128}
    verifiable = lengths.get(algorithm) == len(hex_digits) and hex_digits == hex_digits.lower()
    assert (not isinstance(parse_image(image), str)) == verifiable


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(st.text(max_size=40), min_size=1, max_size=30))
def test_the_parses_remembered_are_bounded_and_change_no_verdict(texts: list[str]) -> None:
    """parse_image remembers at most IMAGES_REMEMBERED texts, none longer than MAX_REFERENCE,
    and a text parsed again gives what it gave the first time."""
    from kubetrain.kube import images

    first = [parse_image(t) for t in texts]
    assert [parse_image(t) for t in texts] == first
    assert [images._parse_image.__wrapped__(t) for t in texts] == first  # the parse itself
    before = images._parse_image.cache_info().currsize
    assert parse_image("a" * (images.MAX_REFERENCE + 1)).endswith("characters")
    assert images._parse_image.cache_info().currsize == before  # a long text is not kept
    assert images._parse_image.cache_info().maxsize == images.IMAGES_REMEMBERED
