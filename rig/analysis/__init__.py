"""Analysis stage: PySpark jobs that turn a run's event log into metric tables and a summary.

pyspark is imported lazily inside the functions, so `import rig.analysis` never starts Spark; the
stages themselves load only when used, so the report can import the bucketing rule
(rig.analysis.buckets) without loading any of them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["analyze_run"]


def __getattr__(name: str) -> Any:
    if name == "analyze_run":
        from rig.analysis.fetch_metrics import analyze_run

        return analyze_run
    raise AttributeError(f"module 'rig.analysis' has no attribute {name!r}")
