"""What stands in for a node agent or a scheduler here: ``tick`` called every 0.3 s on a
thread of its own until stopped, each error kept for the test to read (a stand-in that fails
must fail the test, not the thread)."""

from __future__ import annotations

import threading
from collections.abc import Callable


class Loop:
    def __init__(self, tick: Callable[[], None], name: str, every: float = 0.3):
        self.tick = tick
        self.name = name
        self.every = every
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Loop:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception as exc:  # read by the test through .errors
                self.errors.append(repr(exc))
            self._stop.wait(self.every)
