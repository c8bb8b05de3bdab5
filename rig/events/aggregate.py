"""fetch.idle events read back as the fetch.request and fetch.response events they stand for.

With `events: fetch-aggregated`, a run of idle fetch rounds is one fetch.idle event (its fields
are documented in rig.events.names). A tool that wants every fetch, as `events: full` logs them,
expands it here; the Spark analysis does the same arithmetic per second instead of per round.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from rig.events import names
from rig.protocol.session_epochs import advance_epoch

# The ids every fetch event carries, in the order the engine writes them.
_IDS = ("role", "client", "replica_id", "broker", "source", "fetcher", "version", "session_id")


def expand_fetch_idle(event: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The fetch.request events of `event`, then its fetch.response events, field for field as
    `events: full` writes them, without `seq` (they have none of their own)."""
    head = {"variant": event["variant"]} if "variant" in event else {}
    ids = {name: event[name] for name in _IDS}
    period = event["period_us"]
    first_epoch = event["first_session_epoch"]
    for i in range(event["requests"]):
        yield {"t_ms": (event["first_request_us"] + i * period) / 1000,
               "event": names.FETCH_REQUEST, **head, **ids,
               "session_epoch": first_epoch if first_epoch < 0 else advance_epoch(first_epoch, i),
               "full": event["full"], "partitions": event["request_partitions"], "forgotten": 0,
               "body_bytes": event["request_body_bytes"],
               "header_bytes": event["request_header_bytes"],
               "wire_bytes": event["request_wire_bytes"]}
    for i in range(event["responses"]):
        yield {"t_ms": (event["first_response_us"] + i * period) / 1000,
               "event": names.FETCH_RESPONSE, **head, **ids, "error_code": event["error_code"],
               "partitions": event["response_partitions"],
               "records_bytes": event["records_bytes"], "waited_ms": event["waited_ms"],
               "body_bytes": event["response_body_bytes"],
               "header_bytes": event["response_header_bytes"],
               "wire_bytes": event["response_wire_bytes"]}
