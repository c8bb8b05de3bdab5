"""Kafka's common client settings (CommonClientConfigs) that a scenario does not set, at their
defaults: every NetworkClient rig models uses them, the producer's and consumers' as much as a
broker's channel to the controller (BrokerToControllerChannelManager)."""

from __future__ import annotations

__all__ = ["METADATA_MAX_AGE_MS", "RECONNECT_BACKOFF_MS", "RETRY_BACKOFF_MS"]

RECONNECT_BACKOFF_MS = 50  # reconnect.backoff.ms (and reconnect.backoff.max.ms for rig's uses)
RETRY_BACKOFF_MS = 100  # retry.backoff.ms
METADATA_MAX_AGE_MS = 300_000  # metadata.max.age.ms
