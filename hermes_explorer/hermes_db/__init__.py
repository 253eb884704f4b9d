"""Connection handling for Hermes's ``state.db``: Django's SQLite backend made safe for a file
Hermes is writing (read-only layers 2 and 3, deadlines, and a retry of the transient ``disk I/O
error`` of a WAL checkpoint: ``base.py``).
"""
