"""Full-text search over messages: which index answers, how user text becomes a query.

The modules, one role each:

``query``       what a search asks for (:class:`SearchRequest`) and how its text becomes an
                FTS5 query or LIKE terms;
``engine``      which strategy answers (word index, trigram index, bounded scan), the time
                budgets and fallbacks, the notes a page shows (:func:`run_search`);
``statements``  the SQL each strategy runs, and what ``state_meta`` says about the index;
``snippets``    hits as HTML: snippets and excerpts redacted, escaped and highlighted.

The search page uses the names this package exports.
"""

from .engine import RANKED_CAP, SearchResult, run_search
from .query import MODES, PER_PAGE, SORTS, SearchRequest, words_match
from .snippets import MARK_CLOSE, MARK_OPEN, highlight, render_snippet
from .statements import Hit

__all__ = [
    "MARK_CLOSE",
    "MARK_OPEN",
    "MODES",
    "PER_PAGE",
    "RANKED_CAP",
    "SORTS",
    "Hit",
    "SearchRequest",
    "SearchResult",
    "highlight",
    "render_snippet",
    "run_search",
    "words_match",
]
