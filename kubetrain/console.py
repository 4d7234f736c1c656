"""The ``kubetrain`` console script: :func:`kubetrain.cli.run`, imported here.

Importing the command (click, pydantic, PyYAML, the models: a tenth of a second or more) is
where Ctrl-C lands when a user interrupts a command that has just started. Here it ends the
process as Ctrl-C does later on: one line, ``kubetrain: interrupted``, exit code 130, never a
traceback. This module imports nothing else, so nothing before the guard can be interrupted
but the interpreter's own start.
"""

import os
import sys

__all__ = ["run"]

EXIT_INTERRUPTED = 130


def run() -> None:
    try:
        from .cli import run as command
    except KeyboardInterrupt:
        interrupted()
    command()


def interrupted() -> None:
    """End the process as an interrupted command ends (nothing of it has run yet)."""
    try:
        sys.stderr.flush()
        os.write(2, b"kubetrain: interrupted\n")
    except (OSError, ValueError):
        pass
    os._exit(EXIT_INTERRUPTED)
