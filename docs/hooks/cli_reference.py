"""MkDocs hook: the command-line reference, generated from the argument parser.

``docs/cli/reference.md`` holds the marker ``<!-- cli-reference -->``; at build time it is replaced
by one section per command of :func:`experiments.cli.build_parser` (the parser ``rebalance-lab``
itself runs), walking its subparsers: usage, description, every argument with its metavar,
choices, default and help, and the epilog.  Nothing is copied by hand, so the page cannot drift
from the parser.
"""

from __future__ import annotations

import argparse
import html
from pathlib import Path

MARKER = "<!-- cli-reference -->"
PAGE = "cli/reference.md"


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices.items())
    return []


def _cell(text: str) -> str:
    return html.escape(" ".join(text.split()), quote=False).replace("|", "\\|")


def _argument_row(action: argparse.Action, parser: argparse.ArgumentParser) -> str | None:
    if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
        return None
    if action.help == argparse.SUPPRESS:
        return None
    if action.option_strings:
        names = ", ".join(f"`{name}`" for name in action.option_strings)
        if action.nargs != 0:
            if action.metavar is None and action.choices is not None:
                metavar = action.dest.upper()  # the choices are listed in the meaning
            else:
                metavar = parser._get_formatter()._format_args(action, action.dest.upper())
            names += f" `{metavar}`"
    else:
        metavar = action.metavar or action.dest
        names = f"`{metavar}`"
    details = []
    if action.choices is not None and not isinstance(action.choices, dict):
        details.append("one of " + ", ".join(f"`{choice}`" for choice in action.choices))
    if action.required and action.option_strings:
        details.append("required")
    default = action.default
    if (
        action.option_strings
        and default not in (None, False, argparse.SUPPRESS)
        and action.nargs != 0
        and "default" not in (action.help or "")
    ):
        details.append(f"default `{default}`")
    help_text = _cell(action.help or "")
    extra = f" ({'; '.join(details)})" if details else ""
    return f"| {names} | {help_text}{extra} |"


def _summaries(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each subcommand's one-line ``help``, as ``rebalance-lab --help`` lists it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {choice.dest: choice.help or "" for choice in action._choices_actions}
    return {}


def _section(name: str, parser: argparse.ArgumentParser, level: int, shared: str) -> list[str]:
    out = [f"{'#' * level} `{name}`", ""]
    if parser.description:
        out += [parser.description.strip(), ""]
    usage = parser.format_usage().strip()
    usage = usage[len("usage: ") :] if usage.startswith("usage: ") else usage
    out += ["```text", usage, "```", ""]
    rows = [row for action in parser._actions if (row := _argument_row(action, parser))]
    if rows:
        out += ["| argument | meaning |", "| --- | --- |", *rows, ""]
    children = _subcommands(parser)
    if children:
        summaries = _summaries(parser)
        out += ["| command | what it does |", "| --- | --- |"]
        out += [f"| `{child}` | {_cell(summaries.get(child, ''))} |" for child, _ in children]
        out.append("")
    if parser.epilog and parser.epilog != shared:
        out += ["```text", parser.epilog.strip("\n"), "```", ""]
    elif parser.epilog and level > 2:
        out += ["Its `--help` ends with the [problem formats](#problem-formats) below.", ""]
    for child, sub in children:
        out += _section(f"{name} {child}", sub, min(level + 1, 4), shared)
    return out


def reference() -> str:
    """The Markdown of the whole command-line reference."""
    import experiments.cli
    from experiments.cli import build_parser

    parser = build_parser()
    # Defaults computed from the checkout (the gate's baseline) are shown relative to it.
    root = str(Path(experiments.cli.__file__).resolve().parents[1]) + "/"
    shared = parser.epilog or ""
    lines = _section("rebalance-lab", parser, 2, shared)
    if shared:
        lines += ["## Problem formats", "", "As `--help` prints them:", ""]
        lines += ["```text", shared.strip("\n"), "```", ""]
    return "\n".join(lines).replace(root, "")


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 - MkDocs' signature
    if page.file.src_uri == PAGE and MARKER in markdown:
        return markdown.replace(MARKER, reference())
    return markdown
