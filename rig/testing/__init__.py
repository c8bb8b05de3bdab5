"""Conformance kit for strategy authors: one call from your own pytest suite checks your class
against its kind's contract on rig's standard scenarios.

    from rig.testing import check_strategy

    def test_my_placement_honours_the_contract():
        check_strategy("placement", MyPlacement)      # or check_placement(MyPlacement)

Kits: check_placement, check_fetch_session, check_replication, check_isr.

A failing check raises ConformanceError (an AssertionError) listing every problem found.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from rig.scenario.model import STRATEGY_KINDS
from rig.strategies.kinds import KINDS
from rig.testing._common import ConformanceError, Report, static_problems
from rig.testing._fetch_session import check_fetch_session
from rig.testing._isr import check_isr
from rig.testing._placement import STANDARD_CLUSTERS, StandardCluster, check_placement
from rig.testing._replication import STANDARD_CASES, LogPair, check_replication

__all__ = [
    "KITS",
    "STANDARD_CASES",
    "STANDARD_CLUSTERS",
    "ConformanceError",
    "LogPair",
    "Report",
    "StandardCluster",
    "check_fetch_session",
    "check_isr",
    "check_placement",
    "check_replication",
    "check_strategy",
]

# Shown as rig.testing.ConformanceError in tracebacks, where authors import it from.
ConformanceError.__module__ = Report.__module__ = __name__

# The behavioural check of each kind, as its description names it (rig.strategies.kinds).
# Kinds without one are refused rather than passed on their signatures alone.
KITS: dict[str, Callable[..., Report]] = {
    name: getattr(importlib.import_module(kind.kit.partition(":")[0]), kind.kit.partition(":")[2])
    for name, kind in KINDS.items() if kind.kit}


def check_strategy(kind: str, cls: Any, **options: Any) -> Report:
    """Check `cls` against the contract of strategy `kind`, created with `options`.

    Raises ConformanceError listing every problem; returns a Report of the cases checked.
    """
    if kind not in STRATEGY_KINDS:
        raise ValueError(f"unknown strategy kind {kind!r}; kinds: {', '.join(STRATEGY_KINDS)}")
    kit = KITS.get(kind)
    if kit is None:
        problems = static_problems(kind, cls)
        if problems:
            raise ConformanceError(kind, cls, problems)
        raise NotImplementedError(f"rig.testing has no conformance scenarios for {kind} "
                                  "strategies yet: only its signatures were checked")
    return kit(cls, **options)
