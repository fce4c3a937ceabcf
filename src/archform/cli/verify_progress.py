"""Progress of `archform verify` on stderr: a live line on a terminal, plain lines otherwise.

On a TTY one line is redrawn (carriage return, erase to end of line) four times a second:
each check with its state and elapsed time, e.g.
`verify 1/4  ansible ok 12.3s  slurm ok 4.1s  pulumi 8.2s...  kubernetes queued`.
Anywhere else (CI logs, pipes) every start and finish is its own line, so logs stay
readable. Finishing removes the live line; the command then prints the results.
"""

from __future__ import annotations

import shutil
import threading
import time
from typing import TextIO

from archform.verify.runner import Event

_WORD = {"passed": "ok", "failed": "FAILED", "skipped": "skipped"}


class Progress:
    """Receives runner events (thread-safe: the runner serialises calls) and draws them."""

    def __init__(self, stream: TextIO, checks: list[str], live: bool) -> None:
        self.stream = stream
        self.checks = checks
        self.live = live
        self.started: dict[str, float] = {}
        self.done: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> Progress:
        if self.live:
            self._ticker = threading.Thread(target=self._tick, name="verify-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if self.live:
            self.stream.write("\r\x1b[K")
            self.stream.flush()

    def __call__(self, event: Event) -> None:
        """Record a start or finish and show it."""
        with self._lock:
            if event.run is None:
                self.started[event.check] = time.perf_counter()
                if not self.live:
                    self.stream.write(f"verify: {event.check} started\n")
            else:
                self.done[event.check] = (event.run.status, event.run.seconds)
                if not self.live:
                    word = _WORD[event.run.status]
                    self.stream.write(
                        f"verify: {event.check} {word} in {event.run.seconds:.1f} s "
                        f"({len(event.run.results)} result(s))\n"
                    )
            if self.live:
                self._draw()
            self.stream.flush()

    def line(self) -> str:
        """The live line for the current state."""
        now = time.perf_counter()
        parts = [f"verify {len(self.done)}/{len(self.checks)}"]
        for name in self.checks:
            if name in self.done:
                status, seconds = self.done[name]
                parts.append(f"{name} {_WORD[status]} {seconds:.1f}s")
            elif name in self.started:
                parts.append(f"{name} {now - self.started[name]:.1f}s...")
            else:
                parts.append(f"{name} queued")
        width = shutil.get_terminal_size((100, 20)).columns - 1
        text = "  ".join(parts)
        return text if len(text) <= width else text[: max(0, width - 3)] + "..."

    def _draw(self) -> None:
        self.stream.write("\r\x1b[K" + self.line())

    def _tick(self) -> None:
        while not self._stop.wait(0.25):
            with self._lock:
                self._draw()
                self.stream.flush()
