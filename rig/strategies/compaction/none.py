"""`none`: no cleaner runs; compacted topics grow like any other."""

from __future__ import annotations

from typing import ClassVar

from rig.strategies.compaction.base import CleanerSettings, CleanPass, CompactedLog, LogToClean


class NoCompaction:
    name: ClassVar[str] = "none"
    description: ClassVar[str] = "No log cleaner: compacted topics are never cleaned"

    def select(self, logs: list[CompactedLog], now_ms: float) -> LogToClean | None:
        return None

    def clean(self, chosen: LogToClean, settings: CleanerSettings, now_ms: float) -> CleanPass:
        raise RuntimeError("the none compaction strategy selects no log, so it cleans none")
