"""Writes images.jsonl: what the kubelet's parser of image references,
``reference.ParseNormalizedNamed`` (github.com/distribution/reference v0.6.0, the digest
validated by github.com/opencontainers/go-digest v1.0.0), makes of each candidate: its error,
or the normalized name, tag and digest. tests/test_images.py holds kubetrain's reading
(kubetrain/kube/images.py) to it.

Needs Go and the modules of go.mod::

    go build -o /tmp/ref .
    python make_fixture.py /tmp/ref

The candidates are a fixed list: names, tags and, above all, digests of every shape (each
algorithm, lengths around the right one, upper case, unknown algorithms).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
HEX = "0123456789abcdef" * 8


def candidates() -> list[str]:
    names = ["busybox", "docker.io/library/busybox", "registry.example.com:5000/ml/tf",
             "localhost/x", "[::1]:5000/x", "Registry.Example.com/x", "UPPER/x", "a" * 300,
             "a__b", "a___b", "a--b", "a.-b", "_a", "x/", "/x", "x//y", "127.0.0.1/x",
             HEX[:64], "x@y", "tf:2.15", "tf:", "tf:" + "t" * 128, "tf:" + "t" * 129, ":tag",
             "tf:2.15:3", "tf:-x", "tf:.x"]  # fmt: skip
    digests = []
    for algorithm, length in itertools.product(
        ["sha256", "sha384", "sha512", "md5", "sha1", "blake3", "SHA256", "sha256+b64u", "x"],
        [32, 40, 63, 64, 65, 96, 128, 129],
    ):
        digests.append(f"{algorithm}:{(HEX * 3)[:length]}")
    digests += [
        "sha256:" + HEX[:64].upper(),
        "sha256:" + HEX[:63] + "G",
        "sha256:" + HEX[:63] + "A",
        "sha256:",
        "sha256",
        ":" + HEX[:64],
        "sha256:" + HEX[:31],
        "sha512:" + HEX[:64],
        "sha256:" + "0" * 64,
    ]
    out = set(names)
    out |= {f"busybox@{d}" for d in digests}
    out |= {f"registry.example.com/ml/tf:2.15@{d}" for d in digests[:20]}
    return sorted(out)


def main() -> None:
    binary = sys.argv[1]
    lines = "".join(json.dumps({"image": c}) + "\n" for c in candidates())
    done = subprocess.run([binary], input=lines, capture_output=True, text=True, check=True)
    (HERE / "images.jsonl").write_text(done.stdout)


if __name__ == "__main__":
    main()
