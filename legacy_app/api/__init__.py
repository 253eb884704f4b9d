"""Datasette 0.65's JSON and CSV API on ``/state/…``, re-implemented on the explorer's store.

``params`` reads a URL, ``operators``, ``tokens``, ``search`` and ``facets`` make its clauses,
``query`` builds and runs the statement, ``policy`` applies roles and redaction, ``tables``
puts a page together, ``shapes`` and ``downloads`` render it, ``sql`` answers ``?sql=``, and
``meta`` the database, versions and row URLs.
"""
