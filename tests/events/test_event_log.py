"""The event log's line: stamp first, then the bound context, then the fields; observers see
the stamped event before it is written; values orjson cannot render fall back as structlog's
JSONRenderer renders them."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Mapping
from functools import partial
from typing import Any

import orjson
import pytest
import structlog

from rig.events.log import EventLog, HashingSink


class _Rendered:
    def __structlog__(self) -> str:
        return "rendered"


class _Opaque:
    def __repr__(self) -> str:
        return "<opaque>"


def test_a_line_is_stamp_then_context_then_fields() -> None:
    sink = io.BytesIO()
    now = [1500]
    log = EventLog(sink, lambda: now[0] / 1000, variant="v6", broker=9)
    log.emit("fetch.response", partition="t-0", broker=2, bytes=10)
    now[0] = 2500
    log.emit("hw.advance", hw=3, odd=_Rendered(), other=_Opaque())
    lines = sink.getvalue().split(b"\n")
    assert lines[-1] == b""
    assert lines[0] == (b'{"t_ms":1.5,"seq":1,"event":"fetch.response","variant":"v6",'
                        b'"broker":2,"partition":"t-0","bytes":10}')
    assert lines[1] == (b'{"t_ms":2.5,"seq":2,"event":"hw.advance","variant":"v6","broker":9,'
                        b'"hw":3,"odd":"rendered","other":"<opaque>"}')
    assert log.count == 2


def test_the_line_is_what_structlogs_generic_chain_renders() -> None:
    """The same bytes as structlog's stock BoundLogger with a stamping processor and its
    JSONRenderer over orjson (the chain this log replaced)."""
    now = [0]
    seq = [0]

    def stamp(_logger: Any, _name: str, event_dict: Any) -> Any:
        seq[0] += 1
        name = event_dict.pop("event")
        return {"t_ms": now[0] / 1000, "seq": seq[0], "event": name, **event_dict}

    stock = io.BytesIO()

    class End:
        def msg(self, line: bytes) -> None:
            stock.write(line + b"\n")

        info = msg

    reference = structlog.wrap_logger(
        End(), processors=[stamp, structlog.processors.JSONRenderer(serializer=orjson.dumps)],
        context_class=dict).bind(variant="v7", broker=1)
    ours = io.BytesIO()
    log = EventLog(ours, lambda: now[0] / 1000, variant="v7", broker=1)
    for step, fields in enumerate([{}, {"broker": 3, "x": [1, 2]}, {"y": _Opaque(), "z": None}]):
        now[0] = step * 1250
        reference.msg(f"e.{step}", **fields)
        log.emit(f"e.{step}", **fields)
    assert ours.getvalue() == stock.getvalue()


def test_observers_see_the_stamped_event_they_asked_for() -> None:
    sink = HashingSink()
    log = EventLog(sink, lambda: 0.0, variant="v6")
    seen: list[tuple[str, dict[str, Any]]] = []

    def everything(event: Mapping[str, Any]) -> None:
        seen.append(("all", dict(event)))

    def some(event: Mapping[str, Any]) -> None:
        seen.append(("some", dict(event)))

    log.observe(everything)
    log.observe(some, ["b"])
    log.emit("a", n=1)
    log.emit("b", n=2)
    assert [(who, event["event"], event["seq"]) for who, event in seen] == [
        ("all", "a", 1), ("all", "b", 2), ("some", "b", 2)]
    assert list(seen[0][1]) == ["t_ms", "seq", "event", "variant", "n"]
    assert sink.last_line.endswith(b'"n":2}\n')


def test_an_event_kinds_emitter_writes_the_line_emit_writes() -> None:
    """`kind` (the hot events' path: a head rendered once, values by position) against `emit`,
    byte for byte: floats, odd values, a trailing field left out, and a run of both mixed."""
    lines = []
    for by_kind in (False, True):
        sink = io.BytesIO()
        now = [1234567]
        log = EventLog(sink, lambda now=now: now[0] / 1000, variant="v7", broker=9)
        fields = ("client", "waited_ms", "full", "odd", "offsets")
        request = log.kind("fetch.request", *fields)
        for values in (("c-1", 0.5, True, _Rendered(), [["t", 0, 12]]),
                       ("c-2", 1e-7, False, _Opaque()),
                       ("ü", 123456789.125, None, None)):
            if by_kind:
                request(*values)
            else:
                log.emit("fetch.request", **dict(zip(fields, values, strict=False)))
            now[0] += 1001
            log.emit("hw.advance", hw=now[0])
        lines.append(sink.getvalue())
        assert log.count == 6
    assert lines[1] == lines[0]
    assert b'"broker":9,"client":"c-2","waited_ms":1e-7,"full":false,"odd":"<opaque>"}' in (
        lines[1])


def _write_waiting(stamped: Any, waiting: list[tuple[int, int]]) -> None:
    while waiting:
        stamped(*waiting.pop(0))


def test_a_line_written_late_is_the_line_its_emitter_would_have_written_then() -> None:
    """`stamped` (a coast's skipped rounds): the line of its time, numbered where it is
    written; `before_emit` writes waiting lines ahead of the next one, whichever path it takes."""
    logs = []
    for late in (False, True):
        sink = io.BytesIO()
        now = [1000]
        log = EventLog(sink, lambda now=now: now[0] / 1000, variant="v7")
        request = log.kind("fetch.request", "epoch", "full", client="c-1")
        waiting: list[tuple[int, int]] = []
        if late:
            stamped = log.stamped(request)
            log.before_emit = partial(_write_waiting, stamped, waiting)
        for epoch in (1, 2, 3):
            if late:
                waiting.append((now[0], epoch))
            else:
                request(epoch)
            now[0] += 500
            (log.emit("hw.advance", hw=epoch) if epoch % 2 else
             log.kind("isr.shrink", "isr")([epoch]))
        logs.append(sink.getvalue())
    assert logs[1] == logs[0]
    assert b'{"t_ms":1.5,"seq":3,"event":"fetch.request","variant":"v7","client":"c-1",' in logs[1]


def test_no_line_of_a_watched_event_is_written_late() -> None:
    log = EventLog(io.BytesIO(), lambda: 0.0)
    request = log.kind("fetch.request", "epoch")
    assert not log.watched("fetch.request")
    log.observe(lambda event: None, {"fetch.request"})
    assert log.watched("fetch.request") and not log.watched("hw.advance")
    with pytest.raises(ValueError, match="observer"):
        log.stamped(request)(1000, 1)


def test_a_kinds_fixed_fields_come_first_as_if_passed_each_time() -> None:
    lines = []
    for by_kind in (False, True):
        sink = io.BytesIO()
        log = EventLog(sink, lambda: 0.25, variant="v6")
        ids = {"role": "follower", "client": "broker-1-fetcher-0", "replica_id": 1}
        response = log.kind("fetch.response", "waited_ms", "wire_bytes", **ids)
        for waited, wire in ((500.0, 22), (0.001, 1_000_000)):
            if by_kind:
                response(waited, wire)
            else:
                log.emit("fetch.response", **ids, waited_ms=waited, wire_bytes=wire)
        lines.append(sink.getvalue())
    assert lines[1] == lines[0]
    assert lines[1].startswith(b'{"t_ms":0.25,"seq":1,"event":"fetch.response","variant":"v6",'
                               b'"role":"follower","client":"broker-1-fetcher-0","replica_id":1,'
                               b'"waited_ms":500.0,"wire_bytes":22}\n')


def test_an_observed_kind_shows_its_observers_the_event_dict() -> None:
    sink = io.BytesIO()
    log = EventLog(sink, lambda: 2.0, variant="v6")
    request = log.kind("fetch.request", "client", "partitions")
    request("c", 3)  # before anyone observes it: the fast path
    seen: list[dict[str, Any]] = []
    log.observe(lambda event: seen.append(dict(event)), ["fetch.request"])
    request("d", 4)
    assert seen == [{"t_ms": 2.0, "seq": 2, "event": "fetch.request", "variant": "v6",
                     "client": "d", "partitions": 4}]
    assert sink.getvalue().splitlines()[1] == orjson.dumps(seen[0])


def test_a_kind_whose_field_clashes_with_the_stamp_or_context_is_refused() -> None:
    log = EventLog(io.BytesIO(), lambda: 0.0, variant="v6")
    for fields, fixed in ((("seq",), {}), (("client", "variant"), {}), ((), {}),
                          (("client",), {"client": "c"}), (("client",), {"event": "x"})):
        try:
            log.kind("fetch.request", *fields, **fixed)
        except ValueError as error:
            assert "fetch.request" in str(error)
        else:
            raise AssertionError(f"{fields} accepted")


def test_a_kind_keeps_rendered_values_only_where_equal_values_render_alike() -> None:
    """Values equal across types (1, 1.0, True), -0.0 and 0.0, NaN, lists: a line whose values
    equal an earlier line's is written as emit writes it, never as the earlier one was."""
    values = [(1, "a"), (1.0, "a"), (True, "a"), (1, "a"), (-0.0, "b"), (0.0, "b"), (-0.0, "b"),
              (float("nan"), "c"), (float("nan"), "c"), ([1, 2], "d"), ([1, 2], "d"),
              (None, "e"), (None, "e"), (2**40, "f"), (2**40, "f"), (0.5, "g"), (0.5, "g"),
              # past the kept count, values that never repeat, then some that do
              *((n, "h") for n in range(40)), *((1, "a") for _ in range(3)), (-0.0, "b")]
    lines = []
    for by_kind in (False, True):
        sink = io.BytesIO()
        log = EventLog(sink, lambda: 1.0, variant="v6")
        emit = log.kind("x.y", "value", "tag")
        for value, tag in values:
            if by_kind:
                emit(value, tag)
            else:
                log.emit("x.y", value=value, tag=tag)
        lines.append(sink.getvalue().splitlines())
    assert lines[1] == lines[0]
    assert [orjson.loads(line)["value"] for line in lines[1][:7]] == [1, 1.0, True, 1, -0.0,
                                                                       0.0, -0.0]
    assert [line.split(b'"value":')[1][:4] for line in lines[1][:7]] == [
        b'1,"t', b'1.0,', b'true', b'1,"t', b'-0.0', b'0.0,', b'-0.0']


@pytest.mark.parametrize("buffer_size", [1, 7, 64, 1 << 16])
def test_a_hashing_sink_digests_lines_across_its_buffers(buffer_size: int) -> None:
    """Lines shorter and longer than the buffer, cut anywhere: the same digest, count and last
    line as the bytes written, whenever asked."""
    lines = [b"{}\n", b"x" * 100 + b"\n", b"\n", b'{"a":1}\n', b"y" * 9 + b"\n"]
    sink = HashingSink(buffer_size)
    for count, line in enumerate(lines, 1):
        sink.write(line)
        written = b"".join(lines[:count])
        assert sink.hexdigest() == hashlib.sha256(written).hexdigest()
        assert (sink.bytes, sink.last_line) == (len(written), line)
    for line in lines * 50:  # many lines between two questions
        sink.write(line)
    assert sink.last_line == lines[-1]
    assert sink.hexdigest() == hashlib.sha256(b"".join(lines * 51)).hexdigest()
