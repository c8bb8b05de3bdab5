"""Progress of `rig run`: stage lines, and on a terminal one live line of simulated time and
events per second. Live updates are off when stderr is not a terminal or under CI; --quiet
silences everything but errors.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

from rig.units import format_duration_ms


class Progress:
    def __init__(self, quiet: bool = False, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.live = not quiet and self.stream.isatty() and not os.environ.get("CI")
        self._label = ""
        self._total_us = 1
        self._started = self._last = time.perf_counter()

    def start(self, label: str, total_us: int) -> None:
        self._label, self._total_us = label, max(1, total_us)
        self._started = self._last = time.perf_counter()

    def update(self, done_us: int, events: int) -> None:
        now = time.perf_counter()
        if not self.live or now - self._last < 0.2:
            return
        self._last = now
        rate = events / max(now - self._started, 1e-9)
        share = 100 * done_us / self._total_us
        self.stream.write(f"\r  {self._label}: {format_duration_ms(done_us // 1000)} of "
                          f"{format_duration_ms(self._total_us // 1000)} simulated "
                          f"({share:4.1f}%), {rate:,.0f} events/s   ")
        self.stream.flush()

    def begin(self, label: str) -> None:
        """On a terminal, show `label` on the live line until the next `say` replaces it."""
        if self.live:
            self.stream.write(f"\r  {label} …   ")
            self.stream.flush()

    def say(self, message: str) -> None:
        if self.quiet:
            return
        if self.live:
            self.stream.write("\r" + " " * 90 + "\r")
        print(message, file=self.stream, flush=True)
