"""Kafka's ExponentialBackoff (org.apache.kafka.common.utils): a wait that grows with the
attempts in a row, for whatever client waits so. A producer's retried batch waits until it has
waited the backoff since its last attempt (RecordAccumulator.shouldBackoff); a client's metadata
requests (rig.workload.metadata_updater) and its connection attempts to a machine that answers
nothing (rig.cluster.connection_states) wait as long.

`initial` × 2^attempt, up to `max`, times a factor drawn from [1 − jitter, 1 + jitter) at each
look (the producer's from 3.7, KIP-580). With the maximum at the initial backoff, as before 3.7
(no maximum then), it is the constant `retry.backoff.ms`, without jitter."""

from __future__ import annotations

import math
import random
import sys

JITTER = 0.2  # CommonClientConfigs.RETRY_BACKOFF_JITTER
MULTIPLIER = 2  # CommonClientConfigs.RETRY_BACKOFF_EXP_BASE


class ExponentialBackoff:
    def __init__(self, initial_ms: int, max_ms: int, rng: random.Random,
                 multiplier: int = MULTIPLIER, jitter: float = JITTER):
        self.initial_ms = min(max_ms, initial_ms)
        self.max_ms = max_ms
        self.multiplier = multiplier
        self.jitter = jitter
        self.rng = rng
        self.exp_max = (math.log(max_ms / max(initial_ms, 1)) / math.log(multiplier)
                        if max_ms > initial_ms else 0.0)

    def backoff_ms(self, attempts: int) -> int:
        """ExponentialBackoff.backoff: whole milliseconds, a new draw each call."""
        if self.exp_max == 0:
            return self.initial_ms
        term = self.initial_ms * math.pow(self.multiplier, min(attempts, self.exp_max))
        factor = (1.0 if self.jitter < sys.float_info.min
                  else self.rng.uniform(1 - self.jitter, 1 + self.jitter))
        return min(int(factor * term), self.max_ms)

    def next_look_us(self, attempts: int, last_attempt_us: int, now_us: int) -> int | None:
        """None if a batch sent `attempts` times, last at `last_attempt_us`, may go now; else
        when the Sender looks at it again. As Kafka's loop looks: ready() draws a backoff to
        compare with the time waited and, backing off, one to sleep for (a sleep already over
        looks again at once); a batch ready() passes, drainBatchesForOneNode compares with
        another draw (failing that, the loop looks again at once). A constant backoff: one
        look at its end finds the batch ready."""
        waited = now_us - last_attempt_us
        while True:
            if waited < self.backoff_ms(attempts - 1) * 1000:  # ready(): backing off
                sleep = self.backoff_ms(attempts - 1) * 1000
                if sleep > waited:
                    return last_attempt_us + sleep
            elif waited >= self.backoff_ms(attempts - 1) * 1000:  # the drain takes it
                return None
