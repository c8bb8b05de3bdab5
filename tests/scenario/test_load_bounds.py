"""The loader's bounds: aliases, nesting, file size and kind, command-line values, names.

Each input here once cost gigabytes, hung, or ended in a traceback (issue 15, items 3, 7, 12
and 14); now each is one located problem, found in milliseconds.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rig.errors import ScenarioError
from rig.scenario.load import load_scenario
from rig.scenario.overrides import parse_assignment
from rig.scenario.source import Bounds, parse_value, parse_yaml
from rig.search.grid import GridError, parse_axis
from tests.conftest import SMALL

Write = Callable[..., Path]

LAUGHS = "".join(
    f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9) if n else ', '.join(['lol'] * 9)}]\n"
    for n in range(9))


def problems(path: Path, **kwargs: object) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path, **kwargs)  # type: ignore[arg-type]
    return [str(p) for p in info.value.problems]


def test_a_billion_laughs_is_refused_within_the_alias_budget(write_scenario: Write) -> None:
    path = write_scenario(LAUGHS + SMALL)
    started = time.perf_counter()
    [message] = problems(path)
    assert time.perf_counter() - started < 10
    assert message.startswith(f"{path}:") and "more than 200,000 values" in message


def test_aliases_within_the_budget_still_work() -> None:
    doc = parse_yaml("base: &b {a: 1, b: [1, 2]}\ncopy: *b\nmerged: {<<: *b, c: 3}\n", "x.yaml")
    assert doc.data["copy"] == {"a": 1, "b": [1, 2]}
    assert doc.data["merged"] == {"a": 1, "b": [1, 2], "c": 3}


def test_a_billion_laughs_through_set_is_one_short_message(write_scenario: Write) -> None:
    value = "[" + ", ".join(["&a [" + ", ".join(["lol"] * 9) + "]"] + ["*a"] * 8) + "]"
    for _ in range(8):  # each level repeats the one before nine times
        value = f"&x{_} [" + ", ".join([value] + [f"*x{_}"] * 8) + "]"
    [message] = problems(write_scenario(), sets=[f"description={value}"])
    assert "--set description" in message and "values" in message
    assert len(message) < 400


def test_deep_nesting_is_one_problem_not_a_recursion_error(write_scenario: Write) -> None:
    path = write_scenario(SMALL + "description: " + "[" * 5000 + "]" * 5000 + "\n")
    [message] = problems(path)
    assert message.startswith(f"{path}:17: $: nested more than {Bounds.DEPTH} levels")


def test_set_values_are_read_with_the_same_bounds() -> None:
    with pytest.raises(ValueError, match="nested more than"):
        parse_assignment("description=" + "[" * 1000 + "]" * 1000)
    with pytest.raises(ValueError, match="not allowed"):
        parse_assignment("name=!!python/object/apply:os.system ['true']")
    assert parse_value("{a: [1, 2]}", "--set x") == {"a": [1, 2]}


def test_grid_values_are_read_with_the_same_bounds() -> None:
    with pytest.raises(GridError, match="nested more than"):
        parse_axis("description=" + "[" * 1000 + "]" * 1000)


def test_special_files_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "scenario.fifo"
    os.mkfifo(fifo)
    [message] = problems(fifo)
    assert message == (f"{fifo}: $: is not a regular file (a FIFO, socket or device?); rig "
                       "reads scenario files from regular files only")
    assert "not a regular file" in problems(Path("/dev/zero"))[0]
    assert "is a directory" in problems(tmp_path)[0]


def test_a_file_over_the_size_bound_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"# padding\n" * (Bounds.FILE_BYTES // 10 + 1))
    [message] = problems(big)
    assert message.startswith(f"{big}: $: is ") and f"at most {Bounds.FILE_BYTES:,} bytes" in (
        message)


def test_binary_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"name: \xff\xfe\n")
    assert "is not UTF-8 text" in problems(path)[0]


@pytest.mark.parametrize("name", ["evil\n", "evil\n\n", "ok\nname"])
def test_names_may_not_end_in_a_newline(write_scenario: Write, name: str) -> None:
    path = write_scenario(SMALL.replace("name: small", f"name: {name!r}".replace("'", '"')))
    [message] = problems(path)
    assert "$.name" in message and "does not match" in message


def test_variant_names_may_not_end_in_a_newline(write_scenario: Write) -> None:
    path = write_scenario(SMALL.replace("  v7:\n", '  "v7\\n":\n'))
    [message] = problems(path)
    assert "$.variants: 'v7\\n' does not match" in message


def test_yaml_1_1_booleans_as_keys_read_as_written(write_scenario: Write) -> None:
    path = write_scenario(SMALL + """
workload:
  producers:
    - topic: test
      rate: {bursty: {rate: 100, on: 1s, off: 2s}}
""")
    (producer,) = load_scenario(path).variant("v7").producers
    assert (producer.burst_on_ms, producer.burst_off_ms) == (1000, 2000)


def test_seed_problems_are_reported_as_seed(write_scenario: Write) -> None:
    assert problems(write_scenario(), seed=-1) == [
        "--seed: $.seed: must be between 0 and 9223372036854775807 (got -1)"]
    assert load_scenario(write_scenario(), seed=5).seed == 5


def test_a_400_digit_duration_is_a_problem_not_an_overflow(write_scenario: Write) -> None:
    path = write_scenario(SMALL.replace("duration: 5s", "duration: " + "9" * 400 + "s"))
    [message] = problems(path)
    assert f"{path}:3: $.duration:" in message and "is too large" in message
    path = write_scenario(SMALL.replace("duration: 5s", "duration: " + "9" * 400))
    [message] = problems(path)
    assert f"{path}:3: $.duration:" in message and "is too large" in message
