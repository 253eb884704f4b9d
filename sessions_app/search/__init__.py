"""Full-text search over messages: which index answers, how user text becomes a query.

``query`` (the request and its FTS5 query or LIKE terms), ``engine`` (strategy, budgets,
fallbacks, notes: :func:`run_search`), ``statements`` (the SQL, and ``state_meta``),
``snippets`` (hits as redacted, escaped, highlighted HTML).
"""

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
