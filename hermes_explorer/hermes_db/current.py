"""Which store's connection alias the code running now reads: ``hermes`` unless :func:`using`
said otherwise, in a context variable, so threads and streamed responses each keep their own.
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
def scoped(var: contextvars.ContextVar, value) -> Iterator[None]:
    """``var`` set to ``value`` inside the block; None leaves it as it is around the block."""
    if value is None:
        yield
        return
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)


def using(alias: str | None):
    """Read the store of ``alias`` inside the block (None: the one read around it)."""
    return scoped(_alias, alias)
