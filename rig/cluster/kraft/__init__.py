"""KRaft's controller (Kafka 2.8+, the only mode from 4.0; docs/kafka.md §12), by the Kafka
class each module models: PartitionChangeBuilder (a pure function over a partition's
registration), the metadata log, BrokerHeartbeatManager, ReplicationControlManager, the
QuorumController that runs them, and a broker's side (BrokerLifecycleManager, the metadata
publisher, AlterPartitionManager)."""
