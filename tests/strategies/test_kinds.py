"""One description per strategy kind (rig.strategies.kinds): the registry, the guard, the
conformance kits and the schema read it, and a kind's contract is its Protocol."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, ClassVar, Protocol

from rig import testing
from rig.scenario.model import STRATEGY_KINDS
from rig.strategies import conformance, guard, registry
from rig.strategies.kinds import KINDS, protocol_attributes, protocol_methods


class _Planted(Protocol):
    name: ClassVar[str]
    description: ClassVar[str]
    window_ms: ClassVar[int]

    def decide(self, view: Any, now_ms: float) -> int: ...

    def reset(self) -> None: ...

    def _private(self) -> None: ...


def test_a_protocol_is_read_as_its_contract() -> None:
    assert protocol_methods(_Planted) == {"decide": ("view", "now_ms"), "reset": ()}
    assert protocol_attributes(_Planted) == {"window_ms": int}


def test_every_kind_is_described_once_in_the_scenario_models_order() -> None:
    assert tuple(KINDS) == STRATEGY_KINDS


def test_the_registry_and_the_conformance_checks_read_each_kinds_description() -> None:
    for name, kind in KINDS.items():
        assert registry.BUILTIN[name] == dict(kind.builtins)
        assert registry.DEFAULTS[name] == kind.default
        assert conformance.REQUIRED_METHODS[name] == protocol_methods(kind.protocol)
        assert conformance.API_VERSIONS[name] == kind.api_versions
        assert kind.default is None or kind.default in kind.builtins
    assert conformance.REQUIRED_ATTRS["fetch_session"] == {"min_fetch_version": int}


def test_the_guard_and_the_kits_are_the_ones_described() -> None:
    assert {name for name, kind in KINDS.items() if kind.guard} == set(guard.GUARDS)
    for name, kind in KINDS.items():
        if kind.guard:
            assert guard.GUARDS[name] is getattr(guard, kind.guard)
    assert guard.CLIENT_METHODS == ("next_request", "on_response", "on_disconnect")
    assert guard.CACHE_METHODS == ("open", "mark_changed", "sent", "occupancy", "clear")
    assert {"placement": testing.check_placement,
                            "replication": testing.check_replication,
                            "isr": testing.check_isr,
                            "fetch_session": testing.check_fetch_session} == testing.KITS


def test_the_schema_lists_the_kinds() -> None:
    schema = json.loads(resources.files("rig.scenario").joinpath("scenario.schema.json")
                        .read_text("utf-8"))
    found = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            strategies = node.get("strategies")
            if isinstance(strategies, dict) and "properties" in strategies:
                found.append(tuple(strategies["properties"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    assert found and all(set(kinds) == set(STRATEGY_KINDS) for kinds in found), found
