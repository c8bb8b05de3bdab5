"""A run's analysis: the event logs parsed once into a columnar table, then the stages, side by
side on a few threads (what they add to summary.json merged in their order).

A stage is a small object (`Stage`): its name, the event fields it reads (a Spark schema), the
metric tables it writes under RUN_DIR/metrics/, and `run`, which computes them from an
`Analysis` and returns what it adds to each variant's summary entry. The fields every stage
declares make the columns of RUN_DIR/analysis/events.parquet, written once per analysis
(rig.analysis.columnar); a stage reads it through `Analysis.events` (a Spark DataFrame) or, for
the few events it walks in Python, `Analysis.rare` (read by the driver, no Spark job), never the
JSON lines. A new metric is one new stage named in STAGES. Stages are imported only when a run
is analysed, so `import rig` never starts Spark.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rig import rundir
from rig.analysis.columnar import ParsedLogs, column_name, parse_event_logs
from rig.analysis.side_by_side import STAGE_THREADS, VariantEntries, run_side_by_side

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = ["STAGES", "STAGE_THREADS", "Analysis", "FunctionStage", "Stage", "Timings", "analyse",
           "load_stages", "run_stage", "run_stages"]

# In order: the summary keys of a variant come in the order the stages add them.
STAGES: tuple[str, ...] = (
    "rig.analysis.fetch_metrics:STAGE",
    "rig.analysis.replication:STAGE",
    "rig.analysis.produce_timeline:STAGE",
    "rig.analysis.sessions:STAGE",
    "rig.analysis.isr:STAGE",
    "rig.analysis.consumer_lag:STAGE",
    "rig.analysis.storage:STAGE",
    "rig.analysis.lost_records:STAGE",
    "rig.analysis.traffic:STAGE",
)


class Stage(Protocol):
    """One analysis job over the event table: reads `reads()`, writes `writes`."""

    @property
    def name(self) -> str: ...

    @property
    def writes(self) -> tuple[str, ...]:
        """The metric tables (rig.rundir.METRIC_TABLES) it writes, each on every run."""
        ...

    def reads(self) -> StructType:
        """The event fields it reads, with their types (a field an event lacks is null)."""
        ...

    def run(self, analysis: Analysis) -> VariantEntries:
        """Write its tables; return what it adds to each variant's summary entry."""
        ...


@dataclass(frozen=True)
class FunctionStage:
    """A Stage made of two functions: the schema it reads, and the job."""

    name: str
    writes: tuple[str, ...]
    schema: Callable[[], StructType]
    job: Callable[[Analysis], VariantEntries]

    def reads(self) -> StructType:
        return self.schema()

    def run(self, analysis: Analysis) -> VariantEntries:
        return self.job(analysis)


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
        from pyspark.sql import functions as F

        return self.open_table().select(*(F.col(column).alias(name)
                                          for column, name in self._columns(schema)))

    def open_table(self) -> DataFrame:
        """The whole event table as one DataFrame, read once; every stage selects from it.
        The analysis opens it before its stages run side by side, so none of them races to."""
        assert self.parsed is not None
        self._table_kinds()
        if self._table is None:
            from rig.analysis.events import hadoop_path

            self._table = self.spark().read.parquet(hadoop_path(self.parsed.table))
        return self._table

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
             fields: Sequence[str] = ()) -> list[dict[str, Any]]:
        """The rows of the few `events` named (cluster changes, faults, samples: never the
        fetches or produces that make a log big) with the fields of `schema` (or those of
        them named in `fields`, in that order), in the table's order (the logs' order), as
        dicts; none when the run has no event logs.

        Read here, on the driver, straight from the table's file: a stage that walks a handful
        of events in Python needs no Spark job for them (issue 19). The values are the table's,
        as Spark would collect them; the driver wrote the file, so it can always read it."""
        if self.parsed is None:
            return []
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        picked = self._columns(schema)
        if fields:
            named = dict((name, column) for column, name in picked)
            picked = [(named[name], name) for name in fields]
        wanted = pa.array(sorted(set(events)), pa.string())
        columns = sorted({column for column, _ in picked} | {"event"})
        found = []
        for batch in pq.ParquetFile(self.parsed.table).iter_batches(columns=columns):
            chosen = batch.filter(pc.fill_null(pc.is_in(batch.column("event"), wanted), False))
            if chosen.num_rows:
                found.append(pa.Table.from_batches([chosen]).select(
                    [column for column, _ in picked]).rename_columns(
                    [name for _, name in picked]))
        if not found:
            return []
        rows: list[dict[str, Any]] = pa.concat_tables(found).to_pylist()
        return rows


def load_stages(names: Sequence[str] = STAGES) -> list[Stage]:
    """The stages named `module:attribute`, imported now."""
    found = []
    for spec in names:
        module, _, attribute = spec.partition(":")
        found.append(getattr(import_module(module), attribute))
    return found


def _fields(stages: Sequence[Stage]) -> set[tuple[str, str]]:
    return {(f.name, f.dataType.simpleString()) for stage in stages for f in stage.reads().fields}


def prepare(run_dir: Path, stages: Sequence[Stage], *,
            spark_master: str | None = None) -> Analysis:
    """Read run.json and parse the event logs once into RUN_DIR/analysis/events.parquet (always
    parsed afresh: the logs are the record, the table only their faster form). Spark starts on
    another thread meanwhile, unless it is starting already; `prepare` returns with it running
    (or its start failed, which the first stage to use it reports). Without event logs nothing
    is parsed and Spark not started.
    """
    from rig.analysis.spark import claim_start_seconds, start_in_background

    run_dir = Path(run_dir)
    analysis = Analysis(run_dir=run_dir, spark_master=spark_master, run=rundir.read_run(run_dir))
    files = rundir.event_logs(run_dir)
    if not files:
        return analysis
    booting = start_in_background(spark_master)  # or `rig run` started it before simulating
    started = time.perf_counter()
    try:
        analysis.parsed = parse_event_logs(files, _fields(stages),
                                           rundir.event_table_path(run_dir))
    finally:
        analysis.timings.parse = time.perf_counter() - started
        booting.join()
    # The start-up this analysis waited for (or that ran beside the simulation); 0 for a
    # session an earlier analysis of this process started.
    analysis.timings.spark_start = claim_start_seconds() or 0.0
    return analysis


@contextlib.contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Python's cycle collector off for the block (back on after, if it was on).

    An analysis builds hundreds of thousands of small rows (dicts, lists) that live until its
    end and form no cycles; every full collection walks all of them again. On the idle 100k
    hour (100,000 partition.assigned rows read twice) the collections took about half of the
    parse and of the ISR walk (issue 19). Reference counting frees the rows as before; any
    cycle made meanwhile is collected once the block ends."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def analyse(run_dir: Path, *, spark_master: str | None = None,
            say: Callable[[str], None] | None = None,
            begin: Callable[[str], None] | None = None,
            stages: Sequence[Stage] | None = None) -> tuple[VariantEntries, Timings]:
    """Parse the logs once, run the stages side by side, write their tables; return the
    variants' summary entries (fetch first, then each stage's keys, as if one by one) and the
    timings. `say` hears one line per step as it ends (the parse, Spark's start-up, each
    stage), `begin` what is running as that changes (a terminal's live line)."""
    with _cyclic_gc_paused():
        return _analyse(run_dir, spark_master=spark_master, say=say, begin=begin, stages=stages)


def _analyse(run_dir: Path, *, spark_master: str | None,
             say: Callable[[str], None] | None, begin: Callable[[str], None] | None,
             stages: Sequence[Stage] | None) -> tuple[VariantEntries, Timings]:
    chosen = list(stages) if stages is not None else load_stages()
    if begin is not None:
        begin("parsing the event logs (Spark starts meanwhile)")
    analysis = prepare(run_dir, chosen, spark_master=spark_master)
    timings = analysis.timings
    if say is not None and analysis.parsed is not None:
        say(f"  parsed {analysis.parsed.lines:,} events in {timings.parse:.2f} s "
            f"(Spark started meanwhile, in {timings.spark_start:.2f} s)")
        for warning in analysis.parsed.warnings():
            say(f"  warning: {warning}")
    if analysis.parsed is not None:
        analysis.open_table()  # before the threads: every stage then shares one table
    began = time.perf_counter()
    merged = run_side_by_side([(stage.name, partial(stage.run, analysis)) for stage in chosen],
                              timings.stages, say=say, begin=begin)
    timings.stages_wall = time.perf_counter() - began
    return merged, timings


def run_stage(stage: Stage, run_dir: Path, *, spark_master: str | None = None) -> dict[str, Any]:
    """One stage on `run_dir` alone (its own parse of the logs): `{"variants": entries}`."""
    analysis = prepare(run_dir, [stage], spark_master=spark_master)
    return {"variants": stage.run(analysis)}


def run_stages(run_dir: Path, *, spark_master: str | None = None) -> VariantEntries:
    """Every stage but the fetch metrics on `run_dir`: what they add to each variant's entry."""
    merged, _ = analyse(run_dir, spark_master=spark_master, stages=load_stages(STAGES[1:]))
    return merged
