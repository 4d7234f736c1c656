"""Writes patterns.jsonl: what Go's regexp (the Go 1.26 that Kubernetes v1.36 and Kustomize are
built with) makes of each candidate pattern: the error ``regexp.Compile`` gives, or whether it
matches each of a few texts. tests/test_regex.py holds kubetrain's Go regular expressions
(kubetrain/kube/regex.py, RE2 with Go's refusals) to it.

Needs Go (no module beyond the standard library)::

    go build -o /tmp/goregexp .
    python make_fixture.py /tmp/goregexp

The candidates are a fixed list (the same every time): escapes and constructs where RE2,
Python and Go part (``\\C``, lookarounds, backreferences, possessive and nested repetition,
repeat counts around 1000, Unicode classes, flags), each with the same texts.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEXTS = ["", "a", "ab", "aab", "abc", "A", "x-y", "a\nb", "\u00e9", "\u03b1\u03b2", "123", "a" * 40]


def candidates() -> list[str]:
    escapes = [
        "\\C", "\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "\\b", "\\B", "\\A", "\\z", "\\Z", "\\G",
        "\\K", "\\R", "\\h", "\\H", "\\v", "\\V", "\\X", "\\e", "\\a", "\\f", "\\t", "\\n", "\\r",
        "\\0", "\\1", "\\8", "\\07", "\\123", "\\400", "\\x41", "\\x{41}", "\\x{10FFFF}",
        "\\x{110000}", "\\xZZ", "\\pL", "\\PL", "\\p{Greek}", "\\p{Latin}", "\\p{L}", "\\p{^L}",
        "\\P{^L}", "\\p{Nope}", "\\pZ", "\\p{Han}", "\\Q.*\\E", "\\Qab", "\\E", "\\N{LATIN}", "\\k<a>",
        "\\g1", "\\cA", "\\-", "\\.", "\\/", "\\ ", "\\@", "\\_", "\\<", "\\>", "\\y", "\\i",
    ]  # fmt: skip
    out: set[str] = set(escapes)
    for e in escapes:
        out |= {f"a{e}b", f"[{e}]", f"[a{e}]", f"({e})+"}
    out |= {
        "(?=a)", "(?!a)", "(?<=a)", "(?<!a)", "(a)\\1", "(?P<n>a)", "(?<n>a)", "(?'n'a)",
        "(?P=n)", "(?P>n)", "(?i)a", "(?-i)a", "(?i:a)", "(?s).", "(?m)^a$", "(?U)a+", "(?x)a b",
        "(?J)a", "(?#c)", "(?|a|b)", "(?>a)", "(*FAIL)", "a**", "a++", "a?+", "a*?", "a+?", "a{2}+",
        "a{,3}", "a{2,}", "a{2,1}", "a{1000}", "a{1001}", "a{0,1000}", "a{0,1001}", "(a{100}){100}",
        "(a{500}){500}", "((a{100}){100}){100}", "(a{1000}){2}", "[[:alpha:]]", "[[:word:]]",
        "[[:nope:]]", "[[:^digit:]]", "[a-\\d]", "[\\d-z]", "[z-a]", "[]a]", "[^]a]", "[a", "a)",
        "(a", "", "a|", "|", "()", "(?:)", "^*", "$+", "\\", "a\\", "[\\]", "x{2}{3}", ".*",
        "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "(a+)+b", "(?i)\u00e9", "\u00e9+", "\\x{e9}",
        "a{1,2}{3}", "(?i)(?-i:A)a", "[\\p{L}\\d]+", "[^\\x00-\\x{10FFFF}]", "\\pN+", "\\p{Nd}",
    }  # fmt: skip
    out |= {"(" * n + "a" + ")" * n for n in (10, 500, 1000, 1001, 2000)}
    out |= {"a" * n for n in (1000, 10_000)}
    out |= {"|".join(itertools.repeat("ab", n)) for n in (2, 100)}
    return sorted(out)


def main() -> None:
    binary = sys.argv[1]
    lines = "".join(json.dumps({"pattern": p, "texts": TEXTS}) + "\n" for p in candidates())
    done = subprocess.run([binary], input=lines, capture_output=True, text=True, check=True)
    (HERE / "patterns.jsonl").write_text(done.stdout)


if __name__ == "__main__":
    main()
