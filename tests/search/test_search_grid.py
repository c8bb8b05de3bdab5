"""The sweep grid: parsing `--grid` values as YAML, the cross product with seeds, --set form."""

from __future__ import annotations

import pytest

from rig.search.grid import GridError, parse_axis, parse_grid, points


def test_values_are_yaml_and_brackets_do_not_split() -> None:
    axis = parse_axis("topics.0.assignment=[[0, 1]],[[1, 0]]")
    assert axis.key == "topics.0.assignment"
    assert axis.values == ([[0, 1]], [[1, 0]])
    assert parse_axis("duration=1s, 2s").values == ("1s", "2s")
    assert parse_axis("topics.0.partitions=100,400").values == (100, 400)


@pytest.mark.parametrize("text", ["nokey", "=1,2", "a=", "a=1,,2", "a=1,1"])
def test_bad_grid_is_a_user_error(text: str) -> None:
    with pytest.raises(GridError):
        parse_axis(text)


def test_a_key_twice_or_no_grid_is_refused() -> None:
    with pytest.raises(GridError, match="more than once"):
        parse_grid(["a=1,2", "a=3"])
    with pytest.raises(GridError, match="at least one"):
        parse_grid([])


def test_cross_product_with_seeds_fastest() -> None:
    grid = points(parse_grid(["a=1,2", "b=x,y,z"]), [7, 8])
    assert len(grid) == 12
    assert [p.index for p in grid] == list(range(12))
    assert grid[0].params == {"a": 1, "b": "x"} and grid[0].seed == 7
    assert grid[1].params == {"a": 1, "b": "x"} and grid[1].seed == 8
    assert grid[-1].params == {"a": 2, "b": "z"} and grid[-1].seed == 8
    assert grid[2].sets() == ['a=1', 'b="y"']
