"""The session check must catch a client that breaks KIP-227's epoch sequence (a planted bug)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rig.checks import Status
from rig.scenario.load import load_scenario
from rig.simulate import simulate
from rig.strategies.fetch_session.base import SessionRequest
from rig.strategies.fetch_session.incremental import Incremental, IncrementalClient
from tests.conftest import SMALL


class StuckEpochClient(IncrementalClient):
    """Planted bug: never advances its epoch after the first incremental fetch."""

    def on_response(self, request: SessionRequest, error_code: int, session_id: int) -> None:
        if request.full or error_code:
            super().on_response(request, error_code, session_id)


class StuckEpochSessions(Incremental):
    name = "stuck-epoch"

    def new_client(self) -> StuckEpochClient:
        return StuckEpochClient()


def test_the_check_passes_a_correct_client(write_scenario: Any, tmp_path: Path) -> None:
    variant = load_scenario(write_scenario(SMALL)).variant("v7")
    result = simulate(variant, tmp_path / "v7.jsonl")
    assert {c.name: c.status for c in result.checks}["fetch-session-protocol"] is Status.OK


def test_the_check_catches_a_client_that_repeats_an_epoch(
        write_scenario: Any, tmp_path: Path, monkeypatch: Any) -> None:
    from rig.strategies import registry

    original = registry.instantiate

    def planted(kind: str, name: str, options: dict[str, Any], **kw: Any) -> Any:
        return StuckEpochSessions() if kind == "fetch_session" else original(kind, name, options,
                                                                             **kw)

    monkeypatch.setattr(registry, "instantiate", planted)
    variant = load_scenario(write_scenario(SMALL)).variant("v7")
    result = simulate(variant, tmp_path / "v7.jsonl")
    [check] = [c for c in result.checks if c.name == "fetch-session-protocol"]
    assert check.status is Status.FAILED
    assert check.violations[0]["error_code"] == 71
