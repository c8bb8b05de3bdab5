"""The simulation kernel: clock, ordered queue and seeded random streams (no Kafka here)."""

from rig.engine.kernel import NORMAL, URGENT, Simulation, Timer
from rig.engine.rng import Streams

__all__ = ["NORMAL", "URGENT", "Simulation", "Streams", "Timer"]
