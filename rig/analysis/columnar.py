"""The event logs parsed once into one columnar table, RUN_DIR/analysis/events.parquet.

Python reads every JSON line once (orjson) and writes one Parquet file with a column per
(field, type) that some analysis stage reads; every stage then reads that table through Spark,
which loads only the columns it asks for. Parsing JSON in the JVM seven times over was most of
an analysis's time (issue 19).

The conversion follows Spark's PERMISSIVE JSON reader, so every metric comes out as it did when
each stage read the logs itself: a line that is not a JSON object becomes a row of nulls and a
counted warning, never a crash; a field whose value has the wrong type is null (counted too); a
string field holding another JSON value holds that value's JSON text (a follower's `source` is
a broker id, a consumer's a client name: both read as text). Blank lines are skipped.

The same pass keeps the few events a table needs whole, with every detail field (the fault
steps, the lost records), so nothing else reads the logs again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from rig.analysis.faults import is_fault_event
from rig.events import names

__all__ = ["KINDS", "ParsedLogs", "column_name", "parse_event_logs", "spark_kind"]

# The field types a stage may read, by Spark's simpleString of the type.
KINDS: tuple[str, ...] = ("bigint", "double", "string", "boolean", "array<bigint>",
                          "array<string>")
_INT64 = (-(2**63), 2**63 - 1)


def column_name(name: str, kind: str, conflicting: bool) -> str:
    """The table's column for `name` read as `kind`: the field's own name, or, for a field that
    stages read with two types (`leader`: a broker id in ISR events, a flag in storage samples),
    one column per type, `name__<kind>`."""
    if not conflicting:
        return name
    return f"{name}__{kind.replace('<', '_').replace('>', '')}"


@dataclass
class ParsedLogs:
    """What one pass over the event logs found. `lines` counts rows written (blank lines are not
    rows); `bad_lines` the lines that were not JSON objects; `bad_values` the field values of
    the wrong type, read as null."""

    table: Path
    lines: int = 0
    bad_lines: int = 0
    bad_values: int = 0
    faults: list[dict[str, Any]] = field(default_factory=list)
    lost: list[dict[str, Any]] = field(default_factory=list)
    # How many events of each name (a string `event`; others are not counted): a stage skips a
    # Spark job for events the logs do not hold (a full log has no fetch.idle).
    names: dict[str, int] = field(default_factory=dict)

    def warnings(self) -> list[str]:
        out = []
        if self.bad_lines:
            out.append(f"{self.bad_lines:,} event-log lines are not JSON objects: read as nulls")
        if self.bad_values:
            out.append(f"{self.bad_values:,} event fields have an unexpected type: read as null")
        return out


def _text(value: Any) -> str:
    return orjson.dumps(value).decode()


def _converter(kind: str) -> Callable[[list[Any]], list[Any]]:
    """A function from a column's raw values to values of `kind` (others: None)."""
    if kind == "bigint":
        low, high = _INT64
        return lambda vs: [v if type(v) is int and low <= v <= high else None for v in vs]
    if kind == "double":
        return lambda vs: [v if type(v) is float or (type(v) is int) else None for v in vs]
    if kind == "boolean":
        return lambda vs: [v if type(v) is bool else None for v in vs]
    if kind == "string":
        return lambda vs: [v if v is None or type(v) is str else _text(v) for v in vs]
    if kind == "array<bigint>":
        low, high = _INT64
        return lambda vs: [
            [x if type(x) is int and low <= x <= high else None for x in v]
            if type(v) is list else None for v in vs]
    if kind == "array<string>":
        return lambda vs: [
            [x if x is None or type(x) is str else _text(x) for x in v]
            if type(v) is list else None for v in vs]
    raise ValueError(f"unsupported field type {kind!r}; known: {', '.join(KINDS)}")


def _arrow_type(kind: str) -> Any:
    import pyarrow as pa

    return {"bigint": pa.int64(), "double": pa.float64(), "string": pa.string(),
            "boolean": pa.bool_(), "array<bigint>": pa.list_(pa.int64()),
            "array<string>": pa.list_(pa.string())}[kind]


def spark_kind(arrow_type: Any) -> str:
    """The kind (a KINDS entry) of a table column of `arrow_type`: _arrow_type's inverse."""
    for kind in KINDS:
        if _arrow_type(kind) == arrow_type:
            return kind
    raise ValueError(f"the event table has a column of type {arrow_type}, not one of {KINDS}")


_CHUNK = 65_536  # lines per record batch: bounds the memory a long log needs


def _chunks(files: Sequence[Path], parsed: ParsedLogs) -> Iterator[list[dict[str, Any]]]:
    """Every non-blank line of `files`, in order, as dicts ({} for one that is not a JSON
    object), in lists of at most _CHUNK."""
    rows: list[dict[str, Any]] = []
    loads, error = orjson.loads, orjson.JSONDecodeError
    for path in files:
        with path.open("rb") as handle:
            for line in handle:
                if not line.strip():
                    continue
                try:
                    event = loads(line)
                except error:
                    event = None
                if type(event) is not dict:
                    parsed.bad_lines += 1
                    event = {}
                rows.append(event)
                if len(rows) == _CHUNK:
                    yield rows
                    rows = []
    if rows:
        yield rows


def _column(values: list[Any], kind: str) -> tuple[Any, int]:
    """(the Arrow array of `values` as `kind`, how many values had the wrong type and became
    null). Arrow infers a column's type in C++; a column whose inferred type is the wanted one
    (or widens to it losslessly) is taken as it is, any other goes through the Python check."""
    import pyarrow as pa

    want = _arrow_type(kind)
    try:
        found = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        found = None
    if found is not None:
        if found.type == want:
            return found, 0
        # All null, empty lists only, or whole numbers where doubles are read: JSON's numbers
        # and Spark's reader agree on each of these.
        if found.type == pa.null() or found.type == pa.list_(pa.null()) or (
                kind == "double" and found.type == pa.int64()):
            return found.cast(want), 0
    converted = _converter(kind)(values)
    return pa.array(converted, type=want), converted.count(None) - values.count(None)


def _keep_whole(event: dict[str, Any], parsed: ParsedLogs) -> None:
    what = event.get("event")
    if type(what) is str:
        parsed.names[what] = parsed.names.get(what, 0) + 1
    if what == names.RECORD_LOST:
        parsed.lost.append(event)
    elif is_fault_event(what):
        parsed.faults.append(event)


def parse_event_logs(files: Sequence[Path], fields: Iterable[tuple[str, str]],
                     out: Path) -> ParsedLogs:
    """Parse `files` (in order) once and write the table of `fields` ((name, kind) pairs, kind in
    KINDS) to `out` (replaced in one step). Returns the counts and the events kept whole.

    (Arrow's own JSON reader was measured too: with a hundred typed columns it parsed no faster
    than orjson, and a field of mixed types, such as `source`, stops it.)"""
    import pyarrow as pa
    import pyarrow.parquet as pq

    wanted = sorted(set(fields))
    kinds_of: dict[str, set[str]] = {}
    for name, kind in wanted:
        kinds_of.setdefault(name, set()).add(kind)
    schema = pa.schema([pa.field(column_name(name, kind, len(kinds_of[name]) > 1),
                                 _arrow_type(kind)) for name, kind in wanted])
    parsed = ParsedLogs(table=out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    with pq.ParquetWriter(tmp, schema, compression="snappy") as writer:
        _write_table(files, wanted, kinds_of, schema, writer, parsed)
    tmp.replace(out)
    return parsed


def _write_table(files: Sequence[Path], wanted: Sequence[tuple[str, str]],
                   kinds_of: dict[str, set[str]], schema: Any, writer: Any,
                   parsed: ParsedLogs) -> None:
    """Every line through orjson, every value checked (see the module's rules), in chunks."""
    import pyarrow as pa

    for rows in _chunks(files, parsed):
        parsed.lines += len(rows)
        # Column by column from each row's own keys: an event has a dozen of the table's
        # hundred fields, so this touches each value once and skips the absent ones.
        raw: dict[str, list[Any]] = {name: [None] * len(rows) for name in kinds_of}
        for i, event in enumerate(rows):
            for key, value in event.items():
                column = raw.get(key)
                if column is not None:
                    column[i] = value
            _keep_whole(event, parsed)
        arrays = []
        for name, kind in wanted:
            array, bad = _column(raw[name], kind)
            if len(kinds_of[name]) == 1:  # else a value of the other type is no surprise
                parsed.bad_values += bad
            arrays.append(array)
        writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
