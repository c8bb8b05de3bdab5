"""Example rig strategies: a least-loaded rack-aware placement and an LRU fetch-session cache."""

from rig_example_plugins.least_loaded import LeastLoadedPlacement
from rig_example_plugins.lru_sessions import LruCache, LruSessions

__all__ = ["LeastLoadedPlacement", "LruCache", "LruSessions"]
