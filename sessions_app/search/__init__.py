"""Full-text search over messages: :func:`run_search` (``engine``) answers a
:class:`SearchRequest` (``query``)."""

from .engine import RANKED_CAP, SearchResult, run_search
from .query import MODES, PER_PAGE, SORTS, SearchRequest

__all__ = [
    "MODES",
    "PER_PAGE",
    "RANKED_CAP",
    "SORTS",
    "SearchRequest",
    "SearchResult",
    "run_search",
]
