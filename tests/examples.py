"""How many examples a property test draws: the count it names, ten times that under Hypothesis
profile `deep` (`make explore` and the nightly explore workflow), where a test's own
`max_examples` would otherwise override the profile's."""

from __future__ import annotations

import os

SCALE = 10 if os.environ.get("HYPOTHESIS_PROFILE") == "deep" else 1


def examples(count: int) -> int:
    return count * SCALE
