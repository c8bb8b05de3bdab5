"""One description per strategy kind: its Protocol, built-ins, default, run-time guard and
conformance kit. The registry, the guard and rig.testing read these; nothing else lists a kind's
methods, built-ins or default.

The methods a kind requires (name → parameter names) and its required class attributes are read
from its Protocol, so the contract is written once, as the Protocol. The kind names themselves
are `rig.scenario.model.STRATEGY_KINDS` (the scenario model cannot import strategies); the
installed entry points in pyproject.toml mirror `builtins` for pip (tests keep the three equal,
and the schema's strategy keys too).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field

from rig.scenario.model import STRATEGY_KINDS
from rig.strategies.base import FIRST_API_VERSION
from rig.strategies.compaction.base import CompactionStrategy
from rig.strategies.fetch_session.base import FetchSessionStrategy, SessionCache, SessionClient
from rig.strategies.isr.base import IsrStrategy
from rig.strategies.placement.base import PlacementStrategy
from rig.strategies.replication.base import ReplicationStrategy

# Class attributes every strategy has (rig.strategies.base.Strategy), not a kind's own.
_IDENTITY = ("name", "description", "api_version")


def protocol_methods(protocol: type) -> dict[str, tuple[str, ...]]:
    """The methods `protocol` itself declares: name → parameter names after `self`."""
    return {name: tuple(inspect.signature(fn).parameters)[1:]
            for name, fn in vars(protocol).items()
            if not name.startswith("_") and inspect.isfunction(fn)}


def protocol_attributes(protocol: type) -> dict[str, type]:
    """The class attributes `protocol` declares beyond a strategy's identity: name → type."""
    hints = typing.get_type_hints(protocol)
    out = {}
    for name in vars(protocol).get("__annotations__", {}):
        if name in _IDENTITY:
            continue
        hint = hints[name]
        args = typing.get_args(hint)
        out[name] = args[0] if typing.get_origin(hint) is typing.ClassVar and args else hint
    return out


@dataclass(frozen=True)
class Kind:
    name: str
    protocol: type
    builtins: Mapping[str, str]  # name → "module:Class"
    default: str | None  # None: the kind is not modelled by this rig version
    guard: str | None = None  # the run-time guard's class in rig.strategies.guard, if any
    kit: str | None = None  # "module:function" of its conformance kit in rig.testing
    api_versions: tuple[int, ...] = (FIRST_API_VERSION,)  # Protocol versions this rig drives
    parts: Mapping[str, type] = field(default_factory=dict)  # objects it makes: role → Protocol

    @property
    def required_methods(self) -> dict[str, tuple[str, ...]]:
        return protocol_methods(self.protocol)

    @property
    def required_attrs(self) -> dict[str, type]:
        return protocol_attributes(self.protocol)

    def part_methods(self, part: str) -> tuple[str, ...]:
        """The methods an object the strategy makes (`part`: "client", "cache") must have."""
        return tuple(protocol_methods(self.parts[part]))


_ALL = (
    Kind("placement", PlacementStrategy, {
        "kafka": "rig.strategies.placement.kafka:KafkaPlacement",
        "kraft-striped": "rig.strategies.placement.kraft:KraftStripedPlacement",
        "explicit": "rig.strategies.placement.explicit:ExplicitPlacement",
    }, default="kafka", guard="GuardedPlacement",
        kit="rig.testing._placement:check_placement"),
    Kind("replication", ReplicationStrategy, {
        "hw-truncation": "rig.strategies.replication.hw_truncation:HwTruncation",
        "leader-epoch": "rig.strategies.replication.leader_epoch:LeaderEpoch",
        "leader-epoch-once": "rig.strategies.replication.leader_epoch_once:LeaderEpochOnce",
    }, default="leader-epoch", kit="rig.testing._replication:check_replication"),
    Kind("isr", IsrStrategy, {
        "lag-time": "rig.strategies.isr.lag_time:LagTime",
        "lag-time-only": "rig.strategies.isr.lag_time_only:LagTimeOnly",
        "lag-messages": "rig.strategies.isr.lag_messages:LagMessages",
    }, default="lag-time", kit="rig.testing._isr:check_isr"),
    Kind("fetch_session", FetchSessionStrategy, {
        "sessionless": "rig.strategies.fetch_session.sessionless:Sessionless",
        "incremental": "rig.strategies.fetch_session.incremental:Incremental",
    }, default="incremental", guard="GuardedSessions",
        kit="rig.testing._fetch_session:check_fetch_session",
        parts={"client": SessionClient, "cache": SessionCache}),
    # No conformance kit yet: rig.testing refuses compaction rather than pass it on signatures.
    Kind("compaction", CompactionStrategy, {
        "kafka-cleaner": "rig.strategies.compaction.kafka_cleaner:KafkaCleaner",
        "none": "rig.strategies.compaction.none:NoCompaction",
    }, default="kafka-cleaner", guard="GuardedCompaction"),
)

KINDS: dict[str, Kind] = {kind.name: kind for kind in _ALL}
if tuple(KINDS) != STRATEGY_KINDS:  # pragma: no cover - a kind added to one list only
    raise ImportError(f"strategy kinds described {tuple(KINDS)} differ from the scenario "
                      f"model's {STRATEGY_KINDS}")

