"""MkDocs hook: Sphinx roles in docstrings (``:func:`x```) shown as plain code in the API pages.

The docstrings cross-reference with Sphinx's roles; mkdocstrings renders the literal as code and
leaves the role's name in front of it.  This drops the name, keeping the code.
"""

from __future__ import annotations

import re

_ROLE = re.compile(r":(?:func|mod|class|data|meth|attr|obj|exc|const):(?=<code>)")


def on_page_content(html: str, page, config, files) -> str:  # noqa: ARG001 - MkDocs' signature
    return _ROLE.sub("", html)
