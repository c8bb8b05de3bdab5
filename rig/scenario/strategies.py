"""The strategies a variant runs: those it names, checked against the registry, and for each
kind it does not name the default of its Kafka version (the profile's) or of the kind."""

from __future__ import annotations

from typing import Any

from rig.scenario import profiles
from rig.scenario.model import STRATEGY_KINDS, StrategyRef
from rig.scenario.problems import Collector


def read_strategies(data: dict[str, Any], kafka: str, out: Collector) -> dict[str, StrategyRef]:
    """The strategies a variant names, and for the kinds it does not name, the default of its
    Kafka version (the profile's) or of the kind."""
    from rig.strategies import registry  # registry imports the model; keep the import local

    chosen: dict[str, StrategyRef] = {}
    raw = data.get("strategies", {})
    profile = profiles.profile(kafka)
    # A follower truncates as its inter.broker.protocol.version allows: OffsetsForLeaderEpoch
    # from 0.11 (ReplicaFetcherThread.brokerSupportsLeaderEpochRequest), its v1 answer with the
    # epoch (KIP-279's walk-back) from 2.0; so a newer release at an older IBP (a rolling
    # upgrade) truncates as that IBP's release did.
    ibp = data.get("cluster", {}).get("config", {}).get("inter.broker.protocol.version", kafka)
    by_version = {"replication": profiles.ibp_capped("replication", kafka, ibp),
                  "isr": profile.isr,
                  "controller": profile.controller}
    for kind in STRATEGY_KINDS:
        value = raw.get(kind)
        if value is None:
            default = by_version.get(kind, registry.DEFAULTS[kind])
            if default is not None:
                chosen[kind] = StrategyRef(default, profile.isr_options if kind == "isr" else {})
            continue
        ref = (StrategyRef(value) if isinstance(value, str)
               else StrategyRef(value["name"], dict(value.get("options", {}))))
        if ":" not in ref.name and ref.name not in registry.known_names(kind):
            known = ", ".join(registry.known_names(kind)) or "none yet in this rig version"
            out.add(("strategies", kind), f"unknown {kind} strategy {ref.name!r}; known: {known}")
        chosen[kind] = ref
    return chosen
