"""A run's event logs as Spark reads them: the files, their paths, and the parse options.

Every analysis stage reads the JSON-lines logs through `read_events` with a schema of the
fields it needs; a line that is not JSON, or a field of the wrong type, becomes nulls
(PERMISSIVE) instead of failing the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = ["event_files", "hadoop_path", "read_events"]


def event_files(run_dir: Path) -> list[Path]:
    """RUN_DIR/events/*.jsonl, in name order."""
    return sorted((Path(run_dir) / "events").glob("*.jsonl"))


def hadoop_path(path: Path) -> str:
    """Escape Hadoop glob characters: Spark globs every path it is given."""
    text = str(path.resolve())
    for char in "\\[]{}*?":
        text = text.replace(char, "\\" + char)
    return text


def read_events(spark: SparkSession, files: Sequence[Path], schema: StructType) -> DataFrame:
    """The events of `files` with the columns of `schema`."""
    return (spark.read.schema(schema).option("mode", "PERMISSIVE")
            .json([hadoop_path(f) for f in files]))
