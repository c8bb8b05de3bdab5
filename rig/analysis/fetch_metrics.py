"""Fetch request/response metrics from a run's event log, computed with Spark.

One Spark query over the event table builds a compact table of identical fetches per second (a
"cube"), collected as Arrow: it is about the size of the per-second table the stage writes
anyway. The summary, the exact medians, the per-second series and the size histogram are all
aggregations of it, done here with pyarrow (one Spark query instead of six, issue 19). An
aggregated log's idle runs are a second, small query: their per-second counts are computed here
in closed form and merged into the cube.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rig import rundir
from rig.analysis.analysis import Analysis
from rig.analysis.events import (
    idle_fetch_runs,
    idle_per_second,
    plain_fetch_rows,
    to_arrow,
    with_fetch_fields,
)
from rig.analysis.faults import fault_rows_of
from rig.analysis.stages import FunctionStage, run_stage
from rig.analysis.timeline import fetch_timeline
from rig.events import names

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

__all__ = ["ROLES", "STAGE", "analyze_run", "event_schema"]

ROLES: tuple[str, ...] = ("follower", "consumer")
# (summary key, event kind, column) for each bytes statistic; body bytes exclude header and size.
_BYTES_STATS: tuple[tuple[str, str, str], ...] = (
    ("request_bytes", "request", "body_bytes"),
    ("response_bytes", "response", "body_bytes"),
    ("wire_request_bytes", "request", "wire_bytes"),
    ("wire_response_bytes", "response", "wire_bytes"),
)


def event_schema() -> StructType:
    """The fields of run.start and of the fetches (rig.analysis.events.with_fetch_fields);
    anything else is dropped."""
    from pyspark.sql import types as T

    run_start = T.StructField("duration_ms", T.LongType(), nullable=True)
    return with_fetch_fields(T.StructType([run_start]))


_CUBE_KEYS = ("variant", "role", "kind", "broker", "second", "full", "body_bytes",
              "wire_bytes")


def _fetch_cube(events: DataFrame, idle: bool) -> pa.Table:
    """Identical fetches grouped: the key columns plus `n` (how many), `first_t` (the earliest
    t_ms) and `first_seq` (the smallest seq).

    The first fetch of a role is the group with the smallest (first_t, first_seq): time first,
    since an idle run is logged when it ends and its seq says nothing of when its rounds were
    sent. In a full log seq grows with time, so that is the smallest seq, as it always was. Two
    columns rather than one min over a (t_ms, seq) struct: Spark hashes fixed-width aggregates
    but sorts every row for a struct one.

    The fetches logged one by one are grouped by Spark; an idle run's per-second counts are
    computed here from the few runs (rig.analysis.events.idle_per_second), and the two merged;
    without `idle` (the logs hold no fetch.idle) there are none to collect.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyspark.sql import functions as F

    def kind(event: Any) -> Any:
        return F.when(event == names.FETCH_REQUEST, F.lit("request")).otherwise(
            F.lit("response"))

    keys = list(_CUBE_KEYS)
    fetches = plain_fetch_rows(events).select(
        *(kind(F.col("event")).alias(k) if k == "kind" else k for k in keys),
        "t_ms", "seq", "n")
    cube = to_arrow(fetches.groupBy(*keys).agg(
        F.sum("n").alias("n"), F.min("t_ms").alias("first_t"), F.min("seq").alias("first_seq")))
    runs = idle_fetch_runs(events) if idle else None
    if runs is None or not runs.num_rows:
        return cube
    request = pc.fill_null(pc.equal(runs["event"], names.FETCH_REQUEST), False)
    runs = runs.append_column("kind", pc.if_else(request, "request", "response"))
    counted = idle_per_second(runs, [k for k in keys if k != "second"])
    counted = counted.select([*keys, "n", "t_ms", "seq"]).rename_columns(cube.column_names)
    both = pa.concat_tables([cube, counted.cast(cube.schema)])
    done = both.group_by(keys, use_threads=False).aggregate(
        [("n", "sum"), ("first_t", "min"), ("first_seq", "min")])
    return done.select([*keys, "n_sum", "first_t_min", "first_seq_min"]).rename_columns(
        cube.column_names)


def _totals(cube: pa.Table) -> list[dict[str, Any]]:
    """Counts, sums, extremes and the first request's size per (variant, role, kind).

    Spark's rules for nulls: a sum or extreme over no value is null; `full` null counts as
    neither full nor incremental; the first fetch is the cube row with the smallest (first_t,
    first_seq), nulls first (min_by over that struct), and its body_bytes even when null."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n, full = cube["n"], cube["full"]
    body, wire = cube["body_bytes"], cube["wire_bytes"]
    zero = pa.scalar(0, pa.int64())
    keys = ["variant", "role", "kind"]
    table = pa.table({
        **{key: cube[key] for key in keys},
        "count": n,
        "full": pc.if_else(pc.fill_null(full, False), n, zero),
        "incremental": pc.if_else(pc.fill_null(pc.invert(full), False), n, zero),
        "body_total": pc.multiply(n, body), "body_min": body, "body_max": body,
        "wire_total": pc.multiply(n, wire), "wire_min": wire, "wire_max": wire,
    })
    how = {"count": "sum", "full": "sum", "incremental": "sum", "body_total": "sum",
           "body_min": "min", "body_max": "max", "wire_total": "sum", "wire_min": "min",
           "wire_max": "max"}
    sums = _grouped(table, keys, how)
    # min_by(body_bytes, struct(first_t, first_seq)): sort (nulls first), take each group's first.
    order = pa.table({
        **{key: cube[key] for key in keys},
        "t": pc.fill_null(cube["first_t"], float("-inf")),
        "s": pc.fill_null(cube["first_seq"], -(2**63)),
        "first_body": body,
    }).sort_by([("t", "ascending"), ("s", "ascending")])
    firsts = order.group_by(keys, use_threads=False).aggregate(
        [("first_body", "first", pc.ScalarAggregateOptions(skip_nulls=False))])
    first_of = {tuple(row[k] for k in keys): row["first_body_first"]
                for row in firsts.to_pylist()}
    return [{**row, "first_body": first_of[tuple(row[k] for k in keys)]} for row in sums]


def _grouped(table: pa.Table, keys: list[str], how: Mapping[str, str]) -> list[dict[str, Any]]:
    """`table` grouped by `keys` (nulls a group, as in Spark), each column of `how` aggregated
    as named (sum, min, max: null over no value, as in Spark), as rows: keys, then `how`."""
    done = table.group_by(keys).aggregate([(column, op) for column, op in how.items()])
    picked = done.select([*keys, *(f"{column}_{op}" for column, op in how.items())])
    return picked.rename_columns([*keys, *how]).to_pylist()


def _medians(cube: pa.Table, column: str) -> dict[tuple[str, str, str], int]:
    """Exact discrete median of `column` per (variant, role, kind), weighted by `n`.

    The smallest value whose cumulative share reaches one half (percentile_disc(0.5)), done with
    integer arithmetic on the grouped counts so no float rounding is involved.
    """
    import pyarrow.compute as pc

    known = cube.filter(pc.is_valid(cube[column]))
    counts = _grouped(known.select(["variant", "role", "kind", column, "n"]),
                      ["variant", "role", "kind", column], {"n": "sum"})
    by_group: dict[tuple[str, str, str], list[tuple[int, int]]] = {}
    for row in counts:
        by_group.setdefault((row["variant"], row["role"], row["kind"]), []).append(
            (row[column], row["n"]))
    found = {}
    for group, values in by_group.items():
        total = sum(count for _, count in values)
        cumulative = 0
        for value, count in sorted(values):
            cumulative += count
            if cumulative * 2 >= total:
                found[group] = value
                break
    return found


def _timeseries(cube: pa.Table) -> list[dict[str, Any]]:
    """Per (variant, role, serving broker, second): requests and bytes each way."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = cube["n"]
    is_req = pc.equal(cube["kind"], "request")
    is_resp = pc.invert(is_req)
    zero = pa.scalar(0, pa.int64())
    body, wire = pc.multiply(n, cube["body_bytes"]), pc.multiply(n, cube["wire_bytes"])
    keys = ["variant", "role", "broker", "second"]
    table = pa.table({
        **{key: cube[key] for key in keys},
        "requests": pc.if_else(is_req, n, zero),
        "responses": pc.if_else(is_resp, n, zero),
        "request_bytes": pc.if_else(is_req, body, zero),
        "response_bytes": pc.if_else(is_resp, body, zero),
        "wire_request_bytes": pc.if_else(is_req, wire, zero),
        "wire_response_bytes": pc.if_else(is_resp, wire, zero),
    })
    return _grouped(table, keys, dict.fromkeys(table.column_names[len(keys):], "sum"))


def _sizes(cube: pa.Table) -> list[dict[str, Any]]:
    """Histogram of body sizes: how many requests/responses had each exact size."""
    table = cube.select(["variant", "role", "kind", "body_bytes", "n"]).rename_columns(
        ["variant", "role", "kind", "body_bytes", "count"])
    return _grouped(table, ["variant", "role", "kind", "body_bytes"], {"count": "sum"})


def _durations(
    run: Mapping[str, Any], events: DataFrame | None, variants: Iterable[str]
) -> dict[str, int | None]:
    """duration_ms per variant from run.json, else from the variant's run.start event."""
    declared = run.get("variants") or {}
    found: dict[str, int | None] = {}
    for name in variants:
        value = (declared.get(name) or {}).get("duration_ms")
        found[name] = int(value) if isinstance(value, int | float) else None
    missing = [name for name, value in found.items() if value is None]
    if missing and events is not None:
        from pyspark.sql import functions as F

        starts = (
            events.where((F.col("event") == names.RUN_START) & F.col("variant").isin(*missing))
            .groupBy("variant")
            .agg(F.max("duration_ms").alias("duration_ms"))
            .collect()
        )
        for row in starts:
            found[row["variant"]] = row["duration_ms"]
    return found


def _bytes_entry(total: int | None, low: int | None, high: int | None, p50: int | None) -> dict:
    return {"total": int(total or 0), "min": low, "max": high, "p50": p50}


def _per_second(total: int, duration_ms: int | None) -> float | None:
    if not duration_ms or duration_ms <= 0:
        return None
    return total / (duration_ms / 1000)


def _role_summary(
    totals: Mapping[str, dict[str, Any]],
    medians: Mapping[tuple[str, str], int | None],
    duration_ms: int | None,
) -> dict[str, Any]:
    """Summary of one (variant, role); `totals` by kind, `medians` by (kind, column)."""
    req, resp = totals.get("request", {}), totals.get("response", {})
    out: dict[str, Any] = {
        "requests": int(req.get("count") or 0),
        "responses": int(resp.get("count") or 0),
        "full_requests": int(req.get("full") or 0),
        "incremental_requests": int(req.get("incremental") or 0),
    }
    for key, kind, column in _BYTES_STATS:
        row = totals.get(kind, {})
        prefix = "body" if column == "body_bytes" else "wire"
        out[key] = _bytes_entry(
            row.get(f"{prefix}_total"),
            row.get(f"{prefix}_min"),
            row.get(f"{prefix}_max"),
            medians.get((kind, column)),
        )
    out["first_request_bytes"] = req.get("first_body")
    out["request_bytes_per_second"] = _per_second(out["request_bytes"]["total"], duration_ms)
    out["response_bytes_per_second"] = _per_second(out["response_bytes"]["total"], duration_ms)
    return out


def _order(variants: list[str], roles: list[str]) -> Any:
    """Sort key for table rows: variants in run.json order, known roles first, then the rest."""
    v_index = {name: i for i, name in enumerate(variants)}
    r_index = {name: i for i, name in enumerate(roles)}

    def key(row: Mapping[str, Any]) -> tuple:
        fields = ("kind", "broker", "second", "body_bytes")
        rest = tuple((row.get(f) is None, row.get(f) or 0) for f in fields)
        return (v_index.get(row["variant"], len(v_index)), r_index.get(row["role"], 99), *rest)

    return key


def _fetch_stage(analysis: Analysis) -> dict[str, dict[str, Any]]:
    """Summary `fetch` entries for every variant in run.json order (then any others found in the
    events, sorted), both roles always present, zero-filled when a role made no fetches. Writes
    the fetch tables (per second, sizes, the coarse timeline) and the fault table."""
    run = analysis.run
    declared = list((run.get("variants") or {}).keys())

    # No events, no Spark: an empty run is summarised as zeros without starting a JVM.
    events = analysis.events(event_schema())
    totals_rows: list[dict[str, Any]] = []
    median_rows: dict[tuple[str, str, str, str], int | None] = {}
    timeseries: list[dict[str, Any]] = []
    sizes: list[dict[str, Any]] = []
    if events is not None:
        # One scan of the (possibly huge) table in Spark, reduced to the cube: about the size of
        # the per-second table written below. Everything else is aggregated from it here.
        cube = _fetch_cube(events, analysis.logged(names.FETCH_IDLE))
        totals_rows = _totals(cube)
        for column in ("body_bytes", "wire_bytes"):
            for (variant, role, kind), p50 in _medians(cube, column).items():
                median_rows[(variant, role, kind, column)] = p50
        timeseries = _timeseries(cube)
        sizes = _sizes(cube)

    seen = sorted({row["variant"] for row in totals_rows if row["variant"] is not None})
    variants = declared + [name for name in seen if name not in declared]
    roles = list(ROLES) + sorted(
        {row["role"] for row in totals_rows if row["role"] is not None} - set(ROLES)
    )
    durations = _durations(run, events, variants)

    by_group: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for row in totals_rows:
        by_group.setdefault((row["variant"], row["role"]), {})[row["kind"]] = row
    entries: dict[str, dict[str, Any]] = {}
    for variant in variants:
        fetch: dict[str, Any] = {}
        for role in roles:
            medians = {
                (kind, column): median_rows.get((variant, role, kind, column))
                for _, kind, column in _BYTES_STATS
            }
            fetch[role] = _role_summary(
                by_group.get((variant, role), {}), medians, durations.get(variant)
            )
        entries[variant] = {"fetch": fetch}

    order = _order(variants, roles)
    run_dir = analysis.run_dir
    rundir.write_metric(run_dir, rundir.FETCH_TIMESERIES, sorted(timeseries, key=order))
    rundir.write_metric(run_dir, rundir.FETCH_SIZES, sorted(sizes, key=order))
    # The coarse timeline the report draws: the per-second table can hold a million rows.
    rundir.write_metric(run_dir, rundir.FETCH_TIMELINE,
                        fetch_timeline(timeseries, durations, variants))
    faults = analysis.parsed.faults if analysis.parsed is not None else []
    rundir.write_metric(run_dir, rundir.FAULTS, fault_rows_of(faults, variants))
    return entries


STAGE = FunctionStage(
    name="fetch",
    writes=(rundir.FETCH_TIMESERIES, rundir.FETCH_SIZES, rundir.FETCH_TIMELINE, rundir.FAULTS),
    schema=event_schema,
    job=_fetch_stage,
)


def analyze_run(run_dir: Path, *, spark_master: str | None = None) -> dict[str, Any]:
    """The fetch stage alone on RUN_DIR: `{"variants": {name: {"fetch": {"follower": {...},
    "consumer": {...}}}}}`; writes its tables under RUN_DIR/metrics/."""
    return run_stage(STAGE, run_dir, spark_master=spark_master)
