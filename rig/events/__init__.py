"""Events: the names rig writes and the structlog-based JSON-lines log that writes them."""

from rig.events import names
from rig.events.log import EventLog

__all__ = ["EventLog", "names"]
