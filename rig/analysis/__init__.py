"""Analysis stage: PySpark jobs that turn a run's event log into metric tables and a summary.

pyspark is imported lazily inside the functions, so `import rig.analysis` never starts Spark.
"""

from __future__ import annotations

from rig.analysis.fetch_metrics import analyze_run

__all__ = ["analyze_run"]
