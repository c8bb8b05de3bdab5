"""Compaction strategies: which compacted log a cleaner thread cleans next, and how a pass
rewrites it."""

from rig.strategies.compaction.base import (
    CleanerSettings,
    CleaningConfig,
    CleanPass,
    CompactedLog,
    CompactionStrategy,
    LogToClean,
)

__all__ = ["CleanPass", "CleanerSettings", "CleaningConfig", "CompactedLog",
           "CompactionStrategy", "LogToClean"]
