"""The read-only fence around one SQL statement typed by a person on the state.db: a raw
``sqlite3`` connection (:func:`open_readonly`) in a process of its own (``child.py``), whose
authorizer refuses anything but reads when the statement is *prepared*.

Only the first statement runs, and named parameters are bound, never pasted.  No Django is
imported at load time, so the child starts fast; :func:`translate` runs in the web process.
"""

from __future__ import annotations

import re
import sqlite3

from hermes_explorer.hermes_db.uri import readonly_uri

# Big enough for a megabyte tool output, small enough that one value cannot exhaust memory.
MAX_VALUE_BYTES = 16 * 1024 * 1024
# SQLite's LIKE/GLOB matching is quadratic in the pattern: a long one is a way to burn CPU.
MAX_LIKE_PATTERN_CHARS = 10_000
MAX_SQL_CHARS = 100_000

CJK_TABLE = "messages_fts_cjk"
CJK_EXPLANATION = (
    f"{CJK_TABLE} was made by Hermes with a tokenizer (cjk_unicode61) from an SQLite extension "
    "the explorer does not load, so any statement that touches it fails. Use messages_fts "
    "(words) or messages_fts_trigram (substrings, CJK) instead."
)

# Introspection pragmas that only read: each takes a table or index name.
SAFE_PRAGMAS = frozenset(
    {"table_info", "table_xinfo", "index_list", "index_info", "index_xinfo", "foreign_key_list"}
)
# FTS5 reads "PRAGMA main.data_version" while a MATCH is prepared: allowed.
INTERNAL_PRAGMAS = frozenset({"data_version"})
DENIED_FUNCTIONS = frozenset(
    {
        "load_extension",  # would run native code from a file
        "fts3_tokenizer",  # can install a tokenizer from a pointer: a known escape hatch
        "readfile",
        "writefile",
        "edit",
    }
)
# SQLite reports these as "updates" of the schema table while declaring a virtual table's
# columns for a SELECT; nothing can write it without writable_schema, refused here.
SCHEMA_TABLES = frozenset({"sqlite_master", "sqlite_temp_master", "sqlite_schema"})

# What a refused authorizer action is called in the message: its sqlite3 constant's name.
ACTION_NAMES = {
    getattr(sqlite3, f"SQLITE_{name}"): name.replace("_", " ").replace("VTABLE", "VIRTUAL TABLE")
    for name in (
        "INSERT UPDATE DELETE CREATE_TABLE CREATE_TEMP_TABLE CREATE_INDEX CREATE_VIEW "
        "CREATE_TRIGGER CREATE_VTABLE DROP_TABLE DROP_INDEX DROP_VIEW DROP_TRIGGER DROP_VTABLE "
        "ALTER_TABLE ATTACH DETACH SAVEPOINT REINDEX ANALYZE"
    ).split()
}
ACTION_NAMES[sqlite3.SQLITE_TRANSACTION] = "a transaction"


class ConsoleError(Exception):
    """Something the person who typed the query should read (never a traceback)."""


class ConsoleDenied(ConsoleError):
    """The statement would do more than read."""


class ConsoleTimeout(ConsoleError):
    def __init__(self, budget: float, note: str = ""):
        self.budget = budget
        super().__init__(
            f"The query ran longer than its {budget:g} s limit and was stopped. Add a LIMIT, "
            "a WHERE on an indexed column (sessions.started_at, messages.session_id) or use "
            "the full-text index (messages_fts) instead of LIKE over every message." + note
        )


class ConsoleUnavailable(ConsoleError):
    """The state.db itself cannot be read (missing, corrupt, locked…)."""


class ConsoleTooLarge(ConsoleError):
    def __init__(self, limit_bytes: int, *, row: bool = False):
        what = "one row holds" if row else "it holds"
        super().__init__(
            f"The result is too large: {what} more than {limit_bytes / 2**20:g} MB of text and "
            "blobs, more than the console keeps. Select fewer rows or columns, or cut long "
            "values with substr()."
        )


class ConsoleBusy(ConsoleError):
    def __init__(self, slots: int):
        super().__init__(
            f"The console is already running {slots} statement{'s' if slots != 1 else ''}, as "
            "many as it runs at once: try again in a moment."
        )


class ReadOnlyAuthorizer:
    """The SQLite authorizer callback: yes to reads, no to everything else, remembering why
    (so the page can say "ATTACH is not allowed" rather than "not authorized")."""

    def __init__(self) -> None:
        self.refusal: str | None = None
        self.reading = False

    def __call__(self, action, arg1, arg2, db_name, trigger) -> int:
        verdict = self._judge(action, arg1, arg2)
        if verdict is None:
            return sqlite3.SQLITE_OK
        if self.refusal is None:
            self.refusal = verdict
        return sqlite3.SQLITE_DENY

    def _judge(self, action, arg1, arg2) -> str | None:
        if action == sqlite3.SQLITE_SELECT:
            self.reading = True
            return None
        if action == sqlite3.SQLITE_READ and (arg1 or "").lower() == CJK_TABLE:
            return CJK_EXPLANATION
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in DENIED_FUNCTIONS:
            return f"The function {arg2.lower()}() is not allowed in the console."
        if action in (sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE, sqlite3.SQLITE_FUNCTION):
            return None
        if action == sqlite3.SQLITE_PRAGMA:
            name = (arg1 or "").lower()
            if name in INTERNAL_PRAGMAS and arg2 is None:
                return None
            if name in SAFE_PRAGMAS:
                cjk = (arg2 or "").strip("\"'`[] ").lower() == CJK_TABLE
                return CJK_EXPLANATION if cjk else None
            return (
                f"PRAGMA {name} is not allowed in the console; the read-only pragmas are "
                + ", ".join(sorted(SAFE_PRAGMAS))
                + "."
            )
        if (
            action == sqlite3.SQLITE_UPDATE
            and self.reading
            and (arg1 or "").lower() in SCHEMA_TABLES
        ):
            return None
        if action == sqlite3.SQLITE_ATTACH and not arg1:
            what = "VACUUM"  # VACUUM attaches an empty name first
        else:
            what = ACTION_NAMES.get(action, "This kind of statement")
        return f"{what} is not allowed: the console only reads the state.db."


_TOKEN = re.compile(
    r"""
    (?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<string>'(?:[^']|'')*(?:'|\Z))
  | (?P<quoted>"(?:[^"]|"")*(?:"|\Z)|`(?:[^`]|``)*(?:`|\Z)|\[[^\]]*(?:\]|\Z))
  | (?P<cast>::)
  | (?P<param>:[A-Za-z_][A-Za-z0-9_]*)
  | (?P<word>[A-Za-z_][A-Za-z0-9_$]*)
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)


def _tokens(sql: str):
    return ((match.lastgroup, match.group()) for match in _TOKEN.finditer(sql))


def sql_parameters(sql: str) -> list[str]:
    """The ``:name`` parameters of ``sql`` in order of first use (not those inside strings,
    quoted names or comments)."""
    return list(dict.fromkeys(text[1:] for kind, text in _tokens(sql) if kind == "param"))


def pyformat(sql: str) -> str:
    """``sql`` with its ``:name`` parameters as ``%(name)s`` (and ``%`` doubled), for
    PostgreSQL's driver."""
    return "".join(
        f"%({text[1:]})s" if kind == "param" else text.replace("%", "%%")
        for kind, text in _tokens(sql)
    )


# What PostgreSQL runs as a cursor's query: a statement that only reads.
POSTGRES_READS = frozenset({"SELECT", "WITH", "VALUES", "TABLE"})
# PostgreSQL's codes for a statement refused because the transaction or the role only reads.
POSTGRES_REFUSALS = frozenset({"25006", "42501", "hermes-read-only"})
# Functions that act beyond the transaction, or that a read-only one lets write (large
# objects): refused by name before anything runs.
POSTGRES_DENIED_FUNCTIONS = frozenset(
    {
        "lo_create", "lo_creat", "lo_import", "lo_export", "lo_from_bytea", "lo_put",
        "lo_unlink", "lo_open", "lowrite", "lo_truncate", "lo_truncate64", "dblink",
        "dblink_exec", "dblink_connect", "dblink_send_query", "pg_terminate_backend",
        "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile", "set_config",
        "pg_advisory_lock", "pg_advisory_xact_lock", "pg_notify", "pg_read_file",
        "pg_read_binary_file", "pg_ls_dir", "pg_stat_file",
    }
)  # fmt: skip


def _name(kind: str, text: str) -> str:
    """A token as the name it may be (lower case; "" when it cannot be one)."""
    return (text if kind == "word" else text[1:-1] if kind == "quoted" else "").lower()


def denied_postgres_function(sql: str) -> str | None:
    """The first function of :data:`POSTGRES_DENIED_FUNCTIONS` that ``sql`` names."""
    names = (_name(kind, text) for kind, text in _tokens(sql))
    return next((name for name in names if name in POSTGRES_DENIED_FUNCTIONS), None)


WRITE_KEYWORDS = frozenset(
    {
        "INSERT", "REPLACE", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "ATTACH", "DETACH",
        "VACUUM", "REINDEX", "ANALYZE", "BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT",
        "RELEASE",
    }
)  # fmt: skip


def leading_keyword(sql: str) -> str:
    """The first word of the statement, upper-cased ("" when there is none)."""
    for kind, text in _tokens(sql):
        if kind == "word":
            return text.upper()
        if kind in ("param", "string", "quoted"):
            return ""
    return ""


def check_statement(sql: str) -> None:
    """Refuse, before any process starts, what can be refused from the text alone."""
    if not sql.strip():
        raise ConsoleError("Type a query first.")
    if len(sql) > MAX_SQL_CHARS:
        raise ConsoleError(f"The query is longer than {MAX_SQL_CHARS:,} characters.")
    if any(_name(kind, text) == CJK_TABLE for kind, text in _tokens(sql)):
        raise ConsoleDenied(CJK_EXPLANATION)


def open_readonly(
    path: str, *, busy_timeout: float, heap_limit: int
) -> tuple[sqlite3.Connection, ReadOnlyAuthorizer]:
    """A fresh raw connection on ``path``: mode=ro, query_only, limits, and the authorizer
    (``sqlite3.Error`` when the file cannot be opened)."""
    conn = sqlite3.connect(
        readonly_uri(path),
        uri=True,
        timeout=busy_timeout,
        isolation_level=None,  # never BEGIN on our behalf
        check_same_thread=False,
    )
    try:
        conn.execute("PRAGMA query_only = 1")
        # SQLite answers "out of memory" past this instead of growing the process.
        conn.execute(f"PRAGMA hard_heap_limit = {int(heap_limit)}")
    except sqlite3.Error:
        conn.close()
        raise
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, MAX_LIKE_PATTERN_CHARS)
    conn.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_CHARS)
    authorizer = ReadOnlyAuthorizer()
    # Set last: the pragmas above are ours, not the user's.
    conn.set_authorizer(authorizer)
    return conn, authorizer


def translate(failed: dict, *, keyword: str, timeout: float) -> ConsoleError:
    """The ConsoleError for the child's ``failed`` answer: SQLite's ``text`` (``refusal``: what
    the authorizer refused), or PostgreSQL's (with its ``sqlstate``)."""
    text, refusal = str(failed.get("text", "the query failed")), failed.get("refusal")
    programming, sqlstate = bool(failed.get("programming")), failed.get("sqlstate")
    from hermes_explorer.middleware import describe_store_fault

    if sqlstate == "57014":  # PostgreSQL's query_canceled: the statement_timeout
        return ConsoleTimeout(timeout)
    if sqlstate in POSTGRES_REFUSALS:
        return ConsoleDenied(
            f"{keyword or 'This statement'} is refused: the console only reads the profile "
            f"(PostgreSQL said: {text})"
        )
    # The server went away (08…), or a standby cancelled the statement to replay (40001).
    if sqlstate is not None and (sqlstate.startswith("08") or "conflict with recovery" in text):
        return unavailable(text, "PostgreSQL")
    if sqlstate is not None:
        return ConsoleError(f"PostgreSQL said: {text}")
    if programming and "one statement at a time" in text:
        return ConsoleError(
            "Only one statement can run at a time: remove everything after the first ';'."
        )
    if programming and ("Binding" in text or "supplied" in text):
        return ConsoleError(f"{text} Use named parameters (:name), each filled in the form.")
    if programming:
        return ConsoleError(text)
    if text == "interrupted":
        return ConsoleTimeout(timeout)
    if text == "out of memory":
        return ConsoleError(
            "The query needed more memory than the console allows and was stopped. Select fewer "
            "or shorter values, or avoid building huge strings (printf, zeroblob, group_concat)."
        )
    if refusal is not None and ("authoriz" in text or "prohibited" in text):
        if keyword in WRITE_KEYWORDS and not refusal.startswith(("PRAGMA", "The ")):
            # SQLite reports DROP as a DELETE from the schema…: name what the person typed.
            return ConsoleDenied(f"{keyword} is not allowed: the console only reads the state.db.")
        return ConsoleDenied(refusal)
    if "no such tokenizer" in text or CJK_TABLE in text:
        return ConsoleDenied(CJK_EXPLANATION)
    if "readonly database" in text or "may not be modified" in text or keyword in WRITE_KEYWORDS:
        return ConsoleDenied(
            f"{keyword or 'This statement'} is refused: the state.db is read-only here (SQLite said: {text})."
        )
    fault = describe_store_fault(sqlite3.DatabaseError(text))
    if fault is not None and not text.startswith("no such table"):
        return ConsoleUnavailable(f"{fault} (SQLite said: {text})")
    return ConsoleError(f"SQLite said: {text}")


def unavailable(text: str, database: str = "SQLite") -> ConsoleUnavailable:
    """The error for a store that could not be read at all (``database`` said ``text``)."""
    from hermes_explorer.middleware import describe_store_fault

    fault = describe_store_fault(sqlite3.DatabaseError(text))
    if fault:
        return ConsoleUnavailable(f"{fault} ({database} said: {text})")
    what = "The state.db cannot be opened" if database == "SQLite" else "The profile cannot be read"
    return ConsoleUnavailable(f"{what}: {text}")
