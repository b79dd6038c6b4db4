"""The one error type for malformed problem files.

Every message names the file, the field and the problem, on one line, so the
command line can print it as it is and exit with status 2.
"""

from __future__ import annotations


class ProblemError(ValueError):
    """A problem file, or one of its fields, is malformed.

    Parameters
    ----------
    field
        Where in the document, e.g. ``members[2].owned.t0[1]``; empty for the
        document as a whole.
    message
        What is wrong, e.g. ``must be an integer >= 0, got -1``.
    source
        The file (or ``<dict>`` / ``<text>``) the document came from.
    """

    def __init__(self, field: str, message: str, source: str | None = None):
        self.field = field
        self.message = message
        self.source = source
        super().__init__(str(self))

    def with_source(self, source: str) -> ProblemError:
        """Return the same error naming ``source`` as the file."""
        return ProblemError(self.field, self.message, source)

    def __str__(self) -> str:
        where = self.source or "<problem>"
        line = (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )
        return " ".join(line.split())
