"""Hermes ``state.db`` files made from scratch, for the demo, the benchmark and the tests.

A plain Python package (no Django): :mod:`hermes_fixtures.ddl` holds the project's own DDL of
Hermes's layouts (:mod:`hermes_fixtures.ddl.postgres` that of its PostgreSQL store),
:mod:`hermes_fixtures.demo` a seeded generator of realistic stores, and
:mod:`hermes_fixtures.postgres` a loader that copies any of them into a PostgreSQL schema. Nothing
here is imported by the running explorer except the ``make_demo_db`` command.
"""
