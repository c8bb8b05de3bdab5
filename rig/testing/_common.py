"""What every conformance check shares: its result, its failure, and the load-time checks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rig.strategies import registry


class ConformanceError(AssertionError):
    """A strategy does not honour its kind's contract; the message lists every problem found.

    An AssertionError, so pytest reports it as a failed test with the whole list.
    """

    def __init__(self, kind: str, cls: Any, problems: list[str]):
        self.kind = kind
        self.cls = cls
        self.problems = problems = list(dict.fromkeys(problems))  # once each, in order found
        label = getattr(cls, "__qualname__", repr(cls))
        shown = problems[:MAX_SHOWN]
        more = (f"\n  … and {len(problems) - MAX_SHOWN} more" if len(problems) > MAX_SHOWN
                else "")
        super().__init__(f"{label} does not honour the {kind} contract "
                         f"({len(problems)} problem{'s' if len(problems) != 1 else ''}):\n"
                         + "\n".join(f"  - {p}" for p in shown) + more)


MAX_SHOWN = 20


@dataclass
class Report:
    """What a passing check ran: one line per case, for authors who want to see it."""

    kind: str
    strategy: str
    cases: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return (f"{self.strategy} honours the {self.kind} contract on {len(self.cases)} cases:\n"
                + "\n".join(f"  - {case}" for case in self.cases))


def static_problems(kind: str, cls: Any) -> list[str]:
    """The registry's load-time checks (attributes, Protocol version, method signatures)."""
    return [f"[load] {p}" for p in registry.conformance_problems(kind, cls)]


def create(kind: str, cls: Any, options: dict[str, Any]) -> tuple[Any, list[str]]:
    """An instance of `cls` with `options`, or the problem creating it."""
    try:
        return cls(**options), []
    except Exception as exc:
        return None, [f"[load] {cls.__qualname__}(**{options}) raised "
                      f"{registry.describe_exception(exc)}"]
