"""Damaged result folders: `report` refuses a damaged batch by name, counts a repeated row once, and says
when a run has no rows; resuming `compare` sets a damaged batch aside and solves its scenarios again.

The property runs :func:`experiments.results.load_results` (what ``report`` and ``compare`` read a run
with) and :func:`experiments.results.done_scenarios` (what resuming reads) on folders of small
synthetic batches, each intact, repeated under another name, empty, or damaged (truncated, garbage,
a column missing or of another type); the tests after it check once, through the command line, that
``report`` and ``compare`` are built on them.
"""

from __future__ import annotations

import io
import math
import shutil
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import experiments.compare
import experiments.report
from experiments.cli import main
from experiments.gap import gaps, single
from experiments.results import (
    ADDED_COLUMNS,
    ALL_COLUMNS,
    DAMAGED_SUFFIX,
    NON_NEGATIVE,
    NOT_NULL,
    ROW_KEY,
    TRACE_COLUMNS,
    done_scenarios,
    load_results,
    read_batch,
    results_folder,
)
from experiments.runs import RESULT_COLUMNS
from experiments.trace_gap import trace_gaps
from problems import ProblemError


def synthetic_rows(scenarios: list[str]) -> pd.DataFrame:
    """Two heuristic rows and an exact one per scenario, with every result column."""
    rows = []
    for scenario in scenarios:
        for strategy, solver, level in (("range", "heuristic", 14), ("sticky", "heuristic", 12)) + (
            ("sticky", "cpsat", 12),
        ):
            row = dict.fromkeys(RESULT_COLUMNS)
            row.update(
                scenario_id=scenario,
                family="group",
                judged_on="sticky",
                churn="fresh",
                partitions=12,
                members=3,
                topics=2,
                replication=0,
                size=12,
                seed=1,
                strategy=strategy,
                variant="",
                solver=solver,
                role="heuristic" if solver == "heuristic" else "exact",
                status="heuristic" if solver == "heuristic" else "optimal",
                valid=True,
                level1=level,
                level2=0,
                runtime_s=0.01,
                time_limit_s=2.0,
                suite_version=1,
                experiment="trial",
                experiment_digest="0123456789abcdef",
            )
            rows.append(row)
    return pd.DataFrame(rows, columns=list(RESULT_COLUMNS)).astype(RESULT_COLUMNS)


def parquet_bytes(rows: pd.DataFrame) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(rows, preserve_index=False), sink)
    return sink.getvalue()


def synthetic_trace_rows(scenario: str = "trace/sticky/rolling-restart/equal-zero/p12-m3-t2-T2/s1"):
    """A trace of two steps run by range, the per-step optimum and the horizon: rows for steps
    0-2 and one per trace each, with every result and trace column."""
    rows = []
    for strategy, solver, moves in (("range", "heuristic", 4), ("sticky", "step", 3)) + (
        ("sticky", "horizon", 2),
    ):
        for step in (0, 1, 2, None):
            row = dict.fromkeys(ALL_COLUMNS)
            row.update(
                scenario_id=scenario,
                family="group",
                judged_on="sticky",
                churn="rolling-restart",
                partitions=12,
                members=3,
                topics=2,
                replication=0,
                size=12,
                seed=1,
                strategy=strategy,
                variant="",
                solver=solver,
                role="heuristic" if solver == "heuristic" else "exact",
                status="heuristic" if solver == "heuristic" else "optimal",
                valid=True,
                level1=48 if step is not None else 144,
                level2=0,
                runtime_s=0.01,
                time_limit_s=2.0,
                suite_version=7,
                trace="rolling-restart",
                steps=2,
                step=step,
                moves=(0 if step == 0 else moves) if step is not None else 2 * moves,
                moves_bound=2 * moves if solver == "horizon" and step is None else None,
                experiment="trial",
                experiment_digest="0123456789abcdef",
            )
            rows.append(row)
    return pd.DataFrame(rows, columns=list(ALL_COLUMNS)).astype(ALL_COLUMNS)


#: Two intact batches of single rebalances (one and two scenarios) and one of a trace, as bytes:
#: the property writes them, damaged or not.
BATCHES = [synthetic_rows(ids) for ids in (["a"], ["b", "c"])] + [synthetic_trace_rows()]
INTACT = [parquet_bytes(rows) for rows in BATCHES]
EMPTY = parquet_bytes(BATCHES[0].iloc[:0])
#: What identifies a row (a trace's rows also by their step).
KEY = [*ROW_KEY, "step"]


def keys(rows: pd.DataFrame) -> list[str]:
    """The rows' keys, sorted (a missing step the same whichever type holds it)."""
    frame = rows.reindex(columns=KEY).astype(object)
    return sorted(map(str, frame.where(frame.notna(), None).to_numpy().tolist()))


def retyped(rows: pd.DataFrame, column: str) -> pd.DataFrame:
    """``rows`` with ``column`` holding values of another type (numbers for text, text otherwise)."""
    kind = RESULT_COLUMNS[column]
    wrong = range(len(rows)) if kind == "string" else [f"x{i}" for i in range(len(rows))]
    return rows.assign(**{column: list(wrong)})


def with_value(rows: pd.DataFrame, column: str, value) -> bytes:
    """``rows`` with the first row's ``column`` set to ``value`` (Arrow keeps its type: a null in
    a column pandas cannot hold one in, a negative count, a NaN), as Parquet bytes."""
    table = pa.Table.from_pandas(rows, preserve_index=False)
    values = table.column(column).to_pylist()
    values[0] = value
    index = table.column_names.index(column)
    table = table.set_column(index, column, pa.array(values, table.schema.field(column).type))
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


#: Each batch without each column, and with each column of another type.
WITHOUT = {
    (b, c): parquet_bytes(rows.drop(columns=c))
    for b, rows in enumerate(BATCHES)
    for c in [*RESULT_COLUMNS, *(TRACE_COLUMNS if b == 2 else ())]
}
RETYPED = {
    (b, c): parquet_bytes(retyped(rows, c))
    for b, rows in enumerate(BATCHES)
    for c in RESULT_COLUMNS
}
#: Values no run writes, by the column they are put in.
IMPOSSIBLE = {
    **{column: None for column in NOT_NULL},
    **{column: -1 for column in NON_NEGATIVE if RESULT_COLUMNS.get(column) != "float64"},
    "runtime_s": math.nan,
    "peak_rss_mb": -math.inf,
    "time_limit_s": -2.0,
    "status": "splendid",
    "role": "oracle",
    "family": "galaxy",
}


#: The kinds of damage done to a batch: each refused by name, set aside when a run resumes.
DAMAGES = ("truncated", "garbage", "empty-file", "footer", "missing", "retyped", "impossible")
#: The kinds of damage done to a run: intact batches that cannot be read together, named.
RUN_DAMAGES = ("conflicting", "other-experiment")


@st.composite
def folders(draw) -> list[tuple[str, str, int, object]]:
    """A run folder's files: (name, kind, the intact batch it comes from, what the damage takes).

    Kinds: ``intact``, ``repeated`` (an intact batch again under a later name), ``empty`` (a batch of
    no rows), ``stepless`` (the trace batch's per-trace rows alone), the :data:`DAMAGES` and the
    :data:`RUN_DAMAGES` (a copy of an intact batch with another level 1, or stamped with another
    experiment)."""
    files = []
    for batch in range(len(INTACT)):
        kinds = ["intact", "intact", "damaged", "repeated", "absent", "run-damaged"]
        kind = draw(st.sampled_from([*kinds, "stepless"] if batch == 2 else kinds))
        name = f"batch-{batch}.parquet"
        if kind == "absent":
            continue
        if kind == "stepless":
            files.append((name, "stepless", batch, None))
            continue
        if kind == "damaged":
            how = draw(st.sampled_from(DAMAGES))
            detail: object = None
            if how == "truncated":
                detail = draw(st.integers(0, len(INTACT[batch]) - 1))
            elif how in ("garbage", "footer"):
                detail = draw(st.binary(max_size=64))
            elif how == "missing":  # moves_bound and rounds are optional trace columns
                optional = (*ADDED_COLUMNS, "moves_bound", "rounds")
                detail = draw(
                    st.sampled_from([c for b, c in WITHOUT if b == batch and c not in optional])
                )
            elif how == "retyped":
                detail = draw(
                    st.sampled_from([c for c in RESULT_COLUMNS if c not in ADDED_COLUMNS])
                )
            else:
                detail = draw(
                    st.sampled_from([c for c in sorted(IMPOSSIBLE) if c in BATCHES[batch]])
                )
            files.append((name, how, batch, detail))
            continue
        files.append((name, "intact", batch, None))
        if kind == "repeated":
            files.append((f"batch-{batch}-copy.parquet", "repeated", batch, None))
        if kind == "run-damaged":
            files.append(
                (f"batch-{batch}-z.parquet", draw(st.sampled_from(RUN_DAMAGES)), batch, None)
            )
    if draw(st.booleans()):
        files.append(("batch-9-empty.parquet", "empty", 0, None))
    return files


def file_bytes(kind: str, batch: int, detail) -> bytes:
    """The bytes of a planned file (:func:`folders`)."""
    rows = BATCHES[batch]
    if kind in ("intact", "repeated"):
        return INTACT[batch]
    if kind == "empty":
        return EMPTY
    if kind == "stepless":
        return parquet_bytes(rows[rows["step"].isna()])
    if kind == "conflicting":
        return parquet_bytes(rows.assign(level1=rows["level1"] + 1))
    if kind == "other-experiment":
        return parquet_bytes(rows.assign(experiment="another", experiment_digest="0123"))
    if kind == "truncated":
        return INTACT[batch][:detail]
    if kind == "garbage":
        return detail
    if kind == "empty-file":
        return b""
    if kind == "footer":  # Parquet's magic bytes around garbage
        return b"PAR1" + detail + b"PAR1"
    if kind == "impossible":
        return with_value(rows, detail, IMPOSSIBLE[detail])
    return (WITHOUT if kind == "missing" else RETYPED)[batch, detail]


@settings(max_examples=200, deadline=None)
@given(files=folders())
def test_damaged_folders_are_refused_by_name_or_read_once_and_resumed(files):
    """Property: a folder with a damaged batch (unreadable, a column missing or retyped, trace rows
    without their trace columns, a missing or impossible value) is a ProblemError (one line) naming
    a damaged batch for `report`; so is one holding a copy of a batch with other results or rows
    of another experiment, naming that copy or its original; otherwise its rows are every intact
    batch's rows, each (scenario, strategy, variant, solver, step) once, with a note exactly when
    a batch repeats another and when trace runs lack their steps, and the gaps of the report are
    computed from them.  Resuming keeps every readable batch's scenarios as done, sets each damaged batch
    aside (so its scenarios are solved again), and leaves a folder that reads without error unless
    its batches cannot be read together."""
    folder = Path(tempfile.mkdtemp(prefix="edge-results-"))
    try:
        for name, kind, batch, detail in files:
            (folder / name).write_bytes(file_bytes(kind, batch, detail))
        damaged = {name for name, kind, _, _ in files if kind in DAMAGES}
        run_damaged = {
            name
            for name, kind, batch, _ in files
            if kind in RUN_DAMAGES
            for name in (name, f"batch-{batch}.parquet")
        }
        held = sorted(
            {batch for _, kind, batch, _ in files if kind in ("intact", "repeated", "stepless")}
        )
        stepless = any(kind == "stepless" for _, kind, _, _ in files)
        expected = (
            pd.concat([BATCHES[b] for b in held], ignore_index=True)
            if held
            else BATCHES[0].iloc[:0]
        )
        if stepless:
            expected = expected[~((expected["trace"].notna()) & expected["step"].notna())]
        repeated = any(kind == "repeated" for _, kind, _, _ in files)

        notes: list[str] = []
        if damaged or run_damaged:
            with pytest.raises(ProblemError) as caught:
                load_results(folder, notes)
            message = str(caught.value)
            assert "\n" not in message
            named = damaged or run_damaged
            assert any(message.startswith(f"{folder / name}: ") for name in named), message
        else:
            rows = load_results(folder, notes)
            assert not rows.duplicated(KEY).any()
            assert keys(rows) == keys(expected)
            assert len(notes) == int(repeated) + int(stepless) and all("\n" not in n for n in notes)
            assert stepless == any("without their per-step rows" in n for n in notes)
            # what the report is computed from (the whole report: the tests below)
            assert len(gaps(rows)) == (single(rows)["role"] == "heuristic").sum()
            trace_gaps(rows)

        notes = []
        done = done_scenarios(folder, notes)
        readable = {batch for name, kind, batch, _ in files if kind not in (*DAMAGES, "empty")}
        assert done == {s for b in readable for s in BATCHES[b]["scenario_id"]}
        assert len(notes) == len(damaged) and all("solved again" in n for n in notes)
        assert {p.name for p in folder.glob(f"*{DAMAGED_SUFFIX}")} == {
            name + DAMAGED_SUFFIX for name in damaged
        }
        if damaged and not run_damaged:  # what compare reads after the resumed run
            rows = load_results(folder)
            assert set(rows["scenario_id"]) == done and not rows.duplicated(KEY).any()
    finally:
        shutil.rmtree(folder)


# ------------------------------------------------------- through the command line
def run_folder(tmp_path, *batches: bytes) -> Path:
    folder = results_folder(tmp_path, "smoke", "run")
    folder.mkdir(parents=True)
    for i, data in enumerate(batches):
        (folder / f"batch-{i}.parquet").write_bytes(data)
    return folder


def test_report_on_a_damaged_batch_is_exit_2_naming_it(tmp_path, capsys):
    """Tests `report` on a run whose batch is truncated, or garbage: exit 2, one line naming the batch."""
    for i, damaged in enumerate([INTACT[1][: len(INTACT[1]) // 2], b"not parquet at all"]):
        folder = run_folder(tmp_path / str(i), INTACT[0], damaged)
        assert main(["report", str(folder)]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.startswith(f"error: {folder / 'batch-1.parquet'}: cannot be read")
        assert captured.err.count("\n") == 1


def test_report_on_a_batch_lacking_a_column_names_it(tmp_path, capsys):
    """Tests `report` on a batch without the ``level1`` column: exit 2 naming the batch and the column."""
    folder = run_folder(tmp_path, parquet_bytes(BATCHES[0].drop(columns="level1")))
    assert main(["report", str(folder)]) == 2
    assert capsys.readouterr().err == (
        f"error: {folder / 'batch-0.parquet'}: level1: missing column (a damaged batch)\n"
    )


def test_a_batch_written_before_columns_were_added_reads_them_as_missing(tmp_path):
    """Tests a batch without the columns added later (levels 5-6, topology): its rows load, those
    columns empty, and resuming does not set the batch aside."""
    old = BATCHES[0].drop(columns=list(ADDED_COLUMNS))
    folder = run_folder(tmp_path, parquet_bytes(old))
    rows = load_results(folder)
    assert len(rows) == len(old)
    for column in ADDED_COLUMNS:
        assert rows[column].isna().all()
    assert rows["level1"].tolist() == old["level1"].tolist()
    notes: list[str] = []
    assert done_scenarios(folder, notes) == set(old["scenario_id"]) and notes == []


def test_report_counts_a_repeated_batch_once_with_a_note(tmp_path, monkeypatch, capsys):
    """Tests `report` on a run holding the same batch under two names: every row counted once (what
    the report is rendered from), and a note."""
    written = {}

    def capture(rows, folder, source, **kwargs):
        written["rows"] = rows
        return Path(folder) / "report.html"

    monkeypatch.setattr(experiments.report, "write_report", capture)
    folder = run_folder(tmp_path, INTACT[1], INTACT[1], INTACT[0])
    assert main(["report", str(folder), "--out", str(tmp_path / "r")]) == 0
    rows = written["rows"]
    assert len(rows) == len(BATCHES[0]) + len(BATCHES[1]) and not rows.duplicated(ROW_KEY).any()
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (
        f"note: {folder}: 6 rows repeat a row of an earlier batch (the same scenario, strategy, "
        "variant and solver; first: batch-1.parquet repeats batch-0.parquet); each is counted once"
    )


def test_report_on_a_run_of_empty_batches_says_it_has_no_rows(tmp_path, capsys):
    """Tests `report` on a run whose only batch has no rows: "the run has no rows", not "no files"."""
    folder = run_folder(tmp_path, EMPTY)
    assert main(["report", str(folder)]) == 2
    assert capsys.readouterr().err == (
        f"error: {folder}: the run has no rows (1 batch file, every one empty)\n"
    )
    assert main(["report", str(run_folder(tmp_path / "none"))]) == 2
    assert "no *.parquet files" in capsys.readouterr().err


def test_read_batch_reads_what_write_batch_writes(tmp_path):
    """Tests that a batch written by the store reads back unchanged through the checks."""
    from experiments.results import write_batch

    path = write_batch(tmp_path, BATCHES[1])
    pd.testing.assert_frame_equal(read_batch(path).to_pandas(), BATCHES[1])


@pytest.mark.spark
def test_compare_resuming_solves_a_damaged_batchs_scenarios_again(
    spark, smoke_run, tmp_path, monkeypatch, capsys
):
    """Tests `compare --run-id` on a run whose batch (one scenario) is truncated: a note names it, the
    batch is set aside, that scenario alone is solved again and the run reads whole afterwards."""
    from experiments.experiment import suite
    from experiments.gap import single

    rows = load_results(smoke_run).drop(columns=["suite", "run_id"])
    scenarios = [s.scenario_id for s in suite("smoke")]
    folder = results_folder(tmp_path, "smoke", "resumed")
    folder.mkdir(parents=True)
    for i, scenario in enumerate(scenarios):
        data = parquet_bytes(rows[rows["scenario_id"] == scenario].astype(RESULT_COLUMNS))
        (folder / f"batch-{i:02d}.parquet").write_bytes(data if i else data[:100])
    monkeypatch.setattr(
        experiments.compare,
        "write_report",
        lambda rows, out, source, **kwargs: Path(out) / "report.html",
    )
    command = ["compare", "--suite", "smoke", "--out", str(tmp_path), "--run-id", "resumed"]
    assert main([*command, "--master", "local[2]", "--time-limit", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert f"note: {folder / 'batch-00.parquet'}: cannot be read" in err
    assert "set aside as batch-00.parquet.damaged, its scenarios are solved again" in err
    assert f"1 scenarios solved now, {len(scenarios) - 1} already done" in err
    again = single(load_results(folder))  # and the smoke suite's traces, solved now
    assert set(again["scenario_id"]) == set(scenarios) and not again.duplicated(ROW_KEY).any()
    assert (folder / "batch-00.parquet.damaged").exists()


def test_report_into_a_folder_that_cannot_be_written_is_one_line(tmp_path, capsys):
    """Tests `report --out` below a file: exit 2 and one line before anything is rendered."""
    folder = run_folder(tmp_path, INTACT[0])
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert main(["report", str(folder), "--out", str(blocked / "report")]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"error: {blocked / 'report'}: cannot write there") and err.count("\n") == 1
    )


@pytest.mark.parametrize("run_id", ["a/b", "..", ".hidden", "x\x00y", "run id"])
def test_compare_refuses_a_run_id_that_is_no_folder_name(tmp_path, capsys, run_id):
    """Tests `compare --run-id` with a path, a dot name, a NUL or a space: exit 2, one line, nothing run."""
    assert main(["compare", "--suite", "smoke", "--out", str(tmp_path), "--run-id", run_id]) == 2
    err = capsys.readouterr().err
    assert "--run-id: must be letters, digits" in err and err.count("\n") == 1
    assert not (tmp_path / "results").exists()


def test_report_reads_the_run_with_load_results(tmp_path, monkeypatch):
    """Tests that `report` reads its run through load_results (what the property checks), once."""
    import experiments.results

    calls = []
    real = experiments.results.load_results

    def spy(folder, notes=None):
        calls.append(Path(folder))
        return real(folder, notes)

    monkeypatch.setattr(experiments.results, "load_results", spy)
    monkeypatch.setattr(experiments.report, "write_report", lambda *a, **k: Path("report.html"))
    folder = run_folder(tmp_path, INTACT[0])
    assert main(["report", str(folder)]) == 0
    assert calls == [folder]


def table_bytes(rows: pd.DataFrame, **columns) -> bytes:
    """``rows`` as Parquet with ``columns`` replaced as given (Arrow arrays: a null in a column
    pandas holds as ``bool``), or dropped where given None."""
    table = pa.Table.from_pandas(rows, preserve_index=False)
    for name, values in columns.items():
        index = table.column_names.index(name)
        table = (
            table.remove_column(index) if values is None else table.set_column(index, name, values)
        )
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


TRACE = BATCHES[2]


@pytest.mark.parametrize(
    "batches, named, problem",
    [
        ([INTACT[0], table_bytes(TRACE, moves=None)], 1, "moves: missing column beside trace rows"),
        (
            [table_bytes(BATCHES[1], valid=pa.nulls(len(BATCHES[1]), pa.bool_()))],
            0,
            "valid: 6 rows hold no value",
        ),
        (
            [INTACT[0], parquet_bytes(BATCHES[1].assign(experiment="other"))],
            1,
            "experiment: rows of experiment 'other' (digest 0123456789abcdef) in a run of 'trial'",
        ),
        (
            [INTACT[1], parquet_bytes(BATCHES[1].assign(level1=BATCHES[1]["level1"] + 5))],
            1,
            "6 rows repeat rows of batch-0.parquet with other results (first: b range/heuristic, "
            "level1 14 there, 19 here); keep one of the two",
        ),
        (
            [parquet_bytes(BATCHES[0].assign(level1=-BATCHES[0]["level1"]))],
            0,
            "level1: holds -14, below 0",
        ),
        (
            [parquet_bytes(BATCHES[0].assign(runtime_s=float("inf")))],
            0,
            "runtime_s: holds inf, not a number of seconds or megabytes",
        ),
        (
            [parquet_bytes(BATCHES[0].assign(peak_rss_mb=1e300))],
            0,
            "peak_rss_mb: holds 1e+300, more than 1e+09",
        ),
    ],
    ids=[
        "trace-without-moves",
        "null-valid",
        "another-experiment",
        "conflicting-copy",
        "negative-level",
        "infinite-runtime",
        "absurd-memory",
    ],
)
def test_report_on_a_damaged_run_is_one_line_naming_the_batch(
    tmp_path, capsys, batches, named, problem
):
    """Tests `report` on the damaged runs of the probe: a trace batch without ``moves``, a null
    ``valid``, rows of another experiment, two conflicting copies of a batch, a negative level, an
    infinite runtime: exit 2 and one line naming the batch and the problem, no traceback."""
    folder = run_folder(tmp_path, *batches)
    assert main(["report", str(folder), "--out", str(tmp_path / "report")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(f"error: {folder / f'batch-{named}.parquet'}: "), captured.err
    assert problem in captured.err


def test_report_on_trace_runs_without_their_steps_notes_them(tmp_path, capsys):
    """Tests `report` on a trace batch holding only the per-trace rows: the report is written,
    with a note on stderr and in the report naming the runs, which are not compared."""
    folder = run_folder(tmp_path, INTACT[0], parquet_bytes(TRACE[TRACE["step"].isna()]))
    out = tmp_path / "report"
    assert main(["report", str(folder), "--out", str(out), "--format", "markdown"]) == 0
    err = capsys.readouterr().err.splitlines()
    note = (
        f"note: {folder}: 3 trace runs have a per-trace row without their per-step rows (first: "
        "trace/sticky/rolling-restart/equal-zero/p12-m3-t2-T2/s1/range//heuristic in "
        "batch-1.parquet); they are not compared"
    )
    assert err[0] == note
    report = (out / "report.md").read_text()
    assert "## Notes on the rows" in report and note.removeprefix("note: ") in report
