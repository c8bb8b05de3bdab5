"""The Kafka APIs rig speaks on the wire: each one's api_key, the versions rig knows and the first
flexible version (KIP-482: compact encodings, tagged fields, request header v2 / response header
v1), as each message's JSON gives them (clients/src/main/resources/common/message/*.json)."""

from __future__ import annotations

from dataclasses import dataclass

from rig.errors import ProtocolError


@dataclass(frozen=True, slots=True, eq=False)
class Api:
    """One API. `versions` is the union over the releases rig models (Kafka 4.0 dropped the
    oldest of several, KIP-896: a release's own range is its profile's business)."""

    name: str
    key: int
    versions: range
    first_flexible: int  # the JSON's "flexibleVersions": "N+"

    def is_flexible(self, version: int) -> bool:
        """Whether `version` uses compact encodings, tagged fields and header v2 / v1."""
        return version >= self.first_flexible

    def check_version(self, version: int) -> None:
        """Raise ProtocolError unless `version` is one of this API's that rig speaks."""
        if type(version) is not int or version not in self.versions:
            raise ProtocolError(
                f"{self.name} version {version!r} is not supported "
                f"(rig speaks v{self.versions[0]}–v{self.versions[-1]})"
            )


# Produce: ProduceRequest.json "validVersions" "0-11" at 3.9, "3-12" at 4.0 (v12: KIP-890's
# transactions v2), "3-13" at 4.1 (v13: topic ids, KIP-516); "flexibleVersions": "9+" (2.8).
PRODUCE = Api("Produce", 0, range(0, 14), 9)
# Fetch: FetchRequest.json "0-17" at 3.9, "4-18" at 4.1 (v18: KIP-1166); "flexibleVersions": "12+".
FETCH = Api("Fetch", 1, range(0, 19), 12)
# ListOffsets: ListOffsetsRequest.json "0-9" at 3.9, "1-10" at 4.0 (KIP-1075), "1-11" at 4.2
# (KIP-1023); "flexibleVersions": "6+".
LIST_OFFSETS = Api("ListOffsets", 2, range(0, 12), 6)
# OffsetForLeaderEpochRequest.json: "0-4", "flexibleVersions": "4+" (0.11 to 4.x).
OFFSETS_FOR_LEADER_EPOCH = Api("OffsetsForLeaderEpoch", 23, range(0, 5), 4)

APIS = {api.key: api for api in (PRODUCE, FETCH, LIST_OFFSETS, OFFSETS_FOR_LEADER_EPOCH)}


def api_of(key: int) -> Api:
    """The API with api_key `key`; ProtocolError if rig does not speak it."""
    api = APIS.get(key)
    if api is None:
        spoken = ", ".join(f"{a.name} ({a.key})" for a in APIS.values())
        raise ProtocolError(f"api_key {key} is not one rig speaks: {spoken}")
    return api
