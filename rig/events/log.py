"""The event log: structlog writing one JSON object per line, stamped with time and order.

The chain is as short as structlog allows (its performance advice): a bound logger class that
makes one event dict per call, one processor that stamps `t_ms`, `seq` and `event` in place,
shows the event to the observers that asked for its name (online checks) and renders it with
orjson, and a logger end that is the sink's own `write`. The few events a run writes most (a
fetch round's two) have an emitter per kind as well (`EventLog.kind`): the same line, its values
passed by position, its head rendered once. A coasting fetch client's skipped rounds write
their lines late, each stamped with its own time, just before the next line that follows it in
the run's order (`before_emit`, `stamped`; rig.cluster.coast_lines).
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from typing import Any, BinaryIO

import orjson
import structlog

Observer = Callable[[Mapping[str, Any]], None]
Emitter = Callable[..., None]  # an event kind's emitter: its fields' values by position

# The stamp's keys, bound first so that every event dict starts with them in this order and
# the stamping processor fills them in place instead of copying the dict to reorder it.
_STAMP = {"t_ms": None, "seq": None, "event": None}


class _EventLogger(structlog.BoundLoggerBase):
    """structlog's bound logger, one method: `msg(event, **fields)`.

    It builds the event dict as structlog's `_process_event` does (the bound context, then the
    fields, then `event`) and runs the processors, without the generic path's extra frames and
    keyword re-packing (structlog's custom wrapper classes: BoundLoggerBase)."""

    def msg(self, event: str, /, **fields: Any) -> None:
        event_dict: Any = {**self._context, **fields}
        event_dict["event"] = event
        for processor in self._processors:
            event_dict = processor(self._logger, "msg", event_dict)
        self._logger.msg(event_dict)


class _LineWriter:
    """structlog's logger end: the sink's `write`, called with each rendered line (structlog's
    BytesLogger adds a lock and a flush per line, a syscall per event in the hot loop)."""

    def __init__(self, sink: BinaryIO):
        self.msg = sink.write


def positional(emit: Callable[..., None], event: str, /, *fields: str, **fixed: Any) -> Emitter:
    """An emitter of `event` over any `emit(event, **fields)`: the `fixed` fields, then the
    values of `fields` by position, in their order (trailing ones may be left out)."""

    def emit_kind(*values: Any) -> None:
        emit(event, **fixed, **dict(zip(fields, values, strict=False)))

    return emit_kind


# Value types whose equality, type for type, means the same JSON: a kind's rendered fields are
# kept by their values when every value is one of these (and no float is zero: -0.0 equals 0.0
# but renders "-0.0"). An idle fetch round's events repeat the previous round's values; a kind
# whose values never repeat (a session's epoch, a busy run's sizes) stops keeping them.
_SCALARS = frozenset({int, bool, float, str, type(None)})
RENDERED_KEPT = 16  # rendered field sets kept per kind and type signature (then cleared)


def _fields_renderer(fields: tuple[str, ...]) -> Callable[[tuple[Any, ...]], bytes]:
    """`render(values)`: `fields` with `values` as orjson renders them as an object (the
    trailing newline included), kept for values seen before (per type signature)."""
    dumps, option = orjson.dumps, orjson.OPT_APPEND_NEWLINE
    # Per signature: its renderings by values, and whether one was reused since they were cleared.
    kept: dict[tuple[type, ...], list[Any]] = {}
    # Signatures with a value of another type, or whose kept renderings filled up unused.
    unkept: set[tuple[type, ...]] = set()

    def render(values: tuple[Any, ...]) -> bytes:
        types = tuple(map(type, values))
        entry = kept.get(types)
        if entry is None:
            if types in unkept or not _SCALARS.issuperset(types):
                unkept.add(types)
                return dumps(dict(zip(fields, values, strict=False)), default=_fallback,
                             option=option)
            entry = kept[types] = [{}, False]
        by_values: dict[tuple[Any, ...], bytes] = entry[0]
        rendered = by_values.get(values)
        if rendered is not None:
            entry[1] = True
            return rendered
        rendered = dumps(dict(zip(fields, values, strict=False)), default=_fallback,
                         option=option)
        if float not in types or 0.0 not in [v for v in values if type(v) is float]:
            if len(by_values) >= RENDERED_KEPT:
                if not entry[1]:
                    del kept[types]
                    unkept.add(types)
                    return rendered
                by_values.clear()
                entry[1] = False
            by_values[values] = rendered
        return rendered

    return render


def _fallback(value: Any) -> Any:
    """What orjson cannot render natively: its `__structlog__()` or its repr (structlog's
    JSONRenderer's fallback)."""
    try:
        return value.__structlog__()
    except AttributeError:
        return repr(value)


class DigestWriter(io.RawIOBase):
    """The raw end of a HashingSink: the SHA-256 and count of the bytes handed to it, and the
    last whole line among them."""

    def __init__(self) -> None:
        super().__init__()
        self.hash = hashlib.sha256()
        self.bytes = 0
        self.last_line = b""
        self._open_line = b""  # what came after the last newline

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.hash.update(chunk)
        self.bytes += len(chunk)
        end = chunk.rfind(b"\n") + 1
        if not end:
            self._open_line += chunk
            return len(chunk)
        start = chunk.rfind(b"\n", 0, end - 1) + 1  # 0: the line began before this chunk
        self.last_line = chunk[start:end] if start else self._open_line + chunk[:end]
        self._open_line = chunk[end:]
        return len(chunk)


class HashingSink(io.BufferedWriter):
    """A binary sink that keeps no more of the log than its buffer: the SHA-256 of the bytes
    written and their count.

    Given to `simulate` instead of a file, it digests exactly the bytes the file would hold, so
    `hexdigest()` equals the SHA-256 of the event log a run to disk writes (rig fuzz compares a
    run with its replay this way without writing either). `last_line` is the final event.
    A run writes one line per event: they are buffered (a copy, in C) and hashed a buffer at a
    time, not one Python call per event.
    """

    raw: DigestWriter

    def __init__(self, buffer_size: int = 1 << 16) -> None:
        super().__init__(DigestWriter(), buffer_size)

    @property
    def last_line(self) -> bytes:
        self.flush()
        return self.raw.last_line

    def hexdigest(self) -> str:
        self.flush()
        return self.raw.hash.hexdigest()

    @property
    def bytes(self) -> int:  # (last: a name that shadows the type in the class body)
        self.flush()
        return self.raw.bytes


class EventLog:
    """Writes the events of one simulated run; `seq` counts this run only."""

    def __init__(self, sink: BinaryIO, clock: Callable[[], float], **context: Any):
        self.count = 0
        self._clock = clock
        # Each observer with the event names it asked for (None: all), in the order they came;
        # per event name, the observers that see it, in that order (built on first sight).
        self._observers: list[tuple[Observer, frozenset[str] | None]] = []
        self._watching: dict[str, tuple[Observer, ...]] = {}
        logger = structlog.wrap_logger(
            _LineWriter(sink),
            wrapper_class=_EventLogger,
            processors=[self._stamp_and_render],
            context_class=dict,
            cache_logger_on_first_use=True,
        ).bind(**_STAMP, **context)
        # `emit(event, **fields)` is the bound logger's own method: no wrapper frame per event.
        self.emit: Callable[..., None] = logger.msg
        self._context = context
        self._write = sink.write
        # Called before each line is stamped, while lines that belong before it wait to be
        # written (a coast's skipped rounds): it writes them first. None when none wait.
        self.before_emit: Callable[[], None] | None = None
        # Each kind's emitter → its event and its `stamped` twin.
        self._stamped: dict[Emitter, tuple[str, Callable[..., None]]] = {}

    def observe(self, observer: Observer, events: Iterable[str] | None = None) -> None:
        """Call `observer` with every event (or only those named in `events`) after it is
        stamped and before it is written; observers see an event in the order they came."""
        self._observers.append((observer, None if events is None else frozenset(events)))
        self._watching.clear()

    def watched(self, name: str) -> bool:
        """Whether an observer sees events named `name`."""
        watching = self._watching.get(name)
        return bool(self._watchers(name) if watching is None else watching)

    def settled_count(self) -> int:
        """How many lines the run has written by now, those waiting to be written included."""
        if self.before_emit is not None:
            self.before_emit()
        return self.count

    def kind(self, event: str, /, *fields: str, **fixed: Any) -> Emitter:
        """An emitter of `event` taking its fields' values by position, in the order `fields`
        names them (trailing ones may be left out), after the `fixed` fields, whose values
        never change for this emitter (a fetch client's ids): it writes the line
        `emit(event, **fixed, **fields)` writes, byte for byte. When no observer watches the
        event, that line is the stamp, a head rendered once (`event`, the bound context and
        `fixed`) and the fields rendered by orjson, joined: no event dict merged, no keywords
        packed (the events of a fetch round, the most frequent of a run)."""
        clashes = {"t_ms", "seq", "event", *self._context} & {*fields, *fixed}
        if clashes or not fields or set(fields) & set(fixed):
            raise ValueError(f"{event}: fields {sorted(clashes)} would clash with the stamp or "
                             "the bound context" if clashes else
                             f"{event}: no fields, or a field given twice")
        head = orjson.dumps({"event": event, **self._context, **fixed},
                            default=_fallback)[1:-1] + b","
        dumps, write, clock = orjson.dumps, self._write, self._clock
        render = _fields_renderer(fields)
        emit = self.emit

        def emit_kind(*values: Any) -> None:
            watching = self._watching.get(event)
            if watching is None:
                watching = self._watchers(event)
            if watching or not values:  # the observers see the event dict emit makes
                emit(event, **fixed, **dict(zip(fields, values, strict=False)))
                return
            if self.before_emit is not None:
                self.before_emit()
            count = self.count = self.count + 1
            write(b"".join((b'{"t_ms":', dumps(clock()), b',"seq":', b"%d," % count, head,
                            render(values)[1:])))

        def emit_stamped(t_us: int, *values: Any) -> None:
            if not values:
                raise ValueError(f"{event}: a line written late needs its fields")
            count = self.count = self.count + 1
            write(b"".join((b'{"t_ms":', dumps(t_us / 1000), b',"seq":', b"%d," % count, head,
                            render(values)[1:])))

        self._stamped[emit_kind] = (event, emit_stamped)
        return emit_kind

    def stamped(self, emitter: Emitter) -> Callable[..., None]:
        """The twin of a `kind` emitter that writes its line late: `(t_us, *values)` writes the
        line the emitter would have written at `t_us`, now (as the next in `seq`). Only for
        events no observer watches (observers come before a run: checked once, here)."""
        event, twin = self._stamped[emitter]
        if self.watched(event):
            raise ValueError(f"{event}: an observer watches it, and would see a line written "
                             "late out of time")
        return twin

    def _watchers(self, name: str) -> tuple[Observer, ...]:
        """The observers that see events named `name`, in the order they came (kept)."""
        watching = self._watching[name] = tuple(
            observer for observer, events in self._observers
            if events is None or name in events)
        return watching

    def _stamp_and_render(self, _logger: Any, _method: str,
                          event_dict: MutableMapping[str, Any]) -> bytes:
        """Fill in `t_ms` and `seq`, show the event to its observers, render it as a line."""
        if self.before_emit is not None:
            self.before_emit()
        self.count += 1
        event_dict["t_ms"] = self._clock()
        event_dict["seq"] = self.count
        name = event_dict["event"]
        watching = self._watching.get(name)
        if watching is None:
            watching = self._watchers(name)
        for observer in watching:
            observer(event_dict)
        return orjson.dumps(event_dict, default=_fallback, option=orjson.OPT_APPEND_NEWLINE)
