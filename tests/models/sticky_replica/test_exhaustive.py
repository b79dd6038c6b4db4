"""Tests of the exact replica models against the exhaustive reference (every placement scored by the evaluator)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

import models
from support import exhaustive
from support.cluster_strategies import clusters


@pytest.mark.parametrize("backend", ["cpsat", "mip"])
@settings(max_examples=15)
@given(
    clusters(
        max_brokers=4, max_racks=2, max_topics=1, max_partitions=2, max_factor=2, max_removed=1
    )
)
def test_exact_replica_models_equal_the_exhaustive_optimum(backend, problem):
    """Tests levels 1-4 of each exact model against the best of every placement (tiny clusters)."""
    result = models.solve(problem, "sticky-replica", backend, time_limit=30)
    assert result.status == "optimal" and result.valid
    assert tuple(result.objective) == exhaustive.optimum(problem, "sticky-replica")
