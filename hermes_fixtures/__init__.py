"""Hermes ``state.db`` files made from scratch, for the demo, the benchmark and the tests.

A plain Python package (no Django): :mod:`hermes_fixtures.ddl` holds the project's own DDL of
Hermes's layouts, :mod:`hermes_fixtures.demo` a seeded generator of realistic stores. Nothing
here is imported by the running explorer except the ``make_demo_db`` command.
"""
