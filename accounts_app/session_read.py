"""The one statement that reads a signed-in session with its user, written once per database.

Every request runs it, so it is compiled once (per database alias and per
``settings.SESSION_USER_READS``) into plain SQL with its converters; building and compiling the
same query with the ORM on every request cost more than running it.  The statement:

    SELECT session data, every column of the user, the values other apps asked for
    FROM the session LEFT JOIN its user
    WHERE session key = %s AND expiry date > %s

The values other apps ask for (``settings.SESSION_USER_READS``: attribute name -> dotted path
of a function of the user's id, an ``OuterRef``, giving a query expression) are compiled by
the ORM from their expressions, once.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connections
from django.db.models import OuterRef
from django.utils import timezone
from django.utils.module_loading import import_string

from hermes_explorer.app_pg import cursor_for


@dataclass(frozen=True)
class Plan:
    sql: str
    select_params: tuple
    user_fields: tuple  # attnames, in column order
    pk_index: int  # of the user's primary key among them
    extra_names: tuple
    converters: tuple  # (column index, [converter, …], expression)


_plans: dict[tuple, Plan] = {}
_lock = threading.Lock()


def extra_names() -> tuple[str, ...]:
    return tuple(getattr(settings, "SESSION_USER_READS", {}))


def prepare(model, using: str) -> None:
    """Compile the statement for ``model`` on ``using`` now (as a worker starts), not in its
    first request (28 ms there: the ORM's first compilation in the process).  It reads no
    table, but Django may open the connection to ask what the database supports: a connection
    opened for that is closed again (requests run in threads of their own)."""
    connection = connections[using]
    was_open = connection.connection is not None
    try:
        _plan(model, using)
    finally:
        if not was_open:
            connection.close()


def _plan(model, using: str) -> Plan:
    reads = tuple(getattr(settings, "SESSION_USER_READS", {}).items())
    key = (using, reads)
    found = _plans.get(key)
    if found is None:
        found = _compile(model, using, reads)
        with _lock:
            _plans[key] = found
    return found


def _compile(model, using: str, reads: tuple) -> Plan:
    connection = connections[using]
    quote = connection.ops.quote_name
    user_model = get_user_model()
    table, users = model._meta.db_table, user_model._meta.db_table
    user_fields = tuple(user_model._meta.concrete_fields)
    columns = [f"{quote(users)}.{quote(f.column)}" for f in user_fields]
    expressions: list = [f.get_col(users) for f in user_fields]

    # The asked-for values, resolved against the session table (their OuterRef is the
    # session's user_id column) and compiled by the ORM.
    asked = {name: import_string(path)(OuterRef("user_id")) for name, path in reads}
    query = model.objects.annotate(**asked).values(*asked).query
    compiler = query.get_compiler(using)
    compiler.setup_query()
    params: list = []
    for name in asked:
        resolved = query.annotations[name]
        sql, extra = compiler.compile(resolved)
        columns.append(sql)
        params.extend(extra)
        expressions.append(resolved)

    converters = []
    for index, expression in enumerate(expressions, start=1):
        found = connection.ops.get_db_converters(expression) + expression.get_db_converters(
            connection
        )
        if found:
            converters.append((index, found, expression))
    pk = user_model._meta.pk.column
    sql = (
        f"SELECT {quote(table)}.{quote('session_data')}, {', '.join(columns)} "
        f"FROM {quote(table)} LEFT JOIN {quote(users)} "
        f"ON {quote(users)}.{quote(pk)} = {quote(table)}.{quote('user_id')} "
        f"WHERE {quote(table)}.{quote('session_key')} = %s "
        f"AND {quote(table)}.{quote('expire_date')} > %s"
    )
    return Plan(
        sql=sql,
        select_params=tuple(params),
        user_fields=tuple(f.attname for f in user_fields),
        pk_index=user_fields.index(user_model._meta.pk),
        extra_names=tuple(asked),
        converters=tuple(converters),
    )


def read(model, using: str, session_key: str):
    """``(session data, user or None)`` of the session ``session_key`` while it runs, or None.

    The user carries the asked-for values as attributes."""
    connection = connections[using]
    plan = _plan(model, using)
    expiry = model._meta.get_field("expire_date").get_db_prep_value(
        timezone.now(), connection, prepared=False
    )
    # Prepared on PostgreSQL: planning it cost more than running it.
    with cursor_for(connection) as cursor:
        cursor.execute(plan.sql, [*plan.select_params, session_key, expiry])
        row = cursor.fetchone()
    if row is None:
        return None
    row = list(row)
    for index, found, expression in plan.converters:
        value = row[index]
        for convert in found:
            value = convert(value, expression, connection)
        row[index] = value
    width = len(plan.user_fields)
    values = row[1 : 1 + width]
    user = None
    if values[plan.pk_index] is not None:
        user = get_user_model().from_db(using, plan.user_fields, values)
        for name, value in zip(plan.extra_names, row[1 + width :], strict=True):
            setattr(user, name, value)
    return row[0], user
