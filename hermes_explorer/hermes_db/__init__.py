"""Connection handling for Hermes's ``state.db``.

``ENGINE: "hermes_explorer.hermes_db"`` is Django's SQLite backend made safe for a file that
Hermes is writing at this very moment:

* the file is opened as ``file:…?mode=ro`` (a URI) and every connection runs
  ``PRAGMA query_only=1`` with a busy timeout: two of the three read-only layers (the router
  is the third);
* every statement runs under a deadline enforced by an SQLite progress handler, so a slow
  query stops itself during ``execute`` *and* while rows are fetched (see ``deadline.py``);
* a transient ``disk I/O error`` (a ``mode=ro`` reader racing a WAL checkpoint) is retried;
* the shape of the file (which tables and columns exist, which FTS layout) is detected once
  per schema version and attached to the connection (see ``shape.py``).
"""
