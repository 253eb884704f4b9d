"""What a PostgreSQL schema holds, read from ``pg_catalog`` into the SQLite side's StoreShape,
and whether the connection's role could write to it."""

from __future__ import annotations

from ..hermes_db.catalog import Catalog, ForeignKey, TableInfo
from ..hermes_db.shape import KNOWN_TABLES, StoreShape

# Hermes's full-text layout on PostgreSQL: a generated tsvector column of ``messages``.
FTS_LAYOUT = "postgres tsvector"
# That column is the index, not the conversation: its lexemes are the stored text unredacted.
# The catalog (the tables and columns the old API shows and filters) leaves it out, as it
# leaves out SQLite's full-text tables.
INDEX_COLUMN = ("messages", "search_vector")

_SCHEMA = """
SELECT has_schema_privilege(n.oid, 'USAGE') FROM pg_namespace n WHERE n.nspname = %s
"""
_COLUMNS = """
SELECT c.relname, c.relkind, a.attname, format_type(a.atttypid, a.atttypmod),
       coalesce(array_position(i.indkey::int2[], a.attnum) + 1, 0)
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
ORDER BY c.relname, a.attnum
"""
# Single-column foreign keys (compound ones are left out, as Datasette did).
_FOREIGN_KEYS = """
SELECT c.relname, a.attname, o.relname, oa.attname
FROM pg_constraint k
JOIN pg_class c ON c.oid = k.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_class o ON o.oid = k.confrelid
JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]
JOIN pg_attribute oa ON oa.attrelid = k.confrelid AND oa.attnum = k.confkey[1]
WHERE n.nspname = %s AND k.contype = 'f' AND cardinality(k.conkey) = 1
ORDER BY c.relname, a.attnum
"""
# Any way the role could change the schema's conversations, as words (empty: none).
_WRITES = """
SELECT concat_ws(', ',
  CASE WHEN r.rolsuper THEN 'superuser' END,
  CASE WHEN current_setting('default_transaction_read_only') <> 'on'
       THEN 'sessions are not read-only' END,
  CASE WHEN has_schema_privilege(%s, 'CREATE') THEN 'CREATE on the schema' END,
  CASE WHEN has_database_privilege(current_database(), 'CREATE')
       THEN 'CREATE on the database' END,
  (SELECT 'INSERT/UPDATE/DELETE/TRUNCATE on ' || string_agg(c.relname, ', ' ORDER BY c.relname)
   FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname = %s AND c.relkind IN ('r', 'p')
     AND has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE')))
FROM pg_roles r WHERE r.rolname = current_user
"""


def inspect(conn, schema: str) -> tuple[StoreShape | None, str, str]:
    """``(shape, problem, how the role could write)`` of ``schema`` on ``conn``."""
    with conn.cursor() as cur:
        cur.execute(_SCHEMA, [schema])
        usable = cur.fetchone()
        if usable is None:
            return None, f"no such schema: {schema}", ""
        if not usable[0]:
            return None, f"permission denied for schema {schema}", ""
        cur.execute(_COLUMNS, [schema])
        found = cur.fetchall()
        cur.execute(_FOREIGN_KEYS, [schema])
        keys: dict[str, list[ForeignKey]] = {}
        for table, column, other, other_column in cur.fetchall():
            keys.setdefault(table, []).append(ForeignKey(column, other, other_column))
        cur.execute(_WRITES, [schema, schema])
        writes = cur.fetchone()[0]
        order: dict[str, list] = {}
        views = set()
        for table, kind, column, type_, key in found:
            order.setdefault(table, []).append((column, type_, key))
            if kind in ("v", "m"):
                views.add(table)
        version = None
        if "schema_version" in order:
            cur.execute("SELECT max(version) FROM schema_version")
            version = cur.fetchone()[0]
    columns = {t: frozenset(c for c, _, _ in cols) for t, cols in order.items()}
    shown = {t: [col for col in cols if (t, col[0]) != INDEX_COLUMN] for t, cols in order.items()}
    shape = StoreShape(
        schema_version=int(version) if version is not None else None,
        tables=frozenset(order),
        columns=columns,
        column_order={t: tuple(c for c, _, _ in order[t]) for t in KNOWN_TABLES if t in order},
        fts_layout=FTS_LAYOUT if "search_vector" in columns.get("messages", ()) else None,
        catalog=Catalog(
            tables={
                t: TableInfo(
                    name=t,
                    columns=tuple(c for c, _, _ in cols),
                    types=tuple(ty for _, ty, _ in cols),
                    pks=tuple(c for c, _, k in sorted(cols, key=lambda col: col[2]) if k),
                    foreign_keys=tuple(keys.get(t, ())),
                )
                for t, cols in shown.items()
                if t not in views
            },
            views=tuple(sorted(views)),
        ),
    )
    missing = [t for t in ("sessions", "messages") if t not in order]
    problem = f"no such table: {', '.join(missing)} (schema {schema})" if missing else ""
    return shape, problem, writes or ""
