"""Container image references, parsed as the kubelet parses them before a pull.

The API server takes any non-empty string as a container's ``image``; the kubelet parses it with
``reference.ParseNormalizedNamed`` (github.com/distribution/reference, ``normalize.go``, with the
grammar of ``regexp.go`` and ``reference.go``) and fails the pod with ``InvalidImageName`` when it
cannot. This module mirrors that grammar:

    reference  := name [ ":" tag ] [ "@" digest ]
    name       := [ domain "/" ] path-component [ "/" path-component ]*
    domain     := host [ ":" port ]          (a DNS name, an IPv4 address or a bracketed IPv6)
    path-component := [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
    tag        := [\\w][\\w.-]{0,127}
    digest     := algorithm ":" hex          (sha256, sha384 or sha512, lower-case hex of its
                                             length: go-digest v1.0.0 validates it)

with the name at most 255 characters, lower case in its path (``repository name must be
lowercase``), and not a 64-digit hexadecimal string (an image id, not a name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["ImageReference", "parse_image"]

_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_PATH_COMPONENT = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_IPV6 = r"\[(?:[a-fA-F0-9:]+)\]"
_DOMAIN_NAME = rf"{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*"
_HOST = rf"(?:{_DOMAIN_NAME}|{_IPV6})"
_DOMAIN = rf"{_HOST}(?::[0-9]+)?"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_NAME = rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_REFERENCE = re.compile(rf"({_NAME})(?::({_TAG}))?(?:@({_DIGEST}))?")
_ANY_CASE = re.compile(
    rf"((?:{_DOMAIN}/)?[a-zA-Z0-9._/-]+)(?::({_TAG}))?(?:@({_DIGEST}))?", re.IGNORECASE
)
_IMAGE_ID = re.compile(r"[a-f0-9]{64}")
NAME_TOTAL_LENGTH_MAX = 255
#: Longer than any valid reference: a name, a tag and a sha512 digest, with room to spare.
MAX_REFERENCE = 1024
#: Image references parse_image remembers (each at most MAX_REFERENCE characters).
IMAGES_REMEMBERED = 1024


@dataclass(frozen=True)
class ImageReference:
    """A parsed image reference."""

    name: str
    tag: str | None
    digest: str | None

    @property
    def pinned(self) -> bool:
        """Whether it names one image for good: a digest, or a tag other than ``latest``."""
        return self.digest is not None or (self.tag is not None and self.tag != "latest")


def parse_image(text: str) -> ImageReference | str:
    """The reference ``text`` names, or why the kubelet cannot parse it (the message of
    ``ParseNormalizedNamed``, with what it means)."""
    if len(text) > MAX_REFERENCE:
        # No reference is that long (a name of 255, a tag of 128, a digest): and the pattern
        # is never run on a text without bound.
        return f"invalid reference format: longer than {MAX_REFERENCE} characters"
    return _parse_image(text)


@lru_cache(maxsize=IMAGES_REMEMBERED)
def _parse_image(text: str) -> ImageReference | str:
    """:func:`parse_image` of a text of at most :data:`MAX_REFERENCE` characters, remembered:
    a stack's pods name the same few images thousands of times."""
    if not text:
        return "repository name must have at least one component"
    if text != text.strip() or any(c.isspace() for c in text):
        return "invalid reference format: an image reference has no spaces"
    if _IMAGE_ID.fullmatch(text):
        return (
            "invalid repository name: cannot specify a 64-byte hexadecimal string (an image id, "
            "not a name)"
        )
    match = _REFERENCE.fullmatch(text)
    if match is None:
        loose = _ANY_CASE.fullmatch(text)
        if loose is not None and loose[1] != loose[1].lower():
            return "invalid reference format: repository name must be lowercase"
        return (
            "invalid reference format: expected [registry/]path[:tag][@digest], the path of "
            "lower-case letters, digits and single separators (. _ __ -)"
        )
    name, tag, digest = match[1], match[2], match[3]
    if _remote_name(text) != _remote_name(text).lower():
        # ParseNormalizedNamed reads the repository as everything before the first ':' of
        # what follows the registry, so an upper-case digest algorithm right after the name
        # (busybox@SHA256:...) is an upper-case name.
        return "invalid reference format: repository name must be lowercase"
    if len(name) > NAME_TOTAL_LENGTH_MAX:
        return f"repository name must not be more than {NAME_TOTAL_LENGTH_MAX} characters"
    if digest is not None and (problem := _digest_problem(digest)):
        return problem
    return ImageReference(name, tag, digest)


#: The digest algorithms the kubelet can verify (go-digest v1.0.0 ``Algorithm.Available``:
#: those whose hash is linked in, crypto/sha256 and crypto/sha512) and their hex lengths.
_ALGORITHMS = {"sha256": 64, "sha384": 96, "sha512": 128}
_HEX = re.compile(r"[a-f0-9]+")
#: go-digest v1.0.0 ``DigestRegexp``: a well-formed digest of an algorithm it does not know.
_WELL_FORMED = re.compile(r"[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+")


def _digest_problem(digest: str) -> str | None:
    """go-digest v1.0.0 ``Digest.Validate`` (``Parse`` in distribution/reference v0.6.0
    ``Parse``): a known algorithm with exactly its length of lower-case hex."""
    algorithm, _, encoded = digest.partition(":")
    length = _ALGORITHMS.get(algorithm)
    if length is None:
        if not _WELL_FORMED.fullmatch(digest):
            return f"invalid checksum digest format: {_DIGEST_HINT}"
        return f"unsupported digest algorithm {algorithm!r}: {_DIGEST_HINT}"
    if len(encoded) != length:
        return (
            f"invalid checksum digest length: {algorithm} has {length} hex digits, got "
            f"{len(encoded)}"
        )
    if not _HEX.fullmatch(encoded):
        return f"invalid checksum digest format: {algorithm} is {length} lower-case hex digits"
    return None


_DIGEST_HINT = "the kubelet verifies sha256, sha384 and sha512 digests, in lower-case hex"


def _remote_name(text: str) -> str:
    """distribution/reference v0.6.0 ``ParseNormalizedNamed``'s ``remoteName``: what follows
    the registry (``splitDockerDomain``), up to its first ':'."""
    slash = text.find("/")
    first = text[:slash]
    if slash < 0 or (
        not any(c in first for c in ".:") and first != "localhost" and first.lower() == first
    ):
        remainder = text
    else:
        remainder = text[slash + 1 :]
    return remainder.partition(":")[0]
