"""Faults: each kind has `inject` and `heal`; a schedule fires them at a time or after an event,
heals them after their duration, and heals whatever is left when the run ends (Jepsen's nemesis)."""

from rig.faults.kinds import KINDS, Fault
from rig.faults.schedule import FaultSchedule

__all__ = ["KINDS", "Fault", "FaultSchedule"]
