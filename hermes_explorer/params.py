"""Yes/no words in query strings and the environment, read the same way everywhere."""

from __future__ import annotations

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})


def truthy(value: object) -> bool:
    """``1``, ``true``, ``yes`` or ``on`` (any case, spaces ignored); anything else is no."""
    return isinstance(value, str) and value.strip().lower() in TRUE_WORDS


def flag(request, name: str) -> bool:
    """A yes/no query parameter such as ``?chain=1`` or ``?_bom=on``."""
    return truthy(request.GET.get(name, ""))
