"""The app database on PostgreSQL: Django's backend with a health check that costs no round
trip and a cursor that prepares its statements (see ``base.py``)."""


def cursor_for(connection):
    """A cursor for a statement run on every page with the same text: prepared on this
    PostgreSQL backend (planned once per connection), an ordinary one on any other database."""
    prepared = getattr(connection, "prepared_cursor", None)
    return prepared() if prepared else connection.cursor()
