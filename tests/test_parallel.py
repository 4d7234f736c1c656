"""The forked paths of render and validate (tests/forked_checks.py), in a process of their own.

kubetrain forks only while no other thread runs; the test processes of this suite keep threads
other tests started (a test server, Pulumi's event loop), so those tests run in a fresh pytest
process here, one core, no plugin that starts threads.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import REPO


def test_the_forked_paths_give_what_one_process_gives() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:xdist",
            str(REPO / "tests" / "forked_checks.py"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    summary = done.stdout.strip().splitlines()[-1]
    passed = re.search(r"(\d+) passed", summary)
    assert passed and int(passed[1]) >= 30, summary
    assert not re.search(r"failed|skipped|error", summary), summary
