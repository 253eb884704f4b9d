"""Named queries: the old runbook's, which ship with the console under stable slugs (links
such as ``/sql/?query=sessions-with-cost`` keep working), and the ones staff saved.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from django.utils.translation import gettext_lazy

from hermes_explorer import dialect

from .models import SavedQuery


@dataclass(frozen=True)
class NamedQuery:
    slug: str
    name: str
    sql: str
    description: str = ""
    canned: bool = True
    created_by: str = ""
    # The query on a PostgreSQL profile ("": the same; None: not offered there).
    postgres_sql: str | None = ""


CANNED_QUERIES: tuple[NamedQuery, ...] = (
    NamedQuery(
        slug="sessions-with-cost",
        name=gettext_lazy("All sessions with message count and cost"),
        description=gettext_lazy("Every session, newest first (from the old runbook)."),
        sql="""SELECT id, title, source, message_count,
       datetime(started_at, 'unixepoch') AS date,
       estimated_cost_usd
FROM sessions
ORDER BY started_at DESC""",
        postgres_sql="""SELECT id, title, source, message_count,
       to_char(to_timestamp(started_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS date,
       estimated_cost_usd
FROM sessions
ORDER BY started_at DESC NULLS LAST""",
    ),
    NamedQuery(
        slug="telegram-conversations",
        name=gettext_lazy("Telegram conversations"),
        description=gettext_lazy(
            "Sessions that came in through Telegram, newest first (from the old runbook)."
        ),
        sql="""SELECT id, title, user_id, message_count,
       datetime(started_at, 'unixepoch') AS date
FROM sessions
WHERE source = 'telegram'
ORDER BY started_at DESC""",
        postgres_sql="""SELECT id, title, user_id, message_count,
       to_char(to_timestamp(started_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS date
FROM sessions
WHERE source = 'telegram'
ORDER BY started_at DESC NULLS LAST""",
    ),
    NamedQuery(
        slug="search-messages",
        name=gettext_lazy("Search messages by keyword, with session title"),
        description=gettext_lazy(
            "Messages whose content contains a keyword (from the old runbook). LIKE reads every "
            "message: on a big store prefer the full-text version below, or /search/."
        ),
        sql="""SELECT s.title, s.source, m.role, m.content,
       datetime(m.timestamp, 'unixepoch') AS date
FROM messages m
JOIN sessions s ON s.id = m.session_id
WHERE m.content LIKE '%' || :keyword || '%'
ORDER BY m.timestamp DESC""",
        postgres_sql="""SELECT s.title, s.source, m.role, m.content,
       to_char(to_timestamp(m.timestamp) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS date
FROM messages m
JOIN sessions s ON s.id = m.session_id
WHERE m.content ILIKE '%' || :keyword || '%'
ORDER BY m.timestamp DESC NULLS LAST""",
    ),
    NamedQuery(
        slug="stats-per-channel",
        name=gettext_lazy("Statistics per channel"),
        description=gettext_lazy(
            "Sessions, messages and estimated cost per source (from the old runbook)."
        ),
        sql="""SELECT source,
       COUNT(*) AS nb_sessions,
       SUM(message_count) AS nb_messages,
       ROUND(SUM(estimated_cost_usd), 4) AS cout_total_usd
FROM sessions
GROUP BY source""",
        postgres_sql="""SELECT source,
       COUNT(*) AS nb_sessions,
       SUM(message_count) AS nb_messages,
       ROUND(SUM(estimated_cost_usd)::numeric, 4) AS cout_total_usd
FROM sessions
GROUP BY source""",
    ),
    NamedQuery(
        slug="titles-with-message-counts",
        name=gettext_lazy("Titles with their message counts"),
        description=gettext_lazy(
            "The example of the old /state?sql= page: sessions by number of messages."
        ),
        sql="""SELECT s.title, s.source, COUNT(m.id) AS nb_messages
FROM sessions s
JOIN messages m ON m.session_id = s.id
GROUP BY s.id
ORDER BY nb_messages DESC""",
    ),
    NamedQuery(
        slug="search-messages-fts",
        name=gettext_lazy("Search messages with the full-text index"),
        description=gettext_lazy(
            "Same as the keyword search, through messages_fts (FTS5 syntax: words, "
            '"a phrase", prefix*, AND/OR/NOT). Fast on any size of store.'
        ),
        sql="""SELECT s.title, s.source, m.role, substr(m.content, 1, 500) AS content,
       datetime(m.timestamp, 'unixepoch') AS date
FROM messages_fts f
JOIN messages m ON m.id = f.rowid
JOIN sessions s ON s.id = m.session_id
WHERE messages_fts MATCH :query_text
ORDER BY m.id DESC
LIMIT 200""",
        postgres_sql=None,
    ),
)
CANNED_BY_SLUG = {q.slug: q for q in CANNED_QUERIES}


def _from_saved(saved: SavedQuery) -> NamedQuery:
    return NamedQuery(
        slug=saved.slug,
        name=saved.name,
        sql=saved.sql,
        description=saved.description,
        canned=False,
        created_by=saved.created_by.get_username() if saved.created_by else "",
    )


def canned_queries() -> list[NamedQuery]:
    """The canned queries of the current profile's dialect (the SQL of PostgreSQL on a schema,
    where the full-text one has no equivalent)."""
    if not dialect.postgres():
        return list(CANNED_QUERIES)
    offered = [q for q in CANNED_QUERIES if q.postgres_sql is not None]
    return [replace(q, sql=q.postgres_sql or q.sql) for q in offered]


def named_query(slug: str) -> NamedQuery | None:
    """A canned query, or a saved one, by slug (None when there is no such query)."""
    if slug in CANNED_BY_SLUG:
        return next((q for q in canned_queries() if q.slug == slug), None)
    saved = SavedQuery.objects.select_related("created_by").filter(slug=slug[:80]).first()
    return _from_saved(saved) if saved else None


def all_named_queries() -> dict[str, list[NamedQuery]]:
    """The canned and the saved queries, as the console's templates list them."""
    saved = [_from_saved(q) for q in SavedQuery.objects.select_related("created_by")]
    return {"canned_queries": canned_queries(), "saved_queries": saved}
