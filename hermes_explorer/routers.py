"""Read-only layer 1: send the Hermes models (the unmanaged models of a Hermes app, mirrors of
Hermes tables) to the state.db, and never write to it.
"""

from django.db import DatabaseError

from .hermes_db.current import DEFAULT_ALIAS, current_alias

HERMES_APPS = {"sessions_app", "insights_app"}
# Apps whose every model mirrors a Hermes table: never migrated anywhere.
MIRROR_ONLY_APPS = {"sessions_app"}


class HermesReadOnlyError(DatabaseError):
    """Something tried to write to the state.db."""


def in_state_db(model) -> bool:
    return model._meta.app_label in HERMES_APPS and not model._meta.managed


class HermesRouter:
    def db_for_read(self, model, **hints):
        if in_state_db(model):
            # A row reloads (a deferred field) from its own store; anything else, the current.
            instance = hints.get("instance")
            if instance is not None and instance._state.db:
                return instance._state.db
            return current_alias()
        return None

    def db_for_write(self, model, **hints):
        if in_state_db(model):
            raise HermesReadOnlyError(
                f"{model.__name__} lives in Hermes's state.db, which the explorer never writes."
            )
        return None

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        in_store = db == DEFAULT_ALIAS or db.startswith(DEFAULT_ALIAS + "@")
        return False if in_store or app_label in MIRROR_ONLY_APPS else None
