"""README's version table: every row of the profiles' RULES, its value from each release that
changed it, and Kafka's source for the change (tests/test_readme.py keeps README's copy so)."""

from __future__ import annotations

from typing import Any

from rig.scenario.profiles import FETCH_VERSION_BY_IBP, POSITION_VALIDATION_FETCH_VERSION
from rig.scenario.version_rules import RULES


def _cell(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value / 1000:g} s" if value >= 1000 else str(value)
    return str(value)


def rules_table() -> str:
    """README's version table: each rule, its value from each release that changed it, and
    the source of the change (Markdown)."""
    lines = ["| Rule | Values by release | Source |", "|---|---|---|"]
    for rule in RULES:
        values = "; ".join(f"{since}+: {_cell(value)}" for since, value in rule.values)
        lines.append(f"| {rule.what} | {values} | {rule.source} |")
    fetch = "; ".join(f"{since}+: v{version}" for since, version in reversed(FETCH_VERSION_BY_IBP))
    lines.append(f"| follower Fetch version (inter.broker.protocol.version) | {fetch} | "
                 "ReplicaFetcherThread |")
    lines.append("| a consumer validates its position against a new leader's log before fetching "
                 "again (OffsetsForLeaderEpoch), going back to where the log it read diverged "
                 f"| Fetch v{POSITION_VALIDATION_FETCH_VERSION}+ (2.3+ clients and brokers; "
                 "a consumer's `fetch_version` sets its client's) | KAFKA-7747, KIP-320 "
                 "(SubscriptionState.maybeValidatePositionForCurrentLeader, "
                 "maybeCompleteValidation) |")
    return "\n".join(lines)
