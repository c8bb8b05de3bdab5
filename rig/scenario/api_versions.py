"""The versions a client of each release sends for the APIs rig sizes exactly (besides Fetch,
whose follower version goes by inter.broker.protocol.version: rig.scenario.profiles).

Client and brokers are the same release in rig, so ApiVersions (KIP-35) settles on the client's
newest version: each table gives, per release that raised it, that newest version, read from the
release's own schema list.
"""

from __future__ import annotations

from rig.scenario.version_rules import release_key

# (first release, newest Produce version), newest first. Sources, at each release's tag:
# 0.8.2.2, 0.9.0.1, 0.10.0.1 and 0.11.0.0 Protocol.java's PRODUCE_REQUEST array (v0; v1 adds
# throttle_time_ms; v2 message format v1, KIP-32; v3 transactional_id and record batch v2,
# KIP-98); 1.0.0 to 2.3.0 ProduceRequest.java's schemaVersions() (1.0: v5, KIP-112 / KIP-107;
# 2.0: v6, KIP-219; 2.1: v7, zstd, KIP-110); from 2.4.0 ProduceRequest.json's validVersions
# (2.4: "0-8", KIP-467; 2.8: "0-9", flexible; 3.7: "0-10", KIP-951; 3.8: "0-11", KIP-890;
# 4.0: "3-12", transactions v2, KIP-890, and v0–v2 gone, KIP-896; 4.1: "3-13", topic ids,
# KIP-516). 4.0–4.2 are not in rig's Kafka mirror: their JSON's comments say as much.
PRODUCE_VERSION_BY_RELEASE = (("4.1", 13), ("4.0", 12), ("3.8", 11), ("3.7", 10), ("2.8", 9),
                              ("2.4", 8), ("2.1", 7), ("2.0", 6), ("1.0", 5), ("0.11", 3),
                              ("0.10", 2), ("0.9", 1), ("0.8.2", 0))


def _newest(table: tuple[tuple[str, int], ...], release: str, what: str) -> int:
    for since, version in table:
        if release_key(release) >= release_key(since):
            return version
    raise ValueError(f"{what}: release {release} is older than rig models (0.8.2)")


def produce_version(release: str) -> int:
    """The Produce version a producer of Kafka `release` sends to brokers of that release."""
    return _newest(PRODUCE_VERSION_BY_RELEASE, release, "Produce")
