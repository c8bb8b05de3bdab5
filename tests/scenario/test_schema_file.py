"""The JSON files rig ships parse without duplicate keys (json.loads keeps the last one silently,
so a merge that repeats a block would hide a change made to the first copy)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

SHIPPED_JSON = sorted((ROOT / "rig").rglob("*.json"))


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise ValueError(f"duplicate keys {repeated}")
    return dict(pairs)


def test_the_scenario_schema_is_shipped() -> None:
    assert ROOT / "rig" / "scenario" / "scenario.schema.json" in SHIPPED_JSON


@pytest.mark.parametrize("path", SHIPPED_JSON, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_duplicate_keys(path: Path) -> None:
    json.loads(path.read_text("utf-8"), object_pairs_hook=_refuse_duplicates)


def test_a_duplicate_key_is_caught() -> None:
    with pytest.raises(ValueError, match="duplicate keys"):
        json.loads('{"a": {"b": 1}, "a": {"b": 1}}', object_pairs_hook=_refuse_duplicates)


def _repeated_enum_values(node: Any, where: str = "$") -> list[str]:
    found = []
    if isinstance(node, dict):
        values = node.get("enum")
        if isinstance(values, list):
            texts = [json.dumps(v) for v in values]
            found += [f"{where}: {t}" for t in sorted({t for t in texts if texts.count(t) > 1})]
        for key, value in node.items():
            found += _repeated_enum_values(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _repeated_enum_values(value, f"{where}[{i}]")
    return found


def test_every_enum_of_the_schema_lists_each_value_once() -> None:
    # A repeated value is harmless to jsonschema but doubles a choice in editors and docs
    # (`controlled-shutdown` was listed twice among the fault kinds).
    schema = json.loads((ROOT / "rig" / "scenario" / "scenario.schema.json").read_text("utf-8"))
    assert _repeated_enum_values(schema) == []


def test_the_schema_lists_every_profile_and_each_ibp_up_to_3_9() -> None:
    # An editor completes `kafka:` from these enums, and the schema check refuses what they
    # lack: a profile added to profiles.py but not here could not be used.
    from rig.scenario.profiles import VERSIONS

    schema = json.loads((ROOT / "rig" / "scenario" / "scenario.schema.json").read_text("utf-8"))
    assert schema["properties"]["kafka"]["enum"] == list(VERSIONS)
    assert schema["$defs"]["overrides"]["properties"]["kafka"]["enum"] == list(VERSIONS)
    ibp = schema["$defs"]["broker_config"]["properties"]["inter.broker.protocol.version"]
    # (plus IBPs no profile is named after, such as 0.10.1)
    assert [v for v in ibp["enum"] if v in VERSIONS] == [v for v in VERSIONS
                                                          if int(v.split(".")[0]) < 4]
