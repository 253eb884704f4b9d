"""Connection handling for Hermes's ``state.db``: Django's SQLite backend made safe for a file
Hermes is writing.

The file is opened ``mode=ro`` with ``PRAGMA query_only=1`` (two of the three read-only
layers; the router is the third), every statement runs under a deadline (``deadline.py``),
and a transient ``disk I/O error`` (racing a WAL checkpoint) is retried.
"""
