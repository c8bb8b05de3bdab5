"""Shared fixtures: small scenario files written on the fly."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SMALL = """
name: small
seed: 7
duration: 5s
kafka: "1.1"
cluster:
  brokers: 2
topics:
  - name: test
    partitions: 10
    replication_factor: 2
variants:
  v6:
    protocol: {fetch_version: 6}
    strategies: {fetch_session: sessionless}
  v7:
    strategies: {fetch_session: incremental}
"""


@pytest.fixture
def write_scenario(tmp_path: Path) -> Callable[[str, str], Path]:
    def write(text: str = SMALL, name: str = "scenario.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return path

    return write
