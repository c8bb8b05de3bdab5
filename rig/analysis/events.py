"""A run's events as Spark reads them: paths Spark can glob safely, and the fetches in them
whichever way they were logged.

Every analysis stage reads the event table (rig.analysis.columnar, through
rig.analysis.analysis.Analysis.events) with a schema of the fields it needs; a line that is not
JSON, or a field of the wrong type, is nulls there instead of failing the run. A stage that
reads fetches reads them through
`fetch_rows` (or `fetch_runs`), never by the names fetch.request / fetch.response: with
`events: fetch-aggregated` a run of idle rounds is one fetch.idle event standing for many of
them, and every metric must come out the same as from the full log.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rig.events import names

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import StructType

__all__ = [
    "fetch_rows",
    "fetch_runs",
    "hadoop_path",
    "idle_fetch_runs",
    "idle_per_second",
    "occurrences_before",
    "occurrences_between",
    "plain_fetch_rows",
    "spark_sorted",
    "to_arrow",
    "with_fetch_fields",
]

US_PER_MS = 1_000
US_PER_S = 1_000_000

# The ids every fetch event carries (fetch.idle too), in the order fetch_rows returns them.
_IDS = ("variant", "role", "client", "replica_id", "broker", "source", "fetcher", "version",
        "session_id")
# What fetch_runs and fetch_rows read: fetch.request and fetch.response fields, then the run
# fields of fetch.idle (rig/events/names.py). first_session_epoch is not read: the rows have no
# session_epoch column, since one row stands for requests of many epochs.
_FETCH_FIELDS: tuple[tuple[str, str], ...] = (
    ("t_ms", "double"), ("seq", "long"), ("event", "string"), ("variant", "string"),
    ("role", "string"), ("client", "string"), ("replica_id", "long"), ("broker", "long"),
    ("source", "string"),  # a broker id for followers, a client string for consumers
    ("fetcher", "long"), ("version", "long"), ("session_id", "long"), ("full", "boolean"),
    ("partitions", "long"), ("forgotten", "long"), ("error_code", "long"),
    ("records_bytes", "long"), ("waited_ms", "double"), ("body_bytes", "long"),
    ("header_bytes", "long"), ("wire_bytes", "long"),
    ("period_us", "long"),
    ("requests", "long"), ("first_request_us", "long"), ("request_partitions", "long"),
    ("request_body_bytes", "long"), ("request_header_bytes", "long"),
    ("request_wire_bytes", "long"),
    ("responses", "long"), ("first_response_us", "long"), ("response_partitions", "long"),
    ("response_body_bytes", "long"), ("response_header_bytes", "long"),
    ("response_wire_bytes", "long"),
)
# The per-kind columns of a fetch row: (column, the fetch.idle field for its requests, for its
# responses). None: the plain event of that kind has no such field, so the row holds null.
# An idle request forgets nothing (nothing changed), hence 0.
_BY_KIND: tuple[tuple[str, str | int | None, str | None], ...] = (
    ("full", "full", None),
    ("partitions", "request_partitions", "response_partitions"),
    ("forgotten", 0, None),
    ("error_code", None, "error_code"),
    ("records_bytes", None, "records_bytes"),
    ("waited_ms", None, "waited_ms"),
    ("body_bytes", "request_body_bytes", "response_body_bytes"),
    ("header_bytes", "request_header_bytes", "response_header_bytes"),
    ("wire_bytes", "request_wire_bytes", "response_wire_bytes"),
)
# A window bound given in ms is an event's t_ms, a whole µs divided by 1000; t_ms·1000 can miss
# that µs by a rounding error, never by a nanosecond.
_TOLERANCE_US = 0.001


def hadoop_path(path: Path) -> str:
    """Escape Hadoop glob characters: Spark globs every path it is given."""
    text = str(path.resolve())
    for char in "\\[]{}*?":
        text = text.replace(char, "\\" + char)
    return text


def with_fetch_fields(schema: StructType) -> StructType:
    """`schema` plus every field fetch_runs and fetch_rows read that it lacks."""
    from pyspark.sql import types as T

    kinds = {"double": T.DoubleType(), "long": T.LongType(), "string": T.StringType(),
             "boolean": T.BooleanType()}
    have = {field.name: field.dataType for field in schema.fields}
    added = []
    for name, kind in _FETCH_FIELDS:
        if name not in have:
            added.append(T.StructField(name, kinds[kind], nullable=True))
        elif have[name] != kinds[kind]:
            raise ValueError(f"field {name} is {have[name]} in the schema, fetches need {kind}")
    return T.StructType([*schema.fields, *added])


def _floor_div(a: Column, b: Column | int) -> Column:
    """⌊a / b⌋ for longs and b > 0, exact (Spark's `div` truncates towards zero)."""
    from pyspark.sql import functions as F

    b = F.lit(b) if isinstance(b, int) else b
    return F.call_function("div", a - F.pmod(a, b), b)


def occurrences_before(first_us: Column, period_us: Column, count: Column,
                       bound_us: Column) -> Column:
    """How many of `count` occurrences at first_us + i·period_us (i = 0..count-1) fall before
    bound_us: clamp(⌈(bound − first) / period⌉, 0, count), in longs. A run of one occurrence may
    have any period; a longer one has period_us > 0."""
    from pyspark.sql import functions as F

    period = F.greatest(period_us, F.lit(1))
    ceiling = -_floor_div(first_us - bound_us, period)
    return F.least(count, F.greatest(F.lit(0), ceiling))


def fetch_runs(events: DataFrame, only: str | None = None) -> DataFrame:
    """Every fetch of `events` (read with `with_fetch_fields`) as a run of occurrences; with
    `only` (fetch.request or fetch.response), the fetches of that kind.

    A fetch.request or fetch.response is a run of one: `first_us` and `period_us` null, `count`
    1, at its t_ms. A fetch.idle is two runs, its requests (event fetch.request) and its
    responses (fetch.response), each `count` occurrences at first_us + i·period_us, with t_ms
    the first one's; a run of no occurrences is left out. Columns: event, the ids (_IDS), the
    per-kind columns (_BY_KIND), t_ms, seq, first_us, period_us, count.
    """
    from pyspark.sql import functions as F

    event = F.col("event")
    idle = event == names.FETCH_IDLE
    wanted = (names.FETCH_REQUEST, names.FETCH_RESPONSE) if only is None else (only,)
    fetches = events.where(event.isin(*wanted, names.FETCH_IDLE))
    kinds = F.when(idle, F.array(*(F.lit(kind) for kind in wanted)))
    # A name no stage's schema uses (replication's events have a `kind`, the fault's).
    runs = fetches.select("*", F.explode(kinds.otherwise(F.array(event))).alias("_fetch_kind"))
    request = F.col("_fetch_kind") == names.FETCH_REQUEST

    def per_kind(column: str, for_requests: str | int | None,
                 for_responses: str | None) -> Column:
        def field(name: str | int | None) -> Column:
            return F.lit(name) if not isinstance(name, str) else F.col(name)

        picked = F.when(request, field(for_requests)).otherwise(field(for_responses))
        return F.when(idle, picked).otherwise(F.col(column)).alias(column)

    first_us = F.when(idle, F.when(request, F.col("first_request_us"))
                      .otherwise(F.col("first_response_us")))
    count = F.when(idle, F.when(request, F.col("requests")).otherwise(F.col("responses")))
    return runs.select(
        F.col("_fetch_kind").alias("event"),
        *_IDS,
        *(per_kind(*spec) for spec in _BY_KIND),
        F.when(idle, first_us / US_PER_MS).otherwise(F.col("t_ms")).alias("t_ms"),
        "seq",
        first_us.alias("first_us"),
        F.when(idle, F.col("period_us")).alias("period_us"),
        F.when(idle, count).otherwise(F.lit(1).cast("long")).alias("count"),
    ).where(F.col("count") > 0)


def fetch_rows(events: DataFrame, only: str | None = None) -> DataFrame:
    """The fetches of `events` (read with `with_fetch_fields`) per second, weighted; with
    `only` (fetch.request or fetch.response), the fetches of that kind.

    A fetch.request or fetch.response is one row, n = 1, second = ⌊t_ms / 1000⌋. A fetch.idle
    becomes at most one row per (kind, second) its occurrences span, n = how many fall in that
    second (µs // 1_000_000, the same second as the plain event's), t_ms the first of them;
    seconds it skips (a period over 1 s) have no row. Summing n over any grouping gives the
    counts the full log gives; one scan of the log, no row per round. Columns: event, the ids,
    full, partitions, forgotten, error_code, records_bytes, waited_ms, body_bytes, header_bytes,
    wire_bytes, t_ms, seq, second, n.
    """
    return _spread(fetch_runs(events, only))


def plain_fetch_rows(events: DataFrame, only: str | None = None) -> DataFrame:
    """fetch_rows for the fetches logged one by one (a run without first_us): the part of the
    log whose size is the count of its events. idle_fetch_runs has the rest."""
    from pyspark.sql import functions as F

    return _spread(fetch_runs(events, only).where(F.col("first_us").isNull()))


def idle_fetch_runs(events: DataFrame, only: str | None = None) -> pa.Table:
    """The runs of fetch_runs that stand for many fetches (those with first_us: a fetch.idle's
    requests or responses), collected: a few per fetch session, however long the run."""
    from pyspark.sql import functions as F

    return to_arrow(fetch_runs(events, only).where(F.col("first_us").isNotNull()))


def _spread(runs: DataFrame) -> DataFrame:
    """fetch_rows of fetch_runs' `runs` (see fetch_rows)."""
    from pyspark.sql import functions as F

    plain = F.col("first_us").isNull()
    first, period, count = F.col("first_us"), F.col("period_us"), F.col("count")
    start = _floor_div(first, US_PER_S)
    stop = _floor_div(first + (count - 1) * period, US_PER_S)
    seconds = F.when(plain, F.array(F.floor(F.col("t_ms") / 1000).cast("long")))
    spread = runs.select("*", F.explode(seconds.otherwise(
        F.sequence(start, F.greatest(start, stop)))).alias("second"))
    begins = F.col("second") * US_PER_S
    before = occurrences_before(first, period, count, begins)
    n = occurrences_before(first, period, count, begins + US_PER_S) - before
    return spread.select(
        "event", *_IDS, *(spec[0] for spec in _BY_KIND),
        F.when(plain, F.col("t_ms")).otherwise((first + before * period) / US_PER_MS)
        .alias("t_ms"),
        "seq", "second",
        F.when(plain, F.lit(1).cast("long")).otherwise(n).alias("n"),
    ).where(F.col("n") > 0)


_SPREAD_CHUNK = 1 << 20  # (run, second) pairs at a time: bounds the memory of a long run


def idle_per_second(runs: pa.Table, keys: Sequence[str]) -> pa.Table:
    """What fetch_rows makes of idle runs (idle_fetch_runs' rows, with any columns added),
    grouped by `keys` and second: columns `keys`, second, n (the sum), t_ms and seq (the
    smallest), in no particular order. The same numbers as Spark's, in closed form per run and
    second on this side: an idle hour of 100,000 partitions is millions of (run, second) pairs,
    which Spark spent most of an analysis exploding into rows (issue 19). The formulas are
    fetch_rows' and occurrences_before's, in longs: second ⌊µs / 10^6⌋, a run's seconds from
    its first occurrence's to its last's (its first alone when the period is null), and how
    many occurrences come before a bound clamp(⌈(bound − first) / max(period, 1)⌉, 0, count).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    ids: dict[tuple[Any, ...], int] = {}
    key_of = [ids.setdefault(tuple(row.values()), len(ids))
              for row in runs.select(list(keys)).to_pylist()]
    columns = {name: runs[name].to_pylist() for name in ("first_us", "period_us", "count")}
    parts: list[pa.Table] = []
    which: list[int] = []
    seconds: list[int] = []

    def flush() -> None:
        if seconds:
            parts.append(_idle_seconds(runs, key_of, which, seconds))
            which.clear()
            seconds.clear()

    for i, (first, period, count) in enumerate(zip(*columns.values(), strict=True)):
        start = first // US_PER_S
        stop = start if period is None else max(start, (first + (count - 1) * period) // US_PER_S)
        which.extend([i] * (stop - start + 1))
        seconds.extend(range(start, stop + 1))
        if len(seconds) >= _SPREAD_CHUNK:
            flush()
    flush()
    names_of = [f"_key{j}" for j in range(len(keys))]
    grouped = _min_sum(pa.concat_tables(parts) if parts else _idle_seconds(runs, [], [], []))
    distinct = pa.Table.from_pylist([dict(zip(names_of, key, strict=True)) for key in ids],
                                    schema=pa.schema([pa.field(n, runs.schema.field(k).type)
                                                      for n, k in zip(names_of, keys,
                                                                      strict=True)]))
    picked = grouped["key"]
    return pa.table({**{key: pc.take(distinct[n], picked)
                        for key, n in zip(keys, names_of, strict=True)},
                     "second": grouped["second"], "n": grouped["n"], "t_ms": grouped["t_ms"],
                     "seq": grouped["seq"]})


def _min_sum(table: pa.Table) -> pa.Table:
    """`table` (key, second, n, t_ms, seq) grouped by key and second: n summed, the rest min."""
    done = table.group_by(["key", "second"], use_threads=False).aggregate(
        [("n", "sum"), ("t_ms", "min"), ("seq", "min")])
    return done.select(["key", "second", "n_sum", "t_ms_min", "seq_min"]).rename_columns(
        ["key", "second", "n", "t_ms", "seq"])


def _idle_seconds(runs: pa.Table, key_of: list[int], which: list[int],
                  seconds: list[int]) -> pa.Table:
    """The (run, second) pairs `which` × `seconds` counted: key, second, n, t_ms, seq, grouped
    by (key, second); pairs with no occurrence left out."""
    import pyarrow as pa
    import pyarrow.compute as pc

    run = pa.array(which, pa.int64())
    second = pa.array(seconds, pa.int64())
    first = pc.take(runs["first_us"], run)
    count = pc.take(runs["count"], run)
    period = pc.take(runs["period_us"], run)
    step = pc.max_element_wise(period, pa.scalar(1, pa.int64()))
    zero = pa.scalar(0, pa.int64())

    def before(bound: pa.Array) -> pa.Array:
        ahead = pc.subtract(bound, first)
        ceiling = pc.divide(pc.subtract(pc.add(ahead, step), 1), step)  # ahead > 0: ⌈ahead/step⌉
        return pc.if_else(pc.less_equal(ahead, 0), zero, pc.min_element_wise(ceiling, count))

    begins = pc.multiply(second, US_PER_S)
    earlier = before(begins)
    n = pc.subtract(before(pc.add(begins, US_PER_S)), earlier)
    t_ms = pc.divide(pc.cast(pc.add(first, pc.multiply(earlier, period)), pa.float64()),
                     float(US_PER_MS))
    table = pa.table({"key": pc.take(pa.array(key_of, pa.int64()), run), "second": second,
                      "n": n, "t_ms": t_ms, "seq": pc.take(runs["seq"], run)})
    return _min_sum(table.filter(pc.greater(n, 0)))


def occurrences_between(lo_ms: Column, hi_ms: Column) -> Column:
    """How many occurrences of a fetch_runs row have lo_ms ≤ t_ms ≤ hi_ms (bounds that are
    event times): a plain fetch's own t_ms compared, an idle run's counted in closed form."""
    from pyspark.sql import functions as F

    first, period, count = F.col("first_us"), F.col("period_us"), F.col("count")
    lo_us = F.ceil(lo_ms * US_PER_MS - _TOLERANCE_US).cast("long")
    after_hi_us = F.floor(hi_ms * US_PER_MS + _TOLERANCE_US).cast("long") + 1
    in_window = (occurrences_before(first, period, count, after_hi_us)
                 - occurrences_before(first, period, count, lo_us))
    inside = (F.col("t_ms") >= lo_ms) & (F.col("t_ms") <= hi_ms)
    return F.when(first.isNull(), F.when(inside, 1).otherwise(0)).otherwise(
        F.greatest(in_window, F.lit(0)))


def to_arrow(frame: DataFrame) -> pa.Table:
    """Collect `frame` to this process as one Arrow table (Spark's Arrow path: no Row objects).

    For the small, already reduced tables a stage finishes in Python."""
    import pyarrow as pa

    collect = getattr(type(frame), "toArrow", None)  # Spark 4
    if collect is not None:
        table: pa.Table = collect(frame)
        return table
    from pyspark.sql.pandas.types import to_arrow_schema  # Spark 3.5

    batches = type(frame)._collect_as_arrow(frame)  # type: ignore[attr-defined]
    return pa.Table.from_batches(batches, schema=to_arrow_schema(frame.schema))


def spark_sorted(rows: Iterable[Mapping[str, Any]], *keys: str) -> list[dict[str, Any]]:
    """`rows` ordered by `keys` as Spark's orderBy orders them: ascending, nulls first."""
    return sorted((dict(row) for row in rows),
                  key=lambda row: [(row[k] is not None, row[k]) for k in keys])
