"""Real Kafka clients and clusters (docs/design/index.md).

``clients.cluster`` reads a live cluster through kafka-python's admin client: a consumer
group as a group document (members, subscriptions, owned partitions, lags) and the topics'
replica placement with the brokers' racks as a placement document, over PLAINTEXT, TLS or SASL
(``clients.security`` turns Kafka's client properties into kafka-python's connection settings).
``clients.kafka_python`` exposes every consumer-group strategy as a kafka-python partition
assignor, computed by :func:`models.solve`.  Nothing here imports ``experiments`` or pyspark.
"""
