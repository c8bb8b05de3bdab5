"""rig: a declarative, deterministic test rig for Kafka's replication data plane.

Public surface: load a scenario, simulate a variant, and the error types. The CLI (`rig`) drives
the whole pipeline; Spark is imported only by the analysis stage.

`load_scenario` and `simulate` are imported when first used (PEP 562): importing a part of rig
(the CLI for `rig --help` or `rig validate`, a worker's preload) does not import the whole
model (about a second of start-up).
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from rig._version import __version__
from rig.errors import RigError, ScenarioError, UserError

if TYPE_CHECKING:
    from rig.scenario.load import load_scenario
    from rig.simulate import simulate

__all__ = ["RigError", "ScenarioError", "UserError", "__version__", "load_scenario", "simulate"]


def __getattr__(name: str) -> Any:
    if name == "load_scenario":
        from rig.scenario.load import load_scenario

        return load_scenario
    if name == "simulate":
        from rig.simulate import simulate

        return simulate
    raise AttributeError(f"module 'rig' has no attribute {name!r}")


class _Rig(types.ModuleType):
    """`rig.simulate` is the function, as when this module imported it eagerly: the import
    system's binding of the submodule rig.simulate to the package's attribute is not kept."""

    def __setattr__(self, name: str, value: Any) -> None:
        if not (name == "simulate" and isinstance(value, types.ModuleType)):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Rig
