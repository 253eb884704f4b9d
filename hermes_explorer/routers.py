"""Read-only layer 1: send the Hermes apps to the state.db, and never write to it."""

from django.db import DatabaseError

HERMES_APPS = {"sessions_app", "insights_app"}
HERMES_ALIAS = "hermes"


class HermesReadOnlyError(DatabaseError):
    """Something tried to write to the state.db."""


class HermesRouter:
    def db_for_read(self, model, **hints):
        if model._meta.app_label in HERMES_APPS:
            return HERMES_ALIAS
        return None

    def db_for_write(self, model, **hints):
        if model._meta.app_label in HERMES_APPS:
            raise HermesReadOnlyError(
                f"{model.__name__} lives in Hermes's state.db, which the explorer never writes."
            )
        return None

    def allow_relation(self, obj1, obj2, **hints):
        return None

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        if db == HERMES_ALIAS:
            return False
        if app_label in HERMES_APPS:
            return False
        return None
