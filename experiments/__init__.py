"""The harness: scenario suites, the Spark pipeline, gaps, the report, the gate and the command line."""
