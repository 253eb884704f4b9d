"""Datasette 0.65's JSON and CSV API on ``/state/…``, re-implemented on the explorer's store
(``docs/old-urls.md``)."""
