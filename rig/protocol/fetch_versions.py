"""The Fetch API's number and versions (api_key 1, v0–v18), and which of them are flexible
(KIP-482: compact encodings and tagged fields from v12): rig.protocol.apis.FETCH's."""

from __future__ import annotations

from rig.protocol.apis import FETCH

FETCH_API_KEY = FETCH.key
# v0 (0.8), v1 (0.9: throttle_time_ms), v2 (0.10: message format v1 inside), v3 (0.10.1:
# max_bytes): FetchRequest.json / FetchResponse.json "validVersions": "4-18" in Kafka 4.x, which
# dropped v0–v3 (KIP-896), "0-11" and up before; the fields of rig.protocol.fetch_request and
# fetch_response carry their versions as the JSON does. v18 (4.1, KIP-1166) the newest.
FETCH_VERSIONS = FETCH.versions
FIRST_FLEXIBLE_VERSION = FETCH.first_flexible


def is_flexible(version: int) -> bool:
    """Whether Fetch `version` uses compact encodings, tagged fields and header v2 / v1."""
    return version >= FIRST_FLEXIBLE_VERSION


def check_version(version: int) -> None:
    """Raise ProtocolError unless `version` is a Fetch version this codec speaks."""
    FETCH.check_version(version)
