"""What every strategy kind shares: the identity attributes and the Protocol's API version.

A strategy says which version of its kind's Protocol it implements (`api_version`); the registry
refuses a version this rig cannot drive at load time, instead of letting it fail mid-run.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

# What a strategy that declares no `api_version` is taken to implement: every kind's first
# Protocol. A Protocol change that breaks plugins bumps its kind's version in the registry.
FIRST_API_VERSION = 1


class Strategy(Protocol):
    """The class attributes every strategy of every kind has.

    - `name`: the name scenarios use; for an installed plugin, the entry point's name.
    - `description`: one line, shown by `rig plugins`.
    - `api_version`: the version of its kind's Protocol the class implements (absent means 1).

    Instances are created once per simulated variant, with the scenario's `options` as keyword
    arguments, and must take all their randomness from the `random.Random` the model passes in.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    api_version: ClassVar[int]


def api_version_of(cls: Any) -> object:
    """The Protocol version `cls` declares (FIRST_API_VERSION when it declares none)."""
    return getattr(cls, "api_version", FIRST_API_VERSION)
