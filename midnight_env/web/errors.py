"""The one error of the web app: a request it refuses, with the HTTP status and the message the page shows."""

from __future__ import annotations


class WebError(ValueError):
    """A request refused: ``status`` is the HTTP status (4xx), the message names the bad value and
    what is allowed, as every error of the project does."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


__all__ = ["WebError"]
