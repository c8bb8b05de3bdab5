"""What cross-zone traffic costs, as data (docs/kafka.md §13): price profiles in USD per GB
(10^9 bytes) per direction, and the scenario's `cost:` key resolved against them.

A byte that crosses a zone boundary is billed `out` on the sender's side and `in` on the
receiver's; same-zone bytes are free. With `broker_to_broker_free` (Amazon MSK) bytes between two
brokers are not billed, whatever their class. Nothing here imports the model or Spark.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["DEFAULT_PROFILE", "PROFILES", "Prices", "resolve"]

GB = 10**9
MONTH_MS = 30 * 24 * 3600 * 1000  # a month is 30 days


@dataclass(frozen=True)
class Prices:
    profile: str
    out_usd_per_gb: float
    in_usd_per_gb: float
    broker_to_broker_free: bool = False

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


PROFILES: dict[str, Prices] = {
    # AWS: $0.01/GB on each side of an inter-AZ transfer ($0.02 per byte moved).
    "aws": Prices("aws", 0.01, 0.01),
    # GCP: inter-zone egress about $0.01/GB; ingress is free.
    "gcp": Prices("gcp", 0.01, 0.0),
    # Azure's inter-AZ price has changed several times: a parameter, this is only its default.
    "azure": Prices("azure", 0.01, 0.01),
    # Amazon MSK: replication between the cluster's brokers is not billed; client traffic is.
    "msk": Prices("msk", 0.01, 0.01, broker_to_broker_free=True),
    "none": Prices("none", 0.0, 0.0),
}
DEFAULT_PROFILE = "aws"


def resolve(raw: dict[str, Any] | None, override: str | None = None) -> Prices:
    """The prices of a scenario's `cost:` mapping (already schema-checked), with `override`
    (`rig run --price-profile`) replacing its profile: the profile's prices, then any price the
    mapping sets itself (an override of the profile keeps the mapping's prices only when the
    profile stays the same)."""
    raw = dict(raw or {})
    named = raw.get("profile", DEFAULT_PROFILE)
    if override is not None and override != named:
        named, raw = override, {}
    base = PROFILES[named]
    return Prices(named,
                  float(raw.get("out_usd_per_gb", base.out_usd_per_gb)),
                  float(raw.get("in_usd_per_gb", base.in_usd_per_gb)),
                  bool(raw.get("broker_to_broker_free", base.broker_to_broker_free)))
