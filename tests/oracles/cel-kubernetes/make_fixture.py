"""Writes rules.jsonl: what kube-apiserver's CEL environment for new CRD rules makes of each
candidate rule, per Kubernetes minor version 1.25 to 1.37: the compile error, or none. The
environment is k8s.io/apiserver v0.36.2's (``environment.MustBaseEnvSet`` at the server's
compatibility version, its own minus one; cel-go v0.26.0), with ``self`` and ``oldSelf`` dyn.
tests/test_cel_versions.py holds kubetrain's verdicts (kubetrain/kube/apiextensions/cellibs.py)
to it.

Needs Go and the modules of go.mod (from a module cache or a proxy)::

    go build -o /tmp/celk8s .
    python make_fixture.py /tmp/celk8s

The candidates are a fixed list: each library and extension Kubernetes enables or leaves out,
called on literals (the rules' types and costs are not what is tested here: ``join`` of a literal list,
whose items have no size a schema gives, costs past the budget in a CRD).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

RULES = [
    "self == self",
    "'abc'.charAt(1) == 'b'",
    "'a'.upperAscii() == 'A'",
    "'abc'.matches('[a-z]+')",
    "'a,b'.split(',') == ['a', 'b']",
    "'abc'.indexOf('b') == 1",
    "[1].exists_one(x, x == 1)",
    "[1, 2].all(x, x > 0)",
    "duration('1s') > duration('0s')",
    "timestamp('2020-01-01T00:00:00Z') > timestamp('2019-01-01T00:00:00Z')",
    "url('https://x').getHost() == 'x'",
    "isURL('https://x')",
    "url('https://x:8080/p?q=1').getPort() == '8080'",
    "[1, 2].isSorted()",
    "[1, 2].sum() == 3",
    "[1, 2].max() == 2",
    "[1, 2].indexOf(2) == 1",
    "'abc'.find('b') == 'b'",
    "'abcb'.findAll('b').size() == 2",
    "optional.of(1).hasValue()",
    "optional.none().orValue(1) == 1",
    "quantity('1Gi').isInteger()",
    "isQuantity('1')",
    "quantity('1').add(1).isInteger()",
    "quantity('2').isGreaterThan(quantity('1'))",
    "'abca'.lastIndexOf('a') == 3",
    "'%s'.format(['a']) == 'a'",
    "strings.quote('a') == '\"a\"'",
    "sets.contains([1, 2], [1])",
    "sets.equivalent([1, 2], [2, 1])",
    "sets.intersects([1], [1, 2])",
    "ip('1.2.3.4').family() == 4",
    "isIP('1.1.1.1')",
    "ip.isCanonical('1.1.1.1')",
    "cidr('10.0.0.0/8').containsIP('10.1.2.3')",
    "isCIDR('10.0.0.0/8')",
    "cidr('10.0.0.0/8').prefixLength() == 8",
    "format.dns1123Label().validate('abc').hasValue() == false",
    "format.named('dns1123Label').hasValue()",
    "[1, 2].all(i, v, v > 0)",
    "[1, 2].exists(i, v, i == 0)",
    "[1].existsOne(i, v, v == 1)",
    "[1].exists_one(i, v, v == 1)",
    "[1].transformList(i, v, v * 2) == [2]",
    "{'a': 1}.transformMap(k, v, v + 1) == {'a': 2}",
    "{'a': 1}.transformMapEntry(k, v, {k: v}) == {'a': 1}",
    "semver('1.0.0').major() == 1",
    "isSemver('1.0.0')",
    "semver('1.0.0').isGreaterThan(semver('0.1.0'))",
    "[1, 1].distinct() == [1]",
    "lists.range(3) == [0, 1, 2]",
    "[[1], [2]].flatten() == [1, 2]",
    "[3, 1].sort() == [1, 3]",
    "[1, 2].reverse() == [2, 1]",
    "[1, 2, 3].slice(1, 2) == [2]",
    "'abc'.reverse() == 'cba'",
    "cel.bind(x, 1, x > 0)",
    "authorizer.group('').resource('x').check('get').allowed()",
    "math.greatest(1, 2) == 2",
    "base64.encode(b'a') == 'YQ=='",
    "{'a': 1}.all(k, v, v != 0)",
    "sets.contains(['sets.contains('], ['x']) == false",
]


def main() -> None:
    binary = sys.argv[1]
    lines = "".join(json.dumps({"rule": r}) + "\n" for r in RULES)
    done = subprocess.run([binary], input=lines, capture_output=True, text=True, check=True)
    records = [json.loads(line) for line in done.stdout.splitlines()]
    for record in records:
        record["errors"] = dict(
            sorted(record["errors"].items(), key=lambda kv: int(kv[0].split(".")[1]))
        )
    (HERE / "rules.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


if __name__ == "__main__":
    main()
