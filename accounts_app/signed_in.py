"""Signed-in sessions whose user comes with the session: one statement per request, not two.

Django's database sessions store the user's id inside the encoded session data, so a request
reads its session row, decodes it, then reads the user row: two round trips to the app database
before the page does anything (on PostgreSQL, each is a trip over the network).  Here the
session row also keeps the user's id in a column (:class:`accounts_app.models.SignedInSession`),
and reading the session joins the user row in the same statement (:mod:`.session_read`, with
the per-user values other apps ask for in ``settings.SESSION_USER_READS``).

Nothing is cached: the user row is read afresh with the session on every request, so a sign-out,
a password change or a deactivated account takes effect at once on every instance, exactly as
with Django's own engine.  :class:`SessionUserMiddleware` (Django's authentication middleware
with this one change) uses that row instead of asking the backend for it again, when the
backend would have read the same row (Django's model backend and its subclasses); the session's
password hash is checked as Django checks it.
"""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.contrib import auth
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.core.exceptions import ValidationError
from django.db import router
from django.utils.crypto import constant_time_compare
from django.utils.functional import SimpleLazyObject

from . import session_read


class SessionStore(DatabaseSessionStore):
    """Django's database session engine on :class:`~accounts_app.models.SignedInSession`."""

    # The user row read with the session (None: no session, or no user in it).
    loaded_user = None

    @classmethod
    def get_model_class(cls):
        from .models import SignedInSession

        return SignedInSession

    @classmethod
    def prepare_read(cls) -> None:
        """Compile the statement :meth:`load` runs, ahead of any request (a worker's start)."""
        model = cls.get_model_class()
        session_read.prepare(model, router.db_for_read(model))

    def load(self):
        # Django's load, reading the session with its user (session_read.py).
        found = session_read.read(self.model, router.db_for_read(self.model), self.session_key)
        if found is None:
            self._session_key = None
            self.loaded_user = None
            return {}
        data, self.loaded_user = found
        return self.decode(data)

    def create_model_instance(self, data):
        instance = super().create_model_instance(data)
        instance.user_id = _user_pk(data.get(SESSION_KEY))
        return instance


def _user_pk(value):
    try:
        return auth.get_user_model()._meta.pk.to_python(value)
    except ValidationError:
        return None


def _reads_the_user_row(backend) -> bool:
    """Whether ``backend.get_user`` is the model backend's: the active user of that id."""
    return isinstance(backend, ModelBackend) and type(backend).get_user is ModelBackend.get_user


def get_user(request):
    """The request's user, or an anonymous one: Django's ``auth.get_user``, with the user row
    read together with the session when there is one."""
    session = request.session
    try:
        user_id = _user_pk(session[SESSION_KEY])
        backend_path = session[BACKEND_SESSION_KEY]
    except KeyError:
        return AnonymousUser()
    if user_id is None or backend_path not in settings.AUTHENTICATION_BACKENDS:
        return AnonymousUser()
    backend = auth.load_backend(backend_path)
    loaded = getattr(session, "loaded_user", None)
    if loaded is not None and loaded.pk == user_id and _reads_the_user_row(backend):
        user = loaded if backend.user_can_authenticate(loaded) else None
    else:
        user = backend.get_user(user_id)
    if user is None:
        return AnonymousUser()
    if hasattr(user, "get_session_auth_hash") and not _session_hash_holds(session, user):
        return AnonymousUser()
    return user


def _session_hash_holds(session, user) -> bool:
    """Whether the session was signed in with the user's current password (or with one of the
    fallback secret keys, then re-signed with the current one); if not, it is ended."""
    stored = session.get(HASH_SESSION_KEY)
    current = user.get_session_auth_hash()
    if stored and constant_time_compare(stored, current):
        return True
    if stored and any(
        constant_time_compare(stored, fallback)
        for fallback in user.get_session_auth_fallback_hash()
    ):
        session.cycle_key()
        session[HASH_SESSION_KEY] = current
        return True
    session.flush()
    return False


class SessionUserMiddleware(AuthenticationMiddleware):
    """Django's authentication middleware, whose ``request.user`` is :func:`get_user`'s."""

    def process_request(self, request):
        super().process_request(request)
        request.user = SimpleLazyObject(partial(get_user, request))
