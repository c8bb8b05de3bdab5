"""A large model is built with the cycle collector paused and frozen while it runs; a small one
is not; every model runs with the run's thresholds; an error anywhere gives the collector back
as it was."""

from __future__ import annotations

import gc

import pytest

from rig.engine.heap import LARGE_MODEL_REPLICAS, RUN_GC_THRESHOLD, LongLivedModel


def test_a_large_model_is_built_without_collections_and_frozen_while_it_runs() -> None:
    assert gc.isenabled() and gc.get_freeze_count() == 0
    with LongLivedModel(LARGE_MODEL_REPLICAS) as heap:
        assert not gc.isenabled()
        model: list[list[int]] = [[] for _ in range(1000)]  # noqa: F841 (lives on)
        heap.built()
        assert gc.isenabled() and gc.get_freeze_count() >= 1000
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_small_model_is_neither_paused_nor_frozen() -> None:
    with LongLivedModel(LARGE_MODEL_REPLICAS - 1) as heap:
        assert gc.isenabled()
        heap.built()
        assert gc.get_freeze_count() == 0
    assert gc.isenabled()


@pytest.mark.parametrize("replicas", [1, LARGE_MODEL_REPLICAS])
def test_a_run_has_its_thresholds_and_gives_back_the_callers(replicas: int) -> None:
    before = gc.get_threshold()
    assert before != RUN_GC_THRESHOLD
    with pytest.raises(ValueError), LongLivedModel(replicas) as heap:
        assert gc.get_threshold() == RUN_GC_THRESHOLD
        heap.built()
        assert gc.get_threshold() == RUN_GC_THRESHOLD
        raise ValueError("a plugin failed")
    assert gc.get_threshold() == before


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


@pytest.mark.parametrize("replicas", [1, LARGE_MODEL_REPLICAS])
def test_models_on_two_threads_give_back_the_callers_collector_whichever_ends_last(
        replicas: int) -> None:
    """Two runs in one process (two `rig run`s on threads): the second starts while the first
    runs and ends after it. The collector is the process's: the first one's end must not give
    the caller's settings back under the second, nor the second's end leave the run's behind
    (it did: each saved the settings it saw, the second saw the first's)."""
    before = gc.get_threshold()
    first = LongLivedModel(replicas)
    first.__enter__()
    second = LongLivedModel(replicas)
    second.__enter__()
    assert not gc.isenabled() if replicas >= LARGE_MODEL_REPLICAS else gc.isenabled()
    first.built()
    assert not gc.isenabled() if replicas >= LARGE_MODEL_REPLICAS else gc.isenabled()
    second.built()
    assert gc.isenabled()
    first.__exit__(None, None, None)
    assert gc.get_threshold() == RUN_GC_THRESHOLD  # the second still runs
    if replicas >= LARGE_MODEL_REPLICAS:
        assert gc.get_freeze_count() > 0  # its model stays out of collections
    second.__exit__(None, None, None)
    assert gc.get_threshold() == before
    assert gc.isenabled() and gc.get_freeze_count() == 0
