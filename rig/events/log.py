"""The event log: structlog writing one JSON object per line, stamped with time and order.

The processor chain is short on purpose (structlog's performance advice): stamp `t_ms`, `seq`
and `event` first, let observers (online checkers) see the event, render with orjson to bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, MutableMapping
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
        self._observers: list[Observer] = []
        self._logger = structlog.wrap_logger(
            _LineWriter(sink),
            processors=[self._stamp, self._notify,
                        structlog.processors.JSONRenderer(serializer=orjson.dumps)],
            context_class=dict,
            cache_logger_on_first_use=True,
        ).bind(**context)

    def observe(self, observer: Observer) -> None:
        """Call `observer` with every event after it is stamped and before it is written."""
        self._observers.append(observer)

    def emit(self, event: str, /, **fields: Any) -> None:
        self._logger.msg(event, **fields)

    def _stamp(self, _logger: Any, _method: str,
               event_dict: MutableMapping[str, Any]) -> dict[str, Any]:
        self.count += 1
        event = event_dict.pop("event")
        return {"t_ms": self._clock(), "seq": self.count, "event": event, **event_dict}

    def _notify(self, _logger: Any, _method: str,
                event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        for observer in self._observers:
            observer(event_dict)
        return event_dict
