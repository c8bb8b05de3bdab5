"""A large model is built with the cycle collector paused and frozen while it runs; a small one
leaves the collector alone; an error anywhere gives the collector back as it was."""

from __future__ import annotations

import gc

import pytest

from rig.engine.heap import LARGE_MODEL_REPLICAS, LongLivedModel


def test_a_large_model_is_built_without_collections_and_frozen_while_it_runs() -> None:
    assert gc.isenabled() and gc.get_freeze_count() == 0
    with LongLivedModel(LARGE_MODEL_REPLICAS) as heap:
        assert not gc.isenabled()
        model: list[list[int]] = [[] for _ in range(1000)]  # noqa: F841 (lives on)
        heap.built()
        assert gc.isenabled() and gc.get_freeze_count() >= 1000
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_small_model_leaves_the_collector_alone() -> None:
    with LongLivedModel(LARGE_MODEL_REPLICAS - 1) as heap:
        assert gc.isenabled()
        heap.built()
        assert gc.get_freeze_count() == 0
    assert gc.isenabled()


@pytest.mark.parametrize("built", [False, True])
def test_an_error_gives_the_collector_back(built: bool) -> None:
    with pytest.raises(ValueError), LongLivedModel(LARGE_MODEL_REPLICAS) as heap:
        if built:
            heap.built()
        raise ValueError("a plugin failed")
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_collector_the_caller_disabled_stays_disabled() -> None:
    gc.disable()
    try:
        with LongLivedModel(LARGE_MODEL_REPLICAS) as heap:
            heap.built()
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
