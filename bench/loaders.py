"""Why ``kubetrain validate`` reads its own rendered files with yaml-rs.

    python bench/loaders.py [--objects N]

Renders N objects with kubetrain's writer and loads every document back with (a) PyYAML's
libyaml loader (``CSafeLoader``; construction is Python), (b) yaml-rs, checking that both give
the same values. kubetrain's writer quotes every scalar that YAML 1.1 and 1.2 could read
differently, so the faster YAML 1.2 parser is safe on these files, and only on these:
``kubetrain.render.yamlout.read_generated`` uses it only when the writer, given the values
yaml-rs read, writes back exactly the file's text.
"""

from __future__ import annotations

import argparse
import time

import yaml
import yaml_rs

from kubetrain.render import dump


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=6000)
    args = parser.parse_args()
    from validators import sample_objects

    texts = [dump(o) for o in sample_objects(args.objects)]
    start = time.perf_counter()
    a = [yaml.load(t, Loader=yaml.CSafeLoader) for t in texts]
    c_rate = len(texts) / (time.perf_counter() - start)
    start = time.perf_counter()
    b = [yaml_rs.loads(t, parse_datetime=False) for t in texts]
    rs_rate = len(texts) / (time.perf_counter() - start)
    assert a == b
    print(f"{len(texts)} rendered objects loaded back (values identical)")
    print(f"  PyYAML CSafeLoader: {c_rate:>8.0f} objects/s")
    print(f"  yaml-rs:            {rs_rate:>8.0f} objects/s  ({rs_rate / c_rate:.1f}x)")


if __name__ == "__main__":
    main()
