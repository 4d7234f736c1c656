"""Writes scalars.jsonl: what go-yaml v2.4.0 (the decoder kubectl reads manifests with, through
sigs.k8s.io/yaml) makes of each candidate plain scalar, as ``"v: <scalar>"`` into an untyped
value. tests/test_yaml_scalars.py holds kubetrain's reading (kubetrain/models/scalars.py) to it.

Needs Go and go-yaml v2.4.0's source; on Debian 12::

    apt-get install golang-go golang-gopkg-yaml.v2-dev
    GOPATH=/usr/share/gocode GO111MODULE=off go build -o /tmp/goyaml main.go
    python make_fixture.py /tmp/goyaml

The candidates are generated (no randomness: the same list every time): YAML's keywords in
every case variant, and numbers built from signs, base prefixes, digits, underscores, dots and
exponents, plus the texts where go-yaml and PyYAML are known to part.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _case_variants(word: str) -> set[str]:
    return {"".join(c) for c in itertools.product(*({ch.lower(), ch.upper()} for ch in word))}


def candidates() -> list[str]:
    out: set[str] = set()
    for word in ("y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf"):
        out |= _case_variants(word)
    for word in ("inf", "nan"):
        for variant in _case_variants(word):
            out |= {f".{variant}", f"+.{variant}", f"-.{variant}"}
    out |= {"~", "=", "<<", "1:20", "1:20.5", "-1:20", "190:20:30", "2001-12-14", "2001-1-2",
            "2001-12-14t21:59:43.10-05:00", "0x1p3", "_1", "1_", "+", ".", "..", "1.2.3",
            "10.0.0.1", "1e999", "-1e999", ".5e999", "1e-999", "99999999999999999999",
            "18446744073709551615", "18446744073709551616", "9223372036854775807",
            "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
            "0xFFFFFFFFFFFFFFFF", "0x10000000000000000", "0b-1", "0b+1", "-0b-1", "-0b1",
            "0b" + "1" * 64, "0b" + "1" * 65, "+0b" + "1" * 64, "500m", "1Gi", "1.5Gi", "v1",
            "1.15", "3_0", " 3", "0.", "-0", "+0", "00", "0_0", "09", "0_9", "1__0"}  # fmt: skip
    # Long texts: past 64 bits in every base, and past Python's 4,300-digit int() limit.
    out |= {"9" * 5000, "0" * 5000 + "1", "0b" + "1" * 5000, "0x" + "f" * 5000, "0o" + "7" * 5000,
            "-0b" + "1" * 99, "0b" + "0" * 200 + "1", "1." + "1" * 5000 + "e5", "1" * 400}  # fmt: skip
    digits = ["0", "7", "8", "17", "08", "010", "1f", "1F", "101", "12"]
    prefixes = ["", "0x", "0X", "0o", "0O", "0b", "0B", "0"]
    for sign, prefix, body in itertools.product(["", "+", "-"], prefixes, digits):
        out.add(sign + prefix + body)
        out.add(sign + prefix + "_" + body)
        out.add(sign + prefix + body[:1] + "_" + body[1:])
    mantissas = ["1", "01", "1.", "1.5", ".5", "0.5", "1_0.5", "1.5_0", "._5", ".5_"]
    exponents = ["", "e3", "E3", "e+3", "e-3", "E+03", "e", "e+", "e3_0", "e_3"]
    for sign, mantissa, exponent in itertools.product(["", "+", "-"], mantissas, exponents):
        out.add(sign + mantissa + exponent)
    return sorted(out)


def main(binary: str) -> None:
    texts = candidates()
    result = subprocess.run(
        [binary], input="\n".join(texts) + "\n", capture_output=True, text=True, check=True
    )
    lines = result.stdout.splitlines()
    assert len(lines) == len(texts)
    with open(HERE / "scalars.jsonl", "w", encoding="utf-8") as f:
        for text, line in zip(texts, lines, strict=True):
            record = json.loads(line)
            if "error" in record:  # not a scalar in that place ("- 1"): nothing to compare
                continue
            f.write(json.dumps({"text": text, **record}, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
