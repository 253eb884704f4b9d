"""Datasette 0.65's JSON and CSV API on ``/state/…``, re-implemented on the explorer's store.

One module per concern: ``params`` reads a table URL, ``operators`` gives each column filter
its SQL, ``tokens`` writes and reads ``_next`` tokens, ``query`` builds and runs the statement,
``search`` and ``facets`` add ``_search`` and ``_facet``, ``policy`` applies roles and
redaction, ``tables`` puts a page together, ``shapes`` and ``downloads`` render it as JSON or
CSV, ``sql`` answers ``/state.json?sql=``, ``meta`` the database, versions and row URLs, and
``views`` are the Django views.
"""
