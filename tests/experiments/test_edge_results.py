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
from experiments.results import (
    ADDED_COLUMNS,
    DAMAGED_SUFFIX,
    ROW_KEY,
    done_scenarios,
    load_results,
    read_batch,
    results_folder,
)
from experiments.runs import RESULT_COLUMNS
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
            )
            rows.append(row)
    return pd.DataFrame(rows, columns=list(RESULT_COLUMNS)).astype(RESULT_COLUMNS)


def parquet_bytes(rows: pd.DataFrame) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(rows, preserve_index=False), sink)
    return sink.getvalue()


#: Two intact batches (one and two scenarios), as bytes: the property writes them, damaged or not.
BATCHES = [synthetic_rows(ids) for ids in (["a"], ["b", "c"])]
INTACT = [parquet_bytes(rows) for rows in BATCHES]
EMPTY = parquet_bytes(BATCHES[0].iloc[:0])


def retyped(rows: pd.DataFrame, column: str) -> pd.DataFrame:
    """``rows`` with ``column`` holding values of another type (numbers for text, text otherwise)."""
    kind = RESULT_COLUMNS[column]
    wrong = range(len(rows)) if kind == "string" else [f"x{i}" for i in range(len(rows))]
    return rows.assign(**{column: list(wrong)})


#: Each batch without each column, and with each column of another type.
WITHOUT = {
    (b, c): parquet_bytes(rows.drop(columns=c))
    for b, rows in enumerate(BATCHES)
    for c in RESULT_COLUMNS
}
RETYPED = {
    (b, c): parquet_bytes(retyped(rows, c))
    for b, rows in enumerate(BATCHES)
    for c in RESULT_COLUMNS
}


#: The kinds of damage done to a batch.
DAMAGES = ("truncated", "garbage", "empty-file", "footer", "missing", "retyped")


@st.composite
def folders(draw) -> list[tuple[str, str, int, object]]:
    """A run folder's files: (name, kind, the intact batch it comes from, what the damage takes).

    Kinds: ``intact``, ``repeated`` (an intact batch again under a later name), ``empty`` (a batch of
    no rows) and the :data:`DAMAGES`."""
    files = []
    for batch in range(len(INTACT)):
        kind = draw(st.sampled_from(["intact", "intact", "damaged", "repeated", "absent"]))
        name = f"batch-{batch}.parquet"
        if kind == "absent":
            continue
        if kind == "damaged":
            how = draw(st.sampled_from(DAMAGES))
            detail: object = None
            if how == "truncated":
                detail = draw(st.integers(0, len(INTACT[batch]) - 1))
            elif how in ("garbage", "footer"):
                detail = draw(st.binary(max_size=64))
            elif how in ("missing", "retyped"):
                detail = draw(
                    st.sampled_from([c for c in RESULT_COLUMNS if c not in ADDED_COLUMNS])
                )
            files.append((name, how, batch, detail))
            continue
        files.append((name, "intact", batch, None))
        if kind == "repeated":
            files.append((f"batch-{batch}-copy.parquet", "repeated", batch, None))
    if draw(st.booleans()):
        files.append(("batch-9-empty.parquet", "empty", 0, None))
    return files


def file_bytes(kind: str, batch: int, detail) -> bytes:
    """The bytes of a planned file (:func:`folders`)."""
    if kind in ("intact", "repeated"):
        return INTACT[batch]
    if kind == "empty":
        return EMPTY
    if kind == "truncated":
        return INTACT[batch][:detail]
    if kind == "garbage":
        return detail
    if kind == "empty-file":
        return b""
    if kind == "footer":  # Parquet's magic bytes around garbage
        return b"PAR1" + detail + b"PAR1"
    return (WITHOUT if kind == "missing" else RETYPED)[batch, detail]


@settings(max_examples=500)
@given(files=folders())
def test_damaged_folders_are_refused_by_name_or_read_once_and_resumed(files):
    """Property: a folder with a damaged batch is a ProblemError (one line) naming a damaged batch for
    `report`; otherwise its rows are every intact batch's rows, each (scenario, strategy, variant,
    solver) once, with a note exactly when a batch repeats another.  Resuming keeps every intact batch's
    scenarios as done, sets each damaged batch aside (so its scenarios are solved again), and leaves a
    folder that reads without error."""
    folder = Path(tempfile.mkdtemp(prefix="edge-results-"))
    try:
        for name, kind, batch, detail in files:
            (folder / name).write_bytes(file_bytes(kind, batch, detail))
        damaged = {name for name, kind, _, _ in files if kind in DAMAGES}
        held = sorted({batch for _, kind, batch, _ in files if kind in ("intact", "repeated")})
        expected = (
            pd.concat([BATCHES[b] for b in held], ignore_index=True)
            if held
            else BATCHES[0].iloc[:0]
        )
        repeated = any(kind == "repeated" for _, kind, _, _ in files)

        notes: list[str] = []
        if damaged:
            with pytest.raises(ProblemError) as caught:
                load_results(folder, notes)
            message = str(caught.value)
            assert "\n" not in message
            assert any(message.startswith(f"{folder / name}: ") for name in damaged), message
        else:
            rows = load_results(folder, notes)
            assert not rows.duplicated(ROW_KEY).any()
            assert sorted(map(tuple, rows[ROW_KEY].to_numpy())) == sorted(
                map(tuple, expected[ROW_KEY].to_numpy())
            )
            assert len(notes) == int(repeated) and all("\n" not in n for n in notes)

        notes = []
        done = done_scenarios(folder, notes)
        assert done == set(expected["scenario_id"])
        assert len(notes) == len(damaged) and all("solved again" in n for n in notes)
        assert {p.name for p in folder.glob(f"*{DAMAGED_SUFFIX}")} == {
            name + DAMAGED_SUFFIX for name in damaged
        }
        if damaged:  # what compare reads after the resumed run (else read above, unchanged)
            rows = load_results(folder)
            assert set(rows["scenario_id"]) == done and not rows.duplicated(ROW_KEY).any()
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
        experiments.compare, "write_report", lambda rows, out, source: Path(out) / "report.html"
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
