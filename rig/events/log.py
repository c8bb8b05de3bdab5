"""The event log: structlog writing one JSON object per line, stamped with time and order.

The processor chain is short on purpose (structlog's performance advice): one processor stamps
`t_ms`, `seq` and `event` first and shows the event to the observers that asked for its name
(online checks), then orjson renders it to bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from typing import Any, BinaryIO

import orjson
import structlog

Observer = Callable[[Mapping[str, Any]], None]


class _LineWriter:
    """structlog's logger end: appends rendered lines to a buffered binary file, no flush per
    line (structlog's BytesLogger flushes every call, a syscall per event in the hot loop)."""

    def __init__(self, sink: BinaryIO):
        self._write = sink.write

    def msg(self, message: bytes) -> None:
        self._write(message + b"\n")

    info = msg  # structlog's bound logger forwards `msg` as `info`


class HashingSink:
    """A binary sink that keeps no event: the SHA-256 of the bytes written and their count.

    Given to `simulate` instead of a file, it digests exactly the bytes the file would hold, so
    `hexdigest()` equals the SHA-256 of the event log a run to disk writes (rig fuzz compares a
    run with its replay this way without writing either). `last_line` is the final event.
    """

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self.bytes = 0
        self.last_line = b""

    def write(self, data: bytes) -> int:
        self._hash.update(data)
        self.bytes += len(data)
        self.last_line = data
        return len(data)

    def flush(self) -> None:
        """Nothing is buffered."""

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


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
            processors=[self._stamp, structlog.processors.JSONRenderer(serializer=orjson.dumps)],
            context_class=dict,
            cache_logger_on_first_use=True,
        ).bind(**context)
        # `emit(event, **fields)` is the bound logger's own method: no wrapper frame per event.
        self.emit: Callable[..., None] = logger.msg

    def observe(self, observer: Observer, events: Iterable[str] | None = None) -> None:
        """Call `observer` with every event (or only those named in `events`) after it is
        stamped and before it is written; observers see an event in the order they came."""
        self._observers.append((observer, None if events is None else frozenset(events)))
        self._watching.clear()

    def _stamp(self, _logger: Any, _method: str,
               event_dict: MutableMapping[str, Any]) -> dict[str, Any]:
        """Put `t_ms`, `seq` and `event` first, then show the event to its observers."""
        self.count += 1
        name = event_dict.pop("event")
        stamped = {"t_ms": self._clock(), "seq": self.count, "event": name, **event_dict}
        watching = self._watching.get(name)
        if watching is None:
            watching = self._watching[name] = tuple(
                observer for observer, events in self._observers
                if events is None or name in events)
        for observer in watching:
            observer(stamped)
        return stamped
