"""The harness's streams-group scenarios (experiments/streams_scenarios.py) and their experiment-file
factors (experiments/experiment.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from experiments.experiment import expand
from experiments.scenarios import Scenario, build_problem
from experiments.streams_scenarios import CHURN, JUDGED_ON, PATTERNS, streams_document
from problems import ProblemError, load_problem


def _block(**factors):
    return {
        "name": "streams",
        "description": "streams groups",
        "scenarios": [{"judged_on": JUDGED_ON, "seed": 1, "size": [12, 4, 2], **factors}],
    }


@pytest.mark.parametrize("churn", CHURN)
@pytest.mark.parametrize("pattern", PATTERNS)
def test_every_document_is_a_valid_streams_group(churn, pattern):
    """Tests that every churn and pattern gives a streams group the parser takes, deterministically,
    with the shape the pattern names."""
    doc = streams_document(12, 4, 3, 7, churn=churn, pattern=pattern, lags="zipf", standbys=1)
    assert doc == streams_document(
        12, 4, 3, 7, churn=churn, pattern=pattern, lags="zipf", standbys=1
    )
    problem = load_problem(doc)
    assert problem.n_tasks == 12 and problem.num_processes == 4
    stateful = problem.stateful.tolist()
    assert stateful == {
        "stateless": [False] * 3,
        "stateful": [True] * 3,
    }.get(pattern, [True, False, True])
    if pattern == "uneven-threads":
        assert (problem.threads > 1).any()
    else:
        assert (problem.threads == 1).all()
    assert problem.has_racks == (pattern == "racked")
    previous = problem.prev_active >= 0
    if churn == "fresh":
        assert not previous.any()
    elif churn in ("member-joins", "scale-out"):
        assert previous.all()  # every task's previous owner is still there
    else:
        assert previous.any() and not previous.all()  # the leavers' tasks lost their owner


def test_scale_out_clients_hold_no_state():
    """Tests that KIP-441's scale-out adds clients that held nothing and have no state."""
    problem = load_problem(streams_document(12, 6, 2, 3, churn="scale-out", pattern="stateful"))
    new = [m for m in range(6) if not (problem.prev_active == m).any()]
    assert len(new) == 2
    for m in new:
        assert (problem.process_lag[problem.member_process[m]] == -1).all()
    holders = problem.prev_active
    assert (problem.process_lag[problem.member_process[holders], np.arange(12)] == 0).all()


def test_standbys_of_the_previous_assignment_have_lags():
    """Tests that previous standbys sit on other processes than their task's active and have a lag."""
    problem = load_problem(
        streams_document(
            8, 4, 1, 2, churn="member-leaves", pattern="stateful", lags="uniform", standbys=2
        )
    )
    assert problem.configs.num_standby_replicas == 2
    for task, member in problem.prev_standby.tolist():
        assert problem.prev_active[task] != member
        assert problem.process_lag[problem.member_process[member], task] >= 0


def test_experiment_blocks_make_streams_scenarios_with_their_own_ids():
    """Tests that a streams block crosses churn, pattern and standbys into scenarios whose ids name
    them, and builds the streams document of each."""
    experiment = expand(
        _block(churn=["fresh", "scale-out"], pattern=["stateful", "racked"], standbys=[0, 2])
    )
    assert len(experiment.scenarios) == 8
    first = experiment.scenarios[0]
    assert first.scenario_id == f"{JUDGED_ON}/fresh/stateful-zero-sb0/p12-m4-t2/s1"
    assert experiment.factors["standbys"] == [0, 2]
    last = experiment.scenarios[-1]
    doc = build_problem(last)
    assert doc["kind"] == "streams-group" and doc["configs"]["num_standby_replicas"] == 2
    assert json.dumps(doc) == json.dumps(build_problem(last))


@pytest.mark.parametrize(
    ("factors", "field"),
    [
        ({"churn": "zombie"}, "churn"),
        ({"churn": "fresh", "pattern": "equal"}, "pattern"),
        ({"churn": "fresh", "standbys": 3}, "standbys"),
    ],
)
def test_bad_streams_factors_name_the_field(factors, field):
    """Tests that a streams block's unknown churn, pattern or standby count names its field."""
    with pytest.raises(ProblemError) as error:
        expand(_block(**factors))
    assert field in str(error.value)


def test_standbys_belong_to_streams_blocks():
    """Tests that a consumer-group block may not set standbys."""
    with pytest.raises(ProblemError, match="standbys"):
        expand(
            {
                "name": "x",
                "description": "y",
                "scenarios": [
                    {
                        "judged_on": "sticky",
                        "churn": "fresh",
                        "seed": 1,
                        "size": [6, 2, 1],
                        "standbys": 1,
                    }
                ],
            }
        )


def test_streams_scenario_fields():
    """Tests the streams reading of a scenario's fields: tasks, clients, subtopologies, standbys."""
    scenario = Scenario("group", JUDGED_ON, "member-joins", 10, 3, 2, 4, "mixed", "hot", 1)
    problem = load_problem(build_problem(scenario))
    assert problem.n_tasks == 10 and problem.num_members == 3
    assert problem.num_subtopologies == 2 and problem.configs.num_standby_replicas == 1
    assert scenario.scenario_id == f"{JUDGED_ON}/member-joins/mixed-hot-sb1/p10-m3-t2/s4"
