"""Kafka version profiles: the defaults a scenario gets from `kafka: "X.Y"`.

The follower Fetch version follows inter.broker.protocol.version exactly as Kafka's
ReplicaFetcherThread chooses it (1.0 → v5, which is v6 on the wire; 1.1 → v7; … 3.9 → v17).
"""

from __future__ import annotations

from dataclasses import dataclass

VERSIONS = ("0.11", "1.0", "1.1", "2.0", "2.1", "2.3", "2.4", "2.5", "2.7", "2.8", "3.0", "3.1",
            "3.5", "3.7", "3.8", "3.9")

# inter.broker.protocol.version (lowest version that switched) → follower Fetch version.
_FETCH_VERSION_BY_IBP = (("3.9", 17), ("3.7", 16), ("3.5", 15), ("3.1", 13), ("2.7", 12),
                         ("2.3", 11), ("2.1", 10), ("2.0", 8), ("1.1", 7), ("0.11", 5))


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def fetch_version_for_ibp(ibp: str) -> int:
    """The Fetch version a follower sends under inter.broker.protocol.version `ibp`."""
    for since, fetch_version in _FETCH_VERSION_BY_IBP:
        if _key(ibp) >= _key(since):
            return fetch_version
    raise ValueError(f"inter.broker.protocol.version {ibp} is older than rig models (0.11)")


@dataclass(frozen=True)
class Profile:
    """Defaults that differ between Kafka releases."""

    version: str
    replica_lag_time_max_ms: int
    zookeeper_session_timeout_ms: int
    hw_holds_below_min_isr: bool  # 3.7+ (KIP-966's eligible-leader work)
    isr_rejoin_needs_epoch_start: bool  # 2.1+
    controller_detects_bounce: bool  # 2.2+ (KIP-380 broker epochs)

    @property
    def fetch_version(self) -> int:
        return fetch_version_for_ibp(self.version)


def profile(version: str) -> Profile:
    if version not in VERSIONS:
        raise ValueError(f"unknown kafka profile {version!r}; known: {', '.join(VERSIONS)}")
    after_kip537 = _key(version) >= (2, 5)  # KIP-537 raised both defaults in 2.5
    return Profile(version=version,
                   replica_lag_time_max_ms=30_000 if after_kip537 else 10_000,
                   zookeeper_session_timeout_ms=18_000 if after_kip537 else 6_000,
                   hw_holds_below_min_isr=_key(version) >= (3, 7),
                   isr_rejoin_needs_epoch_start=_key(version) >= (2, 1),
                   controller_detects_bounce=_key(version) >= (2, 2))


DEFAULT_PROFILE = "3.9"
