"""``file:`` URIs of a state.db: the read-only form the backend opens, and the path back."""

from __future__ import annotations

from urllib.parse import quote, unquote


def readonly_uri(name: str) -> str:
    """``file:<path>?mode=ro`` for a plain path; a URI keeps its query but gains mode=ro."""
    if name.startswith("file:"):
        base, _, query = name.partition("?")
        # immutable=1 is dropped: on a WAL file being written it misses rows or reads corrupt.
        pairs = [p for p in query.split("&") if p and not p.startswith(("mode=", "immutable="))]
        return base + "?" + "&".join(["mode=ro", *pairs])
    return "file:" + quote(str(name)) + "?mode=ro"


def path_of(name: str) -> str:
    """The file system path of a state.db given as a plain path or a ``file:`` URI."""
    if name.startswith("file:"):
        return unquote(name[5:].partition("?")[0])
    return name
