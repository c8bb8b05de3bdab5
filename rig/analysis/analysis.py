"""One run directory being analysed (`Analysis`): its run.json, the event table its logs were
parsed into, the Spark session, and where the analysis spent its time (`Timings`). Stages read
the events through it (`Analysis.events`, a Spark DataFrame; `Analysis.rare`, read on the driver),
never the JSON lines.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rig.analysis.columnar import ParsedLogs, column_name

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = ["Analysis", "Timings"]


@dataclass
class Timings:
    """Where an analysis spent its wall time, in seconds (summary.json's `timings`)."""

    spark_start: float = 0.0
    parse: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)  # each stage's own wall time
    stages_wall: float | None = None  # all stages, run side by side (None: never run)

    def as_json(self) -> dict[str, Any]:
        wall = self.stages_wall if self.stages_wall is not None else sum(self.stages.values())
        return {"spark_start_seconds": round(self.spark_start, 3),
                "parse_seconds": round(self.parse, 3),
                "stages": {name: round(s, 3) for name, s in self.stages.items()},
                "analysis_seconds": round(self.parse + wall, 3)}


@dataclass
class Analysis:
    """One run directory being analysed: run.json, the parsed event table, the Spark session.

    `variants` are run.json's, in order; `durations` their declared duration_ms (None when
    unknown). `parsed` is None when the run has no event logs: then no stage starts Spark.
    """

    run_dir: Path
    spark_master: str | None = None
    run: dict[str, Any] = field(default_factory=dict)
    parsed: ParsedLogs | None = None
    timings: Timings = field(default_factory=Timings)
    _spark: SparkSession | None = None
    _table: DataFrame | None = None
    _kinds: dict[str, str] | None = None  # the table's columns and their Spark types
    _view: str | None = None  # the table's name in Spark SQL while it is open

    @property
    def variants(self) -> list[str]:
        return [str(v) for v in (self.run.get("variants") or {})]

    @property
    def durations(self) -> dict[str, Any]:
        declared = self.run.get("variants") or {}
        return {str(v): (info or {}).get("duration_ms") for v, info in declared.items()}

    def spark(self) -> SparkSession:
        """The process's Spark session (prepare started it while it parsed)."""
        if self._spark is None:
            from rig.analysis.spark import get_spark

            self._spark = get_spark(self.spark_master)
        return self._spark

    def logged(self, event: str) -> bool:
        """Whether the event logs hold an event of that name."""
        return self.parsed is not None and self.parsed.names.get(event, 0) > 0

    def events(self, schema: StructType) -> DataFrame | None:
        """The event table with the columns of `schema` (None: the run has no event logs).

        Raises ValueError for a field no stage declared (it is not in the table)."""
        if self.parsed is None:
            return None
        self.open_table()
        # One SQL statement, not a Column per field: each Column is a few py4j round trips
        # (and a Java object to delete later), 40 fields about 160 of them; the statement is
        # one, and Spark analyses its plan once (issue 19).
        picked = ", ".join(f"{_quoted(column)} AS {_quoted(name)}"
                           for column, name in self._columns(schema))
        return self.spark().sql(f"SELECT {picked} FROM {self._view}")

    def open_table(self) -> DataFrame:
        """The whole event table as one DataFrame, read once and named for this analysis (a
        temporary view, dropped by `close`); every stage selects from it. The analysis opens
        it before its stages run side by side, so none of them races to."""
        assert self.parsed is not None
        self._table_kinds()
        if self._table is None:
            from rig.analysis.events import hadoop_path

            table = self.spark().read.parquet(hadoop_path(self.parsed.table))
            view = f"rig_events_{uuid.uuid4().hex}"  # analyses may share one session
            table.createOrReplaceTempView(view)
            self._table, self._view = table, view
        return self._table

    def close(self) -> None:
        """Drop the table's view from the session (the analysis is done with it). Best effort:
        it runs as an analysis ends, failed or not, and a session that died with the analysis
        (its JVM gone) has no view left to drop; its error must not hide the analysis' own."""
        if self._view is not None and self._spark is not None:
            with contextlib.suppress(Exception):
                self._spark.catalog.dropTempView(self._view)
        self._table = self._view = None

    def _table_kinds(self) -> dict[str, str]:
        """The table's columns and their Spark types, from the file's schema (no Spark)."""
        assert self.parsed is not None
        if self._kinds is None:
            import pyarrow.parquet as pq

            from rig.analysis.columnar import spark_kind

            self._kinds = {f.name: spark_kind(f.type)
                           for f in pq.read_schema(self.parsed.table)}
        return self._kinds

    def _columns(self, schema: StructType) -> list[tuple[str, str]]:
        """(the table's column, the field's name) for each field of `schema`."""
        kinds = self._table_kinds()
        picked = []
        for wanted in schema.fields:
            kind = wanted.dataType.simpleString()
            column = next((c for c in (column_name(wanted.name, kind, True), wanted.name)
                           if kinds.get(c) == kind), None)
            if column is None:
                raise ValueError(f"no stage declares the event field {wanted.name} ({kind})")
            picked.append((column, wanted.name))
        return picked

    def rare(self, events: Iterable[str], schema: StructType,
             fields: Sequence[str] = (), present: str | None = None) -> list[dict[str, Any]]:
        """The rows of the few `events` named (cluster changes, faults, samples: never the
        fetches or produces that make a log big, unless `present` names a field that only few
        of them carry: then only the rows where it is set) with the fields of `schema` (or
        those of them named in `fields`, in that order), in the table's order (the logs'
        order), as dicts; none when the run has no event logs.

        Read here, on the driver, straight from the table's file: a stage that walks a handful
        of events in Python needs no Spark job for them (issue 19). The values are the table's,
        as Spark would collect them; the driver wrote the file, so it can always read it."""
        if self.parsed is None:
            return []
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        picked = self._columns(schema)
        named = dict((name, column) for column, name in picked)
        if fields:
            picked = [(named[name], name) for name in fields]
        wanted = pa.array(sorted(set(events)), pa.string())
        needed = named[present] if present is not None else None
        columns = sorted({column for column, _ in picked} | {"event"} | (
            {needed} if needed is not None else set()))
        found = []
        for batch in pq.ParquetFile(self.parsed.table).iter_batches(columns=columns):
            keep = pc.fill_null(pc.is_in(batch.column("event"), wanted), False)
            if needed is not None:
                keep = pc.and_(keep, pc.is_valid(batch.column(needed)))
            chosen = batch.filter(keep)
            if chosen.num_rows:
                found.append(pa.Table.from_batches([chosen]).select(
                    [column for column, _ in picked]).rename_columns(
                    [name for _, name in picked]))
        if not found:
            return []
        rows: list[dict[str, Any]] = pa.concat_tables(found).to_pylist()
        return rows


def _quoted(name: str) -> str:
    """`name` as a Spark SQL identifier, whatever characters it holds."""
    return "`" + name.replace("`", "``") + "`"
