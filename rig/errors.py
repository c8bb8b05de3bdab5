"""The one error hierarchy of rig.

    RigError (Exception)
    ├── UserError                  bad input; the CLI prints one line and exits 2
    │   ├── ScenarioError (ValueError)   a scenario file is wrong: file, line, JSON path
    │   ├── ProtocolError (ValueError)   bytes or a version the Kafka wire codec cannot accept
    │   ├── PluginError (ImportError)    a strategy could not be loaded or breaks its Protocol
    │   ├── StrategyFailure (RuntimeError) a strategy broke its contract mid-run (exit 1)
    │   ├── RunDirError (FileExistsError) an output folder rig must not touch
    │   └── EnvironmentProblem (RuntimeError) something the machine lacks (Java for Spark)
    └── InternalError (AssertionError)  a bug in rig (an invariant of its own broke)

User errors carry everything needed for their one-line message; nothing here prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class RigError(Exception):
    """Base of every error rig raises on purpose."""


class UserError(RigError):
    """Input the user can fix. Rendered as one line, exit code 2, never a traceback."""

    exit_code = 2


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a scenario, located as precisely as we can."""

    file: str
    line: int | None
    path: str  # JSON path such as `$.topics[0].replication_factor`
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.path}: {self.message}"


class ScenarioError(UserError, ValueError):
    """A scenario file failed loading, schema or semantic checks; holds every problem found."""

    def __init__(self, problems: list[Problem]):
        if not problems:
            raise InternalError("ScenarioError needs at least one problem")
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class ProtocolError(UserError, ValueError):
    """Bytes that are not a valid Kafka message, or a value or version the codec cannot encode."""


class PluginError(UserError, ImportError):
    """A strategy plugin could not be found, imported, or does not honour its Protocol."""


class StrategyFailure(UserError, RuntimeError):
    """A strategy broke its contract during a run (a plugin's bug, not the scenario's): exit 1.

    Names the plugin, its kind and origin, the scenario and variant, the simulated time, what the
    model was doing and the last event written; `partial_run` is where the run so far was kept.
    """

    exit_code = 1

    def __init__(self, *, kind: str, plugin: str, origin: str, scenario: str, variant: str,
                 t_ms: float, during: str, last_seq: int, problem: str):
        self.kind, self.plugin, self.origin = kind, plugin, origin
        self.scenario, self.variant, self.t_ms = scenario, variant, t_ms
        self.during, self.last_seq, self.problem = during, last_seq, problem
        self.partial_run: object | None = None  # a Path, set by the pipeline when it keeps one
        super().__init__(problem)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by its fields: a variant simulated in a worker process raises it there."""
        fields = {name: getattr(self, name) for name in (
            "kind", "plugin", "origin", "scenario", "variant", "t_ms", "during", "last_seq",
            "problem")}
        return (_strategy_failure, (fields,))

    def __str__(self) -> str:
        kept = (f"; the run so far is kept in {self.partial_run}"
                if self.partial_run is not None else "")
        return (f"{self.kind} strategy {self.plugin!r} (from {self.origin}) broke its contract in "
                f"scenario {self.scenario!r}, variant {self.variant!r}, at t={self.t_ms:g} ms "
                f"(after event #{self.last_seq}), {self.during}: {self.problem}{kept}")


def _strategy_failure(fields: dict[str, Any]) -> StrategyFailure:
    return StrategyFailure(**fields)


class RunDirError(UserError, FileExistsError):
    """An output directory that rig refuses to write into (it would lose someone's files)."""


class EnvironmentProblem(UserError, RuntimeError):
    """The machine lacks something rig needs, such as Java for Spark."""


class InternalError(RigError, AssertionError):
    """rig broke one of its own invariants: a bug to report, not a user mistake."""
