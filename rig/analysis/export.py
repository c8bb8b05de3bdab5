"""Machine-readable copies of a run's results for other tools: RUN_DIR/export/.

Every metric table (metrics/*.json, plus flat tables made from summary.json) as CSV or Parquet,
and with Parquet the event logs too (one file per events/<name>.jsonl). CSV needs nothing
but Python; Parquet is written by Spark, imported only then. A file there that rig did not
write is never replaced (rig/written.py), unless the command says --force.
"""

from __future__ import annotations

import csv
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson

from rig import rundir, written
from rig.errors import RunDirError
from rig.promotion import write_error

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = ["EXPORT_DIR", "FORMATS", "KNOWN_COLUMNS", "export_run", "metric_tables", "write_csv"]

Format = Literal["csv", "parquet"]
FORMATS: tuple[str, ...] = ("csv", "parquet")
EXPORT_DIR = rundir.EXPORT_DIR  # kept for callers that name it
# Columns of events a reader wants first; the rest follow in name order.
_EVENT_HEAD = ("t_ms", "seq", "event", "variant")
_S, _L, _D, _B = "string", "long", "double", "boolean"
_FETCH_SUMS = tuple((n, _L) for n in (
    "requests", "responses", "request_bytes", "response_bytes", "wire_request_bytes",
    "wire_response_bytes"))
# Columns of the known tables, used when a table is empty: a Parquet file needs a schema, and a
# CSV reader a header, even with no rows (most runs have no faults).
KNOWN_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "faults": (("variant", _S), ("fault", _L), ("t_ms", _D), ("seq", _L), ("event", _S),
               ("broker", _L), ("label", _S), ("short", _S), ("details", _S)),
    "fetch_timeseries": (("variant", _S), ("role", _S), ("broker", _L), ("second", _L),
                         *_FETCH_SUMS),
    "fetch_timeline": (("variant", _S), ("role", _S), ("second", _L), ("bucket_s", _L),
                       *_FETCH_SUMS),
    "fetch_sizes": (("variant", _S), ("role", _S), ("kind", _S), ("body_bytes", _L),
                    ("count", _L)),
    "summary_fetch": (("variant", _S), ("role", _S), ("requests", _L)),
    "summary_expectations": (("expect", _S), ("description", _S), ("value", _D), ("ok", _B)),
    "summary_checks": (("variant", _S), ("ok", _B), ("status", _S), ("violations", _L)),
}
_BYTES_KEYS = (
    "request_bytes",
    "response_bytes",
    "wire_request_bytes",
    "wire_response_bytes",
)


def _flat_fetch(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """summary.json's fetch numbers, one row per (variant, role), nested keys joined by `_`."""
    rows = []
    found = summary.get("variants")
    variants: dict[str, Any] = found if isinstance(found, dict) else {}
    for variant, entry in variants.items():
        fetch = entry.get("fetch") if isinstance(entry, dict) else None
        for role, stats in (fetch or {}).items():
            if not isinstance(stats, dict):
                continue
            row: dict[str, Any] = {"variant": variant, "role": role}
            for key, value in stats.items():
                if key in _BYTES_KEYS and isinstance(value, dict):
                    for stat in ("total", "min", "max", "p50"):
                        row[f"{key}_{stat}"] = value.get(stat)
                elif not isinstance(value, dict | list):
                    row[key] = value
            rows.append(row)
    return rows


def _flat_expectations(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    raw = summary.get("expectations")
    return [
        {
            "expect": e.get("expect"),
            "description": e.get("description"),
            "value": e.get("value") if isinstance(e.get("value"), int | float) else None,
            "ok": e.get("ok"),
        }
        for e in (raw if isinstance(raw, list) else [])
        if isinstance(e, dict)
    ]


def _flat_checks(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    found = summary.get("variants")
    variants: dict[str, Any] = found if isinstance(found, dict) else {}
    for variant, entry in variants.items():
        checks = entry.get("checks") if isinstance(entry, dict) else None
        if not isinstance(checks, dict):
            continue
        violations = checks.get("violations")
        rows.append(
            {
                "variant": variant,
                "ok": checks.get("ok"),
                "status": checks.get("status"),
                "violations": len(violations) if isinstance(violations, list) else 0,
            }
        )
    return rows


def metric_tables(run_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """Every table to export, by name: metrics/<name>.json, then summary_fetch,
    summary_expectations and summary_checks flattened from summary.json."""
    run_dir = Path(run_dir)
    tables: dict[str, list[dict[str, Any]]] = {}
    for name, path in rundir.metric_paths(run_dir).items():
        rows = rundir.read_json(path)
        if isinstance(rows, list):
            tables[name] = [r for r in rows if isinstance(r, dict)]
    summary = rundir.read_summary(run_dir) or {}
    if isinstance(summary, dict):
        tables["summary_fetch"] = _flat_fetch(summary)
        tables["summary_expectations"] = _flat_expectations(summary)
        tables["summary_checks"] = _flat_checks(summary)
    return tables


def _columns(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The union of the rows' keys, in first-seen order."""
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(str(key), None)
    return list(seen)


def _cell(value: Any) -> Any:
    """Nested values (fault details, lists) travel as JSON text: both formats stay flat."""
    if isinstance(value, dict | list):
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    return value


def write_csv(
    rows: Sequence[Mapping[str, Any]], path: Path, columns: Sequence[str] = ()
) -> Path:
    """One CSV with a header row (`columns` when there are no rows); empty cells for missing
    values; written atomically."""
    columns = _columns(rows) or list(columns)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(columns)
            for row in rows:
                writer.writerow(
                    ["" if row.get(c) is None else _cell(row.get(c)) for c in columns]
                )
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _spark_schema(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[str], known: Mapping[str, str]
) -> StructType:
    """Column types from the values: bool, long, double (ints and floats mixed), else string;
    a column without any value takes its `known` type.

    Decided here rather than by Spark's inference, which fails on a column that is all null.
    """
    from pyspark.sql import types as T

    by_name = {_S: T.StringType(), _L: T.LongType(), _D: T.DoubleType(), _B: T.BooleanType()}
    fields = []
    for name in columns:
        values = [r.get(name) for r in rows if r.get(name) is not None]
        kind: T.DataType
        if not values and name in known:
            kind = by_name[known[name]]
        elif values and all(isinstance(v, bool) for v in values):
            kind = T.BooleanType()
        elif values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            kind = T.LongType()
        elif values and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in values
        ):
            kind = T.DoubleType()
        else:
            kind = T.StringType()
        fields.append(T.StructField(name, kind, nullable=True))
    return T.StructType(fields)


def _coerce(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if kind == "double":
        return float(value)
    if kind == "string":
        return value if isinstance(value, str) else str(_cell(value))
    return value


def _write_one_parquet(frame: DataFrame, path: Path) -> Path:
    """Write `frame` as the single Parquet file `path` (Spark writes a folder of parts)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        frame.coalesce(1).write.mode("overwrite").parquet(str(scratch / "out"))
        parts = sorted((scratch / "out").glob("part-*.parquet"))
        if len(parts) != 1:
            raise RuntimeError(f"expected one Parquet part for {path.name}, got {len(parts)}")
        os.chmod(parts[0], 0o644)
        os.replace(parts[0], path)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return path


def _write_table_parquet(
    spark: SparkSession, rows: Sequence[Mapping[str, Any]], path: Path
) -> Path | None:
    known = dict(KNOWN_COLUMNS.get(path.stem, ()))
    columns = _columns(rows) or list(known)
    if not columns:
        return None  # an empty table of unknown shape: Parquet cannot hold zero columns
    schema = _spark_schema(rows, columns, known)
    kinds = [f.dataType.typeName() for f in schema.fields]
    data = [tuple(_coerce(r.get(c), k) for c, k in zip(columns, kinds, strict=True)) for r in rows]
    return _write_one_parquet(spark.createDataFrame(data, schema), path)


def _export_events(spark: SparkSession, files: Sequence[Path], folder: Path) -> list[Path]:
    """events/<name>.jsonl → export/events/<name>.parquet, all with one schema (every field
    any event has; a field an event lacks is null), ordered by (variant, seq)."""
    if not files:
        return []
    from pyspark.sql import functions as F

    from rig.analysis.events import hadoop_path

    reader = spark.read.option("mode", "DROPMALFORMED")
    schema = reader.json([hadoop_path(f) for f in files]).schema
    names = [f.name for f in schema.fields if f.name != "_corrupt_record"]
    ordered = [n for n in _EVENT_HEAD if n in names] + sorted(n for n in names
                                                              if n not in _EVENT_HEAD)
    paths = []
    for file in files:
        frame = reader.schema(schema).json(hadoop_path(file)).select(*[F.col(n) for n in ordered])
        keys = [n for n in ("variant", "seq") if n in ordered]
        frame = frame.coalesce(1).sortWithinPartitions(*keys) if keys else frame
        paths.append(_write_one_parquet(frame, folder / f"{file.stem}.parquet"))
    return paths


def export_run(
    run_dir: Path, fmt: Format | str, *, spark_master: str | None = None
) -> list[Path]:
    """Write RUN_DIR/export/<table>.<fmt> for every metric table, and with Parquet also
    RUN_DIR/export/events/<name>.parquet for every event log. Returns the files written."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; known: {', '.join(FORMATS)}")
    run_dir = Path(run_dir)
    folder = rundir.export_dir(run_dir)
    tables = metric_tables(run_dir)
    files = rundir.event_logs(run_dir) if fmt == "parquet" else []
    # Nothing is written unless every file can be: none may be one rig did not write.
    for place in (folder, folder / "events"):
        if (place.exists() or place.is_symlink()) and not place.is_dir():
            raise RunDirError(f"{place} exists and is not a folder; rig will not replace it")
    written.check_replace([folder / f"{name}.{fmt}" for name in tables]
                          + [folder / "events" / f"{f.stem}.parquet" for f in files])
    if fmt == "csv":
        try:
            done = [write_csv(rows, folder / f"{name}.csv",
                              [c for c, _ in KNOWN_COLUMNS.get(name, ())])
                    for name, rows in tables.items()]
        except OSError as exc:  # read-only, full, a name too long: one line
            raise write_error(exc, folder) from None
        written.record(done)
        return done
    from rig.analysis.spark import get_spark

    spark = get_spark(spark_master)
    done = [
        path
        for name, rows in tables.items()
        if (path := _write_table_parquet(spark, rows, folder / f"{name}.parquet")) is not None
    ]
    done += _export_events(spark, files, folder / "events")
    written.record(done)
    return done
