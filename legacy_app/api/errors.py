"""The one error an API request can end with: a JSON object with Datasette's keys."""

from __future__ import annotations


class ApiError(Exception):
    """A request the API answers with ``{"ok": false, "error": …, "status": …}``."""

    def __init__(self, message: str, status: int = 400, title: str | None = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.title = title
