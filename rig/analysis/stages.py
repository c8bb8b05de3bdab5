"""The analysis jobs a run goes through after the fetch metrics, in order.

Each stage is `module:function`, called as `function(run_dir, spark_master=...)`. It writes its
tables under RUN_DIR/metrics/ and may return `{"variants": {name: {key: value}}}`, which the
pipeline merges into summary.json's `variants.<name>`. Stages are imported only when a run is
analysed, so `import rig` never starts Spark. A new analysis adds one line here.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Any

STAGES: tuple[str, ...] = (
    "rig.analysis.replication:analyze_replication",
    "rig.analysis.produce_timeline:analyze_produce_timeline",
    "rig.analysis.sessions:analyze_sessions",
    "rig.analysis.isr:analyze_isr",
    "rig.analysis.consumer_lag:analyze_consumer_lag",
    "rig.analysis.storage:analyze_storage",
)


def run_stages(run_dir: Path, *, spark_master: str | None = None) -> dict[str, dict[str, Any]]:
    """Run every stage on `run_dir`; return what they add to each variant's summary entry."""
    merged: dict[str, dict[str, Any]] = {}
    for stage in STAGES:
        module, _, function = stage.partition(":")
        result = getattr(import_module(module), function)(run_dir, spark_master=spark_master)
        if isinstance(result, dict):
            for name, extra in (result.get("variants") or {}).items():
                merged.setdefault(name, {}).update(extra)
    return merged
