"""Argument types of the command line shared by its subcommands (argparse ``type=`` callables)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import Any, Protocol


class Subcommands(Protocol):
    """The ``rebalance-lab`` subparsers that a command module's ``register`` adds its subcommand
    to (argparse's ``add_subparsers()``)."""

    def add_parser(self, name: str, **options: Any) -> argparse.ArgumentParser: ...


#: At most this many CP-SAT workers (CP-SAT starts one thread each).
MAX_WORKERS = 64
#: The longest time limit, in seconds (a year).
MAX_SECONDS = 365 * 86400
#: An integer as the command line takes it: ASCII digits, an optional sign.
ASCII_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)


def integer_in(low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type``: an integer in ``[low, high]``."""

    def parse(text: str) -> int:
        if not ASCII_INTEGER.fullmatch(text):  # int() also takes other scripts' digits and "1_0"
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer")
        value = int(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is out of range [{low}, {high}]")
        return value

    parse.__name__ = "integer"
    return parse


def seconds(text: str) -> float:
    """An argparse ``type``: a positive, finite number of seconds (at most a year)."""
    if not text.isascii():  # float() also takes other scripts' digits
        raise argparse.ArgumentTypeError(f"{text!r} is not a number")
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds in (0, {MAX_SECONDS}]")
    return value


def broker_ids(text: str) -> list[int]:
    """An argparse ``type``: comma-separated broker ids (integers >= 0)."""
    try:
        ids = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of broker ids"
        ) from None
    if any(i < 0 for i in ids):
        raise argparse.ArgumentTypeError(f"{text!r}: broker ids are >= 0")
    return ids
