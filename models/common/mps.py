"""An exact MPS file of a PuLP problem (one job: numbers written without rounding).

The formulation, and why its answer is what its status says: docs/design/formulations.md.
"""

from __future__ import annotations

import time

import pulp


def _number(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 2**63 else repr(value)


def _line(first: str, second: str, number: str) -> str:
    """A data line in fixed-MPS columns (CBC reads only those; HiGHS reads both); numbers may run past column 36."""
    return f"    {first:<8}  {second:<8}  {number}"


def _bound(kind: str, i: int, value: float | None = None) -> str:
    return f" {kind} BND       {f'c{i}':<8}" + ("" if value is None else f"  {_number(value)}")


#: Rows written between two looks at the deadline.
_ROWS_PER_CHECK = 64

_SENSE = {pulp.LpConstraintLE: "L", pulp.LpConstraintGE: "G", pulp.LpConstraintEQ: "E"}


def write_mps(
    problem: pulp.LpProblem,
    objective: pulp.LpAffineExpression,
    path: str,
    deadline: float | None = None,
) -> tuple[list[pulp.LpVariable], float, float] | None:
    """Write ``problem`` minimising ``objective`` to ``path``.

    Returns the variables in column order (column ``c<i>`` is ``variables[i]``),
    the objective's constant and the largest magnitude of a constraint
    coefficient or right-hand side; ``None``, with nothing written, once
    ``time.perf_counter()`` passes ``deadline`` (checked every
    :data:`_ROWS_PER_CHECK` rows: a 2,000 x 40 lag-aware model has 570,000
    entries and takes about a second).
    """
    variables = list(problem.variables())
    known = {v.name for v in variables}
    for v in objective.keys():
        if v.name not in known:
            variables.append(v)
            known.add(v.name)
    column = {
        id(v): i for i, v in enumerate(variables)
    }  # id(): PuLP's name and hash are Python properties
    heads = [f"    {f'c{i}':<8}  " for i in range(len(variables))]
    numbers: dict[float, str] = {}  # coefficient -> its text (a model has few distinct ones)

    def text(value: float) -> str:
        written = numbers.get(value)
        if written is None:
            written = numbers[value] = _number(value)
        return written

    entries: list[list[str]] = [[] for _ in variables]
    for v, c in objective.items():
        if c:
            entries[column[id(v)]].append(f"{heads[column[id(v)]]}{'OBJ':<8}  {text(c)}")
    rows, rhs = [], []
    biggest = 0
    for j, constraint in enumerate(problem.constraints.values()):
        if deadline is not None and j % _ROWS_PER_CHECK == 0 and time.perf_counter() > deadline:
            return None
        biggest = max(
            biggest, abs(constraint.constant), max(map(abs, constraint.values()), default=0)
        )
        rows.append(f" {_SENSE[constraint.sense]}  r{j}")
        row = f"{f'r{j}':<8}  "
        for v, c in constraint.items():
            i = column[id(v)]
            entries[i].append(heads[i] + row + text(c))
        if constraint.constant:
            rhs.append(_line("RHS", f"r{j}", _number(-constraint.constant)))
    lines = ["NAME          model", "ROWS", " N  OBJ", *rows, "COLUMNS"]
    bounds = []
    for i, v in enumerate(variables):
        integer = v.cat == pulp.LpInteger
        if integer:
            lines.append("    MARKER    'MARKER'                 'INTORG'")
        lines.extend(entries[i] or [_line(f"c{i}", "OBJ", "0")])
        if integer:
            lines.append("    MARKER    'MARKER'                 'INTEND'")
        low, up = v.lowBound, v.upBound
        if low is not None and low == up:
            bounds.append(_bound("FX", i, low))
            continue
        if low is None:
            bounds.append(_bound("MI" if up is not None else "FR", i))
        elif low != 0 or (integer and up is None):  # COIN reads a bare integer column as binary
            bounds.append(_bound("LO", i, low))
        if up is not None:
            bounds.append(_bound("UP", i, up))
    lines += ["RHS", *rhs, "BOUNDS", *bounds, "ENDATA", ""]
    with open(path, "w") as out:
        out.write("\n".join(lines))
    return variables, float(objective.constant or 0), float(biggest)
