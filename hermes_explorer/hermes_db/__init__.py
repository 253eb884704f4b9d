"""Connection handling for Hermes's ``state.db``: Django's SQLite backend made safe for a file
Hermes is writing.

* the file is opened ``mode=ro`` with ``PRAGMA query_only=1`` and a busy timeout (two of the
  three read-only layers; the router is the third);
* every statement runs under a deadline (a progress handler, ``deadline.py``), during
  ``execute`` and fetches alike;
* a transient ``disk I/O error`` (racing a WAL checkpoint) is retried;
* the file's shape is detected once per schema version (``shape.py``).
"""
