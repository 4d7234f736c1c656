"""kubetrain's error hierarchy.

Every failure a user can cause is a :class:`KubetrainError`. The CLI maps the two families to the
exit codes of the interface contract: :class:`InputError` (bad input or usage) exits 2,
:class:`CheckFailed` (validation failure or drift) exits 1. Anything else is a bug and keeps its
traceback.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "CheckFailed",
    "InputError",
    "KubetrainError",
    "OwnershipError",
    "Problem",
    "Severity",
    "did_you_mean",
    "format_path",
    "printable",
]

PathPart = str | int
#: ``error``: the input is wrong; ``warning``: a fact about it (fails only under ``--strict``).
Severity = Literal["error", "warning"]

# What a terminal or an XML report must not receive raw: C0 and C1 controls and DEL (escape
# sequences, line breaks that would split one problem over two lines), Unicode line and
# paragraph separators, the bidirectional overrides and isolates (text shown in another order
# than it is), the BOM, noncharacters and lone surrogates (no UTF-8 form: printing them fails).
_UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ufffe\uffff\ud800-\udfff]"
)


def _escape(m: re.Match[str]) -> str:
    code = ord(m[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every character that could reach a terminal or a report as something else
    written as an escape (``\\x1b``, ``\\u202e``); other text is returned unchanged."""
    return _UNPRINTABLE.sub(_escape, text) if _UNPRINTABLE.search(text) else text


def did_you_mean(word: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str:
    """``; did you mean 'x'?`` for the choice closest to ``word``, or ``""`` when none is."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return f"; did you mean {close[0]!r}?" if close else ""


def format_path(path: Sequence[PathPart]) -> str:
    """Render a field path as ``spec.tfReplicaSpecs.Worker.template.spec.containers[0]``.

    Keys that contain a dot (label keys such as ``app.kubernetes.io/name``) are bracket-quoted so
    the path stays unambiguous.
    """
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif "." in part or not part:
            out.append(f'["{part}"]')
        else:
            out.append(f".{part}" if out else part)
    return printable("".join(out)) or "(document)"


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with the input, located as precisely as the input allows.

    A ``warning`` is a fact the user should know (a field rewritten or dropped, a placement
    constraint) rather than a mistake: it is printed as ``FILE:LINE: path: warning: message``
    and fails a command only under ``--strict``.
    """

    file: str
    line: int | None
    path: tuple[PathPart, ...]
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        where = printable(f"{self.file}:{self.line}" if self.line else self.file)
        message = f"warning: {self.message}" if self.severity == "warning" else self.message
        if not self.path:
            return f"{where}: {printable(message)}"
        return f"{where}: {format_path(self.path)}: {printable(message)}"

    def as_error(self) -> Problem:
        """The same problem as an error (``--strict``)."""
        return dataclasses.replace(self, severity="error")


class KubetrainError(Exception):
    """Base class of every error kubetrain raises on purpose."""


class InputError(KubetrainError):
    """The stack file, a job document or a command-line argument is wrong (exit code 2)."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = sorted(set(problems), key=_problem_order)
        super().__init__("\n".join(str(p) for p in self.problems))

    @classmethod
    def single(
        cls, file: str, message: str, *, line: int | None = None, path: Sequence[PathPart] = ()
    ) -> InputError:
        return cls([Problem(file, line, tuple(path), message)])


def _problem_order(p: Problem) -> tuple[str, int, str, str]:
    return (p.file, p.line or 0, format_path(p.path), p.message)


class OwnershipError(InputError):
    """``render`` was asked to replace a folder holding files it did not generate (exit code 2)."""


class CheckFailed(KubetrainError):
    """Validation found problems in the output, or ``diff`` found drift (exit code 1)."""
