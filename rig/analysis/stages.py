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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rig import rundir
from rig.analysis.analysis import Analysis, Timings
from rig.analysis.columnar import parse_event_logs
from rig.analysis.side_by_side import STAGE_THREADS, VariantEntries, run_side_by_side

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

__all__ = ["STAGES", "STAGE_THREADS", "FunctionStage", "Stage", "analyse",
           "load_stages", "run_stage", "run_stages"]

# In order: the summary keys of a variant come in the order the stages add them.
STAGES: tuple[str, ...] = (
    "rig.analysis.fetch_metrics:STAGE",
    "rig.analysis.fetch_refusals:STAGE",
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
    try:
        if analysis.parsed is not None:
            analysis.open_table()  # before the threads: every stage then shares one table
        began = time.perf_counter()
        merged = run_side_by_side([(stage.name, partial(stage.run, analysis))
                                   for stage in chosen], timings.stages, say=say, begin=begin)
        timings.stages_wall = time.perf_counter() - began
    finally:
        analysis.close()
    return merged, timings


def run_stage(stage: Stage, run_dir: Path, *, spark_master: str | None = None) -> dict[str, Any]:
    """One stage on `run_dir` alone (its own parse of the logs): `{"variants": entries}`."""
    analysis = prepare(run_dir, [stage], spark_master=spark_master)
    try:
        return {"variants": stage.run(analysis)}
    finally:
        analysis.close()


def run_stages(run_dir: Path, *, spark_master: str | None = None) -> VariantEntries:
    """Every stage but the fetch metrics on `run_dir`: what they add to each variant's entry."""
    merged, _ = analyse(run_dir, spark_master=spark_master, stages=load_stages(STAGES[1:]))
    return merged
