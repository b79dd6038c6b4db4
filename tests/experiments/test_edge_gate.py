"""The gate's baseline: anything malformed, or comparing nothing, is exit 2 and one line before any solving.

The property runs :func:`experiments.gate.parse_baseline` (what ``gate`` calls on its ``--baseline``
before solving, checked once through the command line below) on valid baselines and on every kind of
damage done to them.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from experiments import gate, trace_gate
from experiments.cli import main
from experiments.scenarios import SUITE_VERSION
from problems import LEVELS, ProblemError

SOURCE = "b.json"


def valid_document(heuristics=None, optima=None) -> dict:
    """A well-formed smoke baseline: one heuristic, one recorded optimum."""
    statistics = {"valid": 1.0, "mean_rel_gap1": 0.1, "max_rel_gap1": 0.2, "mean_gap2": 0.0}
    return {
        "suite": "smoke",
        "suite_version": SUITE_VERSION,
        "tolerance": gate.TOLERANCE,
        "heuristics": heuristics
        if heuristics is not None
        else {"sticky/range": {**statistics, "share_optimal": 0.5, "scenarios": 3, "compared": 3}},
        "optima": optima if optima is not None else {"s1": {"digest": "ab", "levels": [12, 0]}},
    }


def run_gate(tmp_path, monkeypatch, capsys, data: bytes) -> tuple[int, list[str]]:
    """`gate --suite smoke --baseline FILE` on ``data``, refusing to solve; its status and stderr lines."""

    def no_solving(*args, **kwargs):
        raise AssertionError("solved before the baseline was checked")

    monkeypatch.setattr(gate, "gate_rows", no_solving)
    path = tmp_path / "gate.json"
    path.write_bytes(data)
    capsys.readouterr()
    status = main(["gate", "--suite", "smoke", "--baseline", str(path), "--no-progress"])
    captured = capsys.readouterr()
    assert captured.out == ""
    return status, [line.replace(str(path), SOURCE) for line in captured.err.splitlines()]


def with_statistic(value) -> dict:
    document = valid_document()
    document["heuristics"]["sticky/range"]["mean_gap2"] = value
    return document


def with_levels(levels) -> dict:
    return valid_document(optima={"s1": {"digest": "ab", "levels": levels}})


def without(key: str) -> dict:
    document = valid_document()
    del document[key]
    return document


def without_statistic() -> dict:
    document = valid_document()
    del document["heuristics"]["sticky/range"]["share_optimal"]
    return document


@pytest.mark.parametrize(
    "data, line",
    [
        (b"[]", "error: b.json: must be a JSON object, got a list; re-create it with --update"),
        (
            json.dumps(without("heuristics")).encode(),
            "error: b.json: heuristics: missing; re-create the baseline with --update",
        ),
        (
            json.dumps(with_statistic("0.1")).encode(),
            "error: b.json: heuristics.sticky/range.mean_gap2: must be a finite number, got '0.1'",
        ),
        (
            json.dumps(with_statistic(None)).encode(),
            "error: b.json: heuristics.sticky/range.mean_gap2: must be a finite number, got null",
        ),
        (
            json.dumps(with_levels(["a", None])).encode(),
            "error: b.json: optima.s1.levels[0]: must be a 64-bit integer, got 'a'",
        ),
        (
            json.dumps(with_levels([1e30, 1e30])).encode(),
            "error: b.json: optima.s1.levels[0]: must be a 64-bit integer, got 1e+30",
        ),
        (
            b"\x89PNG\r\n\x1a\n\x00\x00\xff",
            "error: b.json: not UTF-8 (byte 0); re-create it with --update",
        ),
        # Nothing to compare: the gate would pass every run.
        (
            json.dumps(valid_document(heuristics={})).encode(),
            "error: b.json: heuristics: empty: the baseline would compare nothing; re-create it "
            "with --update",
        ),
        (
            json.dumps(with_statistic(math.nan)).encode(),
            "error: b.json: heuristics.sticky/range.mean_gap2: must be a finite number, got nan",
        ),
        # What is missing is said (not "other statistics").
        (
            json.dumps(without("optima")).encode(),
            "error: b.json: optima: missing; re-create the baseline with --update",
        ),
        (
            json.dumps(without_statistic()).encode(),
            "error: b.json: heuristics.sticky/range.share_optimal: missing; re-create the baseline "
            "with --update",
        ),
    ],
    ids=[
        "list",
        "no-heuristics",
        "string",
        "null",
        "levels-not-integers",
        "levels-too-large",
        "binary",
        "empty-heuristics",
        "nan",
        "no-optima",
        "no-statistic",
    ],
)
def test_a_malformed_baseline_is_exit_2_naming_the_field(tmp_path, monkeypatch, capsys, data, line):
    """Tests `gate --baseline B` on malformed baselines: exit 2, one line naming the file and the field,
    before anything is solved."""
    assert run_gate(tmp_path, monkeypatch, capsys, data) == (2, [line])


def test_every_statistic_nan_is_refused(tmp_path, monkeypatch, capsys):
    """Tests that a baseline whose every statistic is NaN (no comparison is ever true) is exit 2."""
    nan = dict.fromkeys(gate.DIRECTION, math.nan)
    document = valid_document(heuristics={"sticky/range": nan, "sticky/sticky": nan})
    status, lines = run_gate(tmp_path, monkeypatch, capsys, json.dumps(document).encode())
    assert status == 2 and len(lines) == 1 and "must be a finite number, got nan" in lines[0]


def test_the_committed_baseline_is_valid():
    """Tests that baselines/gate.json passes the checks and compares every heuristic it records."""
    baseline = gate.read_baseline(gate.BASELINE, "gate")
    document = json.loads(gate.BASELINE.read_text())
    assert set(baseline.heuristics) == set(document["heuristics"]) and baseline.heuristics
    assert baseline.optima == document["optima"]


def test_update_over_a_malformed_baseline_keeps_no_optima_and_says_so(tmp_path, capsys):
    """Tests that `gate --update`'s reading of the baseline it replaces does not fail on a malformed one:
    its optima are not kept, in a note."""
    path = tmp_path / "gate.json"
    path.write_text(json.dumps(with_levels([1e30])))
    assert gate._recorded(path, "smoke") == {}
    assert capsys.readouterr().err == (
        f"note: {path}: optima.s1.levels[0]: must be a 64-bit integer, got 1e+30; its recorded "
        "optima are not kept\n"
    )
    path.write_bytes(b"\xff\xfe")
    assert gate._recorded(path, "smoke") == {}
    path.write_text(json.dumps(valid_document()))
    assert gate._recorded(path, "smoke") == {"s1": {"digest": "ab", "levels": [12, 0]}}
    assert gate._recorded(tmp_path / "absent.json", "smoke") == {}


# ------------------------------------------------------------------ the property
NAMES = st.text(max_size=8)
LEVEL = st.integers(*gate.INT64)
MOVES = st.integers(0, 2**63 - 1)


def in_range(low: float, high: float):
    """Numbers in ``[low, high]``: floats, integers and the ends themselves."""
    return (
        st.floats(low, high)
        | st.integers(int(low), int(min(high, 2**63)))
        | st.sampled_from([low, high])
    )


@st.composite
def statistics_of(draw, ranges: dict, mean_max: tuple[str, str]) -> dict:
    """One entry: every statistic of ``ranges`` within its range, the mean at most the maximum,
    and the counts beside them."""
    entry = {name: draw(in_range(*bounds)) for name, bounds in ranges.items()}
    mean, most = mean_max
    if entry[mean] > entry[most]:
        entry[mean], entry[most] = entry[most], entry[mean]
    counts = draw(st.sampled_from([(), ("scenarios", "compared"), ("traces", "tied", "compared")]))
    entry.update({count: draw(st.integers(0, 2**40)) for count in counts})
    return entry


@st.composite
def valid_documents(draw) -> dict:
    """Baselines with 1-4 heuristics and 0-3 trace runs of any statistics within their ranges,
    0-4 optima of 1-LEVELS levels and 0-3 trace optima."""
    heuristics = {
        f"{draw(NAMES)}/{i}": draw(statistics_of(gate.RANGES, gate.MEAN_MAX))
        for i in range(draw(st.integers(1, 4)))
    }
    optima = {
        f"{draw(NAMES)}-{i}": {
            "digest": draw(NAMES),
            "levels": draw(st.lists(LEVEL, min_size=1, max_size=LEVELS)),
        }
        for i in range(draw(st.integers(0, 4)))
    }
    document = valid_document(heuristics=heuristics, optima=optima)
    if draw(st.booleans()):  # a baseline written before the suites had traces has neither
        document["traces"] = {
            f"sticky/{draw(NAMES)}/{i}": draw(
                statistics_of(trace_gate.TRACE_RANGES, trace_gate.TRACE_MEAN_MAX)
            )
            for i in range(draw(st.integers(0, 3)))
        }
        document["trace_optima"] = {
            f"trace/{draw(NAMES)}-{i}": {"digest": draw(NAMES), "moves": draw(MOVES)}
            for i in range(draw(st.integers(0, 3)))
        }
    return document


#: Values that are no statistic, no level, no digest and no entry.
WRONG = st.sampled_from(
    [None, "0.1", "", True, False, [], [1], {}, {"a": 1}, math.nan, math.inf, -math.inf]
)
#: Numbers out of every share's range, and out of every gap's.
OUT_OF_SHARE = st.sampled_from([-5, -1e-9, 1.000001, 2, 1e308, -1e308])
OUT_OF_GAP = st.sampled_from([-5, -1e-9, 1e308, 2.0**64, -(2**70)])


def dumps_repeating(document, target: int, key: str, value) -> bytes:
    """``document`` as JSON, the object whose ``id`` is ``target`` holding ``key`` once more
    (``value``), after its own keys: what ``json.dumps`` cannot write."""

    def encode(item) -> str:
        if isinstance(item, dict):
            pairs = [f"{json.dumps(k)}: {encode(v)}" for k, v in item.items()]
            if id(item) == target:
                pairs.append(f"{json.dumps(key)}: {encode(value)}")
            return "{" + ", ".join(pairs) + "}"
        if isinstance(item, list):
            return "[" + ", ".join(encode(v) for v in item) + "]"
        return json.dumps(item)

    return encode(document).encode()


def objects_of(document) -> list[tuple[str, dict]]:
    """Every JSON object of ``document`` with its field (the top one: empty)."""
    found = [("", document)]
    for name, value in document.items():
        if isinstance(value, dict):
            found.append((name, value))
            for inner, entry in value.items():
                if isinstance(entry, dict):
                    found.append((f"{name}.{inner}", entry))
    return found


#: The kinds of damage the property does; ``repeated`` is checked for its message too.
DAMAGE = [
    "top-level",
    "suite",
    "version",
    "drop-heuristics",
    "heuristics-type",
    "empty-heuristics",
    "entry-type",
    "drop-statistic",
    "statistic",
    "statistic-range",
    "mean-above-max",
    "count",
    "all-nan",
    "drop-optima",
    "optima-type",
    "optimum-type",
    "drop-digest",
    "digest",
    "levels",
    "level",
    "level-range",
    "traces-type",
    "trace-entry-type",
    "trace-drop-statistic",
    "trace-statistic",
    "trace-range",
    "trace-mean-above-max",
    "trace-optima-type",
    "trace-moves",
    "repeated",
    "bytes",
]


@st.composite
def damaged_documents(draw):
    """A valid baseline with one thing broken (its bytes, a key repeated, or a field set out of
    range, removed or retyped), and the damage done."""
    document = draw(valid_documents())
    kind = draw(st.sampled_from(DAMAGE))
    heuristic = draw(st.sampled_from(sorted(document["heuristics"])))
    statistic = draw(st.sampled_from(sorted(gate.DIRECTION)))
    trace_statistic = draw(st.sampled_from(sorted(trace_gate.TRACE_DIRECTION)))
    if kind.startswith("trace-") and kind != "trace-optima-type":
        if kind == "trace-moves":
            optima = document.setdefault("trace_optima", {})
            optima.setdefault("trace/t", {"digest": "d", "moves": 3})
            trace_optimum = optima[draw(st.sampled_from(sorted(optima)))]
        else:
            traces = document.setdefault("traces", {})
            traces.setdefault(
                "sticky/t/range",
                {
                    "share_tied": 1.0,
                    "mean_excess_moves": 0.5,
                    "max_excess_moves": 1,
                    "share_optimal": 0.5,
                },
            )
            trace = traces[draw(st.sampled_from(sorted(traces)))]
    if kind in ("optimum-type", "drop-digest", "digest", "levels", "level", "level-range"):
        if not document["optima"]:
            document["optima"]["s"] = {"digest": "d", "levels": [1]}
        optimum = document["optima"][draw(st.sampled_from(sorted(document["optima"])))]
    if kind == "top-level":
        document = draw(st.sampled_from([[], [document], "x", 1, None, True]))
    elif kind == "suite":
        document["suite"] = draw(st.sampled_from(["gate", "default", None, 1, ["smoke"]]))
    elif kind == "version":
        document["suite_version"] = draw(
            st.sampled_from([SUITE_VERSION + 1, str(SUITE_VERSION), None, [SUITE_VERSION]])
        )
    elif kind == "drop-heuristics":
        del document["heuristics"]
    elif kind == "heuristics-type":
        document["heuristics"] = draw(WRONG.filter(lambda v: type(v) is not dict))
    elif kind == "empty-heuristics":
        document["heuristics"] = {}
    elif kind == "entry-type":
        document["heuristics"][heuristic] = draw(WRONG.filter(lambda v: type(v) is not dict))
    elif kind == "drop-statistic":
        del document["heuristics"][heuristic][statistic]
    elif kind == "statistic":
        document["heuristics"][heuristic][statistic] = draw(WRONG)
    elif kind == "statistic-range":
        share = gate.RANGES[statistic][1] == 1
        document["heuristics"][heuristic][statistic] = draw(OUT_OF_SHARE if share else OUT_OF_GAP)
    elif kind == "mean-above-max":
        entry = document["heuristics"][heuristic]
        entry["max_rel_gap1"] = draw(st.floats(0, 1e6))
        entry["mean_rel_gap1"] = entry["max_rel_gap1"] * 1.01 + 1
    elif kind == "count":
        entry = document["heuristics"][heuristic]
        entry[draw(st.sampled_from(["scenarios", "compared", "traces", "tied"]))] = draw(
            st.sampled_from([-1, 1.5, "3", None, True, 2**64])
        )
    elif kind == "all-nan":
        for entry in document["heuristics"].values():
            entry.update(dict.fromkeys(gate.DIRECTION, math.nan))
    elif kind == "drop-optima":
        del document["optima"]
    elif kind == "optima-type":
        document["optima"] = draw(WRONG.filter(lambda v: type(v) is not dict))
    elif kind == "optimum-type":
        document["optima"][next(iter(document["optima"]))] = draw(
            WRONG.filter(lambda v: type(v) is not dict)
        )
    elif kind == "drop-digest":
        del optimum["digest"]
    elif kind == "digest":
        optimum["digest"] = draw(WRONG.filter(lambda v: type(v) is not str))
    elif kind == "levels":
        optimum["levels"] = draw(
            st.sampled_from([[], list(range(LEVELS + 1)), None, "1", 1, {"0": 1}])
        )
    elif kind == "level":
        optimum["levels"][draw(st.integers(0, len(optimum["levels"]) - 1))] = draw(
            WRONG | st.floats(allow_nan=False) | st.just(1e30)
        )
    elif kind == "level-range":
        optimum["levels"][0] = draw(st.sampled_from([2**63, -(2**63) - 1, 10**30]))
    elif kind == "traces-type":
        document["traces"] = draw(WRONG.filter(lambda v: type(v) is not dict))
    elif kind == "trace-entry-type":
        document["traces"][next(iter(document["traces"]))] = draw(
            WRONG.filter(lambda v: type(v) is not dict)
        )
    elif kind == "trace-drop-statistic":
        del trace[trace_statistic]
    elif kind == "trace-statistic":
        trace[trace_statistic] = draw(WRONG)
    elif kind == "trace-range":
        share = trace_gate.TRACE_RANGES[trace_statistic][1] == 1
        trace[trace_statistic] = draw(OUT_OF_SHARE if share else OUT_OF_GAP)
    elif kind == "trace-mean-above-max":
        trace["max_excess_moves"] = draw(st.integers(0, 10**6))
        trace["mean_excess_moves"] = trace["max_excess_moves"] + draw(
            st.sampled_from([0.5, 1, 1e6])
        )
    elif kind == "trace-optima-type":
        document["trace_optima"] = draw(WRONG.filter(lambda v: type(v) is not dict))
    elif kind == "trace-moves":
        trace_optimum["moves"] = draw(WRONG | st.sampled_from([-1, 2**63, 1.5]))
    if kind == "repeated":  # one object holds a key twice: the last copy would replace the first
        field, target = draw(st.sampled_from([o for o in objects_of(document) if o[1]]))
        key = draw(st.sampled_from(sorted(target)))
        again = draw(st.sampled_from([target[key], {}, None, 0, "x"]))
        return dumps_repeating(document, id(target), key, again), kind
    data = json.dumps(document).encode()
    if kind == "bytes":
        cut = draw(st.integers(0, len(data) - 1))
        data = draw(
            st.sampled_from(
                [
                    data[:cut],  # truncated
                    data[:cut] + b"\xff" + data[cut:],  # not UTF-8
                    b"[" * 100_000,  # nested beyond the parser's depth
                    b"1" * 5_000,  # more digits than int() takes
                ]
            )
        )
    return data, kind


@settings(max_examples=600)
@given(damaged=damaged_documents())
def test_every_damaged_baseline_is_one_line_naming_the_file(damaged):
    """Property: any damage to a valid baseline (bytes, a key given twice, types, missing or empty
    fields, NaN, a statistic out of its range or a mean above its maximum, levels beyond 64 bits;
    in its heuristics and its traces alike) is a ProblemError whose message is one line naming
    the file."""
    data, kind = damaged
    with pytest.raises(ProblemError) as caught:
        gate.parse_baseline(data, SOURCE, "smoke")
    message = str(caught.value)
    assert message.startswith(f"{SOURCE}: ") and "\n" not in message and len(message) < 1000
    if kind == "repeated":
        assert "given twice" in message


@settings(max_examples=500)
@given(document=valid_documents(), worse=st.data())
def test_every_valid_baseline_compares_its_heuristics(document, worse):
    """Property: a valid baseline is accepted and compares: the same statistics pass, and one
    statistic of one heuristic or trace run made worse (or one gone) is a regression."""
    baseline = gate.parse_baseline(json.dumps(document).encode(), SOURCE, "smoke")
    assert baseline.heuristics and set(baseline.heuristics) == set(document["heuristics"])
    assert set(baseline.traces) == set(document.get("traces", {}))
    sections = [(baseline.heuristics, gate.DIRECTION)]
    if baseline.traces:
        sections.append((baseline.traces, trace_gate.TRACE_DIRECTION))
    recorded, direction = sections[worse.draw(st.integers(0, len(sections) - 1))]
    current = {name: dict(stats) for name, stats in recorded.items()}
    assert gate.regressions(recorded, current, direction).empty
    name = worse.draw(st.sampled_from(sorted(current)))
    statistic = worse.draw(st.sampled_from(sorted(direction)))
    if worse.draw(st.booleans()):
        before = current[name][statistic]
        step = max(1.0, abs(before)) * direction[statistic]
        current[name][statistic] = before + step
        expected = (name, statistic)
    else:
        del current[name]
        expected = (name, "(missing)")
    found = gate.regressions(recorded, current, direction)
    assert expected in set(map(tuple, found[["heuristic", "statistic"]].to_numpy()))


@pytest.mark.parametrize(
    "damage, line",
    [
        # Without the second, empty copy the file fails the gate (a share tied of 0); with it, the
        # last copy won and the gate judged no trace.
        (
            {},
            "error: b.json: traces: given twice (a key repeated in one JSON object); re-create "
            "it with --update",
        ),
        (
            {"share_tied": -5},
            "error: b.json: traces.sticky/rolling-restart/range.share_tied: must be a number 0 to "
            "1, got -5",
        ),
        (
            {"max_excess_moves": 1e308},
            "error: b.json: traces.sticky/rolling-restart/range.max_excess_moves: must be a "
            "number 0 to 9.22337e+18, got 1e+308",
        ),
    ],
    ids=["repeated-traces", "share-of-minus-5", "excess-of-1e308"],
)
def test_the_trace_gate_cannot_be_switched_off(tmp_path, monkeypatch, capsys, damage, line):
    """Tests `gate --baseline B` on a baseline whose ``traces`` key is given twice, or whose
    trace statistics are out of range (a share of -5, an excess of 1e308): exit 2 and one line
    naming the file and the field, before anything is solved."""
    entry = {
        "share_tied": 1.0,
        "mean_excess_moves": 0.0,
        "max_excess_moves": 0.0,
        "share_optimal": 1.0,
    }
    document = valid_document()
    if damage:
        document["traces"] = {"sticky/rolling-restart/range": {**entry, **damage}}
        data = json.dumps(document).encode()
    else:
        failing = {"sticky/rolling-restart/range": {**entry, "share_tied": 0.0}}
        data = (
            json.dumps(document)[:-1] + f', "traces": {json.dumps(failing)}, "traces": {{}}}}'
        ).encode()
    assert run_gate(tmp_path, monkeypatch, capsys, data) == (2, [line])


def test_update_into_a_baseline_that_is_a_folder_is_one_line(tmp_path, monkeypatch, capsys):
    """Tests `gate --update --baseline FOLDER`: exit 2 and one line before anything is solved."""

    def no_solving(*args, **kwargs):
        raise AssertionError("solved before the baseline was checked")

    monkeypatch.setattr(gate, "gate_rows", no_solving)
    assert main(["gate", "--suite", "smoke", "--update", "--baseline", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {tmp_path}: cannot write the baseline: it is a folder\n"
    )


def test_gate_checks_its_baseline_with_parse_baseline(tmp_path, monkeypatch, capsys):
    """Tests that `gate --baseline FILE` checks the file's bytes with parse_baseline (what the properties
    check), once, before solving."""
    calls = []
    real = gate.parse_baseline

    def spy(data, source, suite_name):
        calls.append((data, source, suite_name))
        return real(data, source, suite_name)

    monkeypatch.setattr(gate, "parse_baseline", spy)
    data = json.dumps(valid_document(heuristics={})).encode()
    assert run_gate(tmp_path, monkeypatch, capsys, data)[0] == 2
    assert calls == [(data, str(tmp_path / "gate.json"), "smoke")]
