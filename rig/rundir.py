"""The run directory's layout (Jepsen's store): every file a run writes is named here and only here,
with typed helpers to read and write it.

    RUN_DIR/
      run.json                 what was run (scenario, seed, rig version, hash, command, variants)
      scenario.yaml            the scenario as resolved
      command.txt              the command that reproduces the run
      events/<variant>.jsonl   the event logs, written by the simulation
      checks.json              the online checks' verdicts and each variant's simulation figures
      analysis/events.parquet  the event logs parsed once into one columnar table
      metrics/<table>.json     the metric tables the analysis writes and the report draws
      summary.json             the results and the expectations' verdicts
      report.html              the report
      export/                  copies for other tools (`rig report --export`)

Each stage writes its files and the next reads them, so `rig analyze RUN_DIR` and `rig report
RUN_DIR` can run alone. Readers are tolerant where a partial or older run is still useful: a
missing JSON file reads as None (or an empty mapping for run.json), never an error.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import orjson

__all__ = [
    "ANALYSIS_DIR", "CHECKS", "COMMAND", "EVENTS_DIR", "EVENT_TABLE", "EXPORT_DIR", "METRICS_DIR",
    "METRIC_TABLES", "REPORT", "RUN_JSON", "SCENARIO", "SUMMARY", "checks_path", "command_path",
    "event_log", "event_logs", "event_table_path", "export_dir", "metric_file",
    "metric_path", "metric_paths", "read_checks", "read_json", "read_metric", "read_run",
    "read_scenario_text", "read_summary", "report_path", "run_json_path", "scenario_path",
    "summary_path", "write_checks", "write_command", "write_json", "write_json_atomic",
    "write_metric", "write_run", "write_scenario", "write_summary",
]

RUN_JSON = "run.json"
SCENARIO = "scenario.yaml"
COMMAND = "command.txt"
EVENTS_DIR = "events"
_EVENT_LOG_SUFFIX = ".jsonl"
CHECKS = "checks.json"
ANALYSIS_DIR = "analysis"
EVENT_TABLE = "events.parquet"
METRICS_DIR = "metrics"
_METRIC_SUFFIX = ".json"
SUMMARY = "summary.json"
REPORT = "report.html"
EXPORT_DIR = "export"

# The metric tables, by the name of their file under metrics/ without `.json` (README lists
# them): each is written by one analysis stage and read by the report or an export.
FETCH_TIMESERIES = "fetch_timeseries"
FETCH_SIZES = "fetch_sizes"
FETCH_TIMELINE = "fetch_timeline"
FAULTS = "faults"
RECOVERY = "recovery"
PARTITION_TIMELINE = "partition_timeline"
PRODUCE_TIMELINE = "produce_timeline"
SESSIONS = "sessions"
SESSION_CHURN = "session_churn"
ISR_MEMBERSHIP = "isr_membership"
ISR_PROPAGATION = "isr_propagation"
ISR_STALENESS = "isr_staleness"
CONSUMER_LAG = "consumer_lag"
STORAGE = "storage"
LOST_RECORDS = "lost_records"
TRAFFIC = "traffic"
METRIC_TABLES: tuple[str, ...] = (
    FETCH_TIMESERIES, FETCH_SIZES, FETCH_TIMELINE, FAULTS, RECOVERY, PARTITION_TIMELINE,
    PRODUCE_TIMELINE, SESSIONS, SESSION_CHURN, ISR_MEMBERSHIP, ISR_PROPAGATION, ISR_STALENESS,
    CONSUMER_LAG, STORAGE, LOST_RECORDS, TRAFFIC,
)


# Paths ------------------------------------------------------------------------------------------


def run_json_path(run_dir: Path) -> Path:
    return Path(run_dir) / RUN_JSON


def scenario_path(run_dir: Path) -> Path:
    return Path(run_dir) / SCENARIO


def command_path(run_dir: Path) -> Path:
    return Path(run_dir) / COMMAND


def event_log(run_dir: Path, variant: str) -> Path:
    """RUN_DIR/events/<variant>.jsonl, where the simulation of `variant` writes its log."""
    return Path(run_dir) / EVENTS_DIR / f"{variant}{_EVENT_LOG_SUFFIX}"


def event_logs(run_dir: Path) -> list[Path]:
    """Every event log of the run, in name order (none: an empty list)."""
    return sorted((Path(run_dir) / EVENTS_DIR).glob(f"*{_EVENT_LOG_SUFFIX}"))


def checks_path(run_dir: Path) -> Path:
    return Path(run_dir) / CHECKS


def event_table_path(run_dir: Path) -> Path:
    """RUN_DIR/analysis/events.parquet: the event logs as one columnar table. In the run
    directory, not a temp folder, so a cluster's executors read it where the driver wrote it."""
    return Path(run_dir) / ANALYSIS_DIR / EVENT_TABLE


def metric_path(run_dir: Path, table: str) -> Path:
    """RUN_DIR/metrics/<table>.json for one of METRIC_TABLES."""
    if table not in METRIC_TABLES:
        raise ValueError(f"unknown metric table {table!r}; known: {', '.join(METRIC_TABLES)}")
    return Path(run_dir) / METRICS_DIR / f"{table}{_METRIC_SUFFIX}"


def metric_file(table: str) -> str:
    """The table's path inside a run directory as a reader is told it: metrics/<table>.json."""
    return f"{METRICS_DIR}/{table}{_METRIC_SUFFIX}"


def metric_paths(run_dir: Path) -> dict[str, Path]:
    """Every metric table the run has on disk, by table name, in name order (an older or newer
    run's tables included: an export copies what is there)."""
    found = sorted((Path(run_dir) / METRICS_DIR).glob(f"*{_METRIC_SUFFIX}"))
    return {path.name[: -len(_METRIC_SUFFIX)]: path for path in found}


def summary_path(run_dir: Path) -> Path:
    return Path(run_dir) / SUMMARY


def report_path(run_dir: Path) -> Path:
    return Path(run_dir) / REPORT


def export_dir(run_dir: Path) -> Path:
    return Path(run_dir) / EXPORT_DIR


# JSON -------------------------------------------------------------------------------------------


def read_json(path: Path) -> Any:
    """Parse a JSON file; None when it does not exist (a partial run dir is still analysable).
    A file that is not JSON raises orjson.JSONDecodeError (a ValueError)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return None
    return orjson.loads(data)


def write_json(path: Path, data: Any) -> None:
    """Write `data` as indented JSON (the files people read: run.json, summary.json, checks.json),
    replacing the file in one step."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))
    os.replace(tmp, path)


def write_json_atomic(path: Path, value: Any) -> None:
    """Write `value` as compact JSON (the metric tables) so readers see the old file or the new
    one, never half of one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE))
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; the file is meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_run(run_dir: Path) -> dict[str, Any]:
    """run.json as a dict; {} when it is missing or not an object."""
    found = read_json(run_json_path(run_dir))
    return found if isinstance(found, dict) else {}


def write_run(run_dir: Path, info: dict[str, Any]) -> None:
    write_json(run_json_path(run_dir), info)


def write_scenario(run_dir: Path, text: str) -> None:
    scenario_path(run_dir).write_text(text, "utf-8")


def read_scenario_text(run_dir: Path) -> str:
    """scenario.yaml's text (undecodable bytes replaced); FileNotFoundError when missing."""
    return scenario_path(run_dir).read_bytes().decode("utf-8", "replace")


def write_command(run_dir: Path, command: str) -> None:
    command_path(run_dir).write_text(command + "\n", "utf-8")


def read_checks(run_dir: Path) -> dict[str, Any] | None:
    """checks.json ({"variants": {name: {"checks": ..., "simulation": ...}}}); None if missing."""
    found = read_json(checks_path(run_dir))
    return found if isinstance(found, dict) else None


def write_checks(run_dir: Path, checks: dict[str, Any]) -> None:
    write_json(checks_path(run_dir), checks)


def read_summary(run_dir: Path) -> dict[str, Any] | None:
    found = read_json(summary_path(run_dir))
    return found if isinstance(found, dict) else None


def write_summary(run_dir: Path, summary: dict[str, Any]) -> None:
    write_json(summary_path(run_dir), summary)


def read_metric(run_dir: Path, table: str) -> Any:
    """A metric table's parsed JSON; None when the file is missing."""
    return read_json(metric_path(run_dir, table))


def write_metric(run_dir: Path, table: str, value: Any) -> None:
    write_json_atomic(metric_path(run_dir, table), value)
