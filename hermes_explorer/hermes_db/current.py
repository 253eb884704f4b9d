"""Which store's connection alias the code running now reads.

Code written for one store reads the *current* store: ``hermes`` unless :func:`using` said
otherwise.  A context variable, so threads and streamed responses each keep their own.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

DEFAULT_ALIAS = "hermes"

_alias: contextvars.ContextVar[str | None] = contextvars.ContextVar("hermes_alias", default=None)


def current_alias() -> str:
    return _alias.get() or DEFAULT_ALIAS


@contextlib.contextmanager
def using(alias: str) -> Iterator[None]:
    """Read the store of ``alias`` inside the block."""
    token = _alias.set(alias)
    try:
        yield
    finally:
        _alias.reset(token)
