"""rig: a declarative, deterministic test rig for Kafka's replication data plane.

Public surface: load a scenario, simulate a variant, and the error types. The CLI (`rig`) drives
the whole pipeline; Spark is imported only by the analysis stage.
"""

from rig._version import __version__
from rig.errors import RigError, ScenarioError, UserError
from rig.scenario.load import load_scenario
from rig.simulate import simulate

__all__ = ["RigError", "ScenarioError", "UserError", "__version__", "load_scenario", "simulate"]
