from __future__ import annotations

import os
import subprocess
import sys

from rig.engine import Streams


def test_same_seed_and_name_give_the_same_stream() -> None:
    a, b = Streams(42), Streams(42)
    assert [a.get("x").random() for _ in range(5)] == [b.get("x").random() for _ in range(5)]


def test_streams_are_independent_of_each_other() -> None:
    a, b = Streams(42), Streams(42)
    a.get("other").random()  # drawing from another stream changes nothing here
    for _ in range(100):
        b.get("noise").random()
    assert a.get("x").random() == b.get("x").random()
    assert Streams(42).get("x").random() != Streams(43).get("x").random()


def test_streams_do_not_depend_on_the_hash_seed() -> None:
    code = "from rig.engine import Streams; print(Streams(7).get('placement').random())"
    outputs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        for seed in ("0", "1", "12345")}
    assert len(outputs) == 1
