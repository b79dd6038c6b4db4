"""Tests that problems.io._plain_members (the members' ids, generations, racks and instance ids checked for
all members at once) says True exactly when every member would pass those checks one by one."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from problems import checks
from problems.errors import ProblemError
from problems.io import _optional_string, _plain_members

BAD = st.sampled_from(["", "x\ud800", None, 0, -2, 2**31, True, 1.0, [], {}])
GOOD = {
    "id": st.sampled_from(["m0", "m1", "é"]),
    "generation": st.sampled_from([None, -1, 0, 2**31 - 1]),
    "rack": st.sampled_from([None, "r", "é"]),
    "instance_id": st.sampled_from([None, "i", "é"]),
}


@st.composite
def members(draw):
    """Mostly valid members (each key absent, or a valid value, or now and then a bad one); now and
    then not an object."""
    docs = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.integers(0, 19)) == 0:
            docs.append(draw(st.sampled_from([None, [], "m", 3])))
            continue
        member = {}
        for key, good in GOOD.items():
            if key == "id" or draw(st.booleans()):
                member[key] = draw(BAD) if draw(st.integers(0, 9)) == 0 else draw(good)
        if draw(st.integers(0, 19)) == 0:
            del member["id"]
        docs.append(member)
    return docs


def one_by_one(docs) -> bool:
    try:
        for member in docs:
            checks.expect(member, dict, "m", "an object")
            if "id" not in member:
                return False
            checks.string(member["id"], "id")
            if member.get("generation") is not None:
                checks.integer(member["generation"], "generation", low=-1)
            _optional_string(member, "rack", "m")
            _optional_string(member, "instance_id", "m")
    except ProblemError:
        return False
    return bool(docs)


@given(members())
def test_plain_exactly_when_every_member_passes(docs):
    """Tests random members: strings empty or not Unicode, generations out of range or of another type, nulls."""
    assert _plain_members(docs) == one_by_one(docs)
