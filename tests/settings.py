"""Test settings: the production settings with test-only defaults in the environment."""

import os
import tempfile

os.environ.setdefault("DJANGO_SECRET_KEY", "tests-only-secret-key-not-for-production")
os.environ.setdefault("DJANGO_DEBUG", "0")
# Tests read many downloads' headers only, leaving the stream (and its export slot) to the
# garbage collector; the test of the bound sets its own.
os.environ.setdefault("HERMES_EXPORT_CONCURRENCY", "64")
os.environ.setdefault("HERMES_EXPLORER_DATA_DIR", tempfile.mkdtemp(prefix="hermes-explorer-tests-"))
# Under pytest-xdist each worker has a data directory of its own (its cache, its slots).
if os.environ.get("PYTEST_XDIST_WORKER"):
    _worker_dir = os.path.join(
        os.environ["HERMES_EXPLORER_DATA_DIR"], os.environ["PYTEST_XDIST_WORKER"]
    )
    os.makedirs(_worker_dir, exist_ok=True)
    os.environ["HERMES_EXPLORER_DATA_DIR"] = _worker_dir
    os.environ["HERMES_STATE_DB"] = os.path.join(_worker_dir, "placeholder.db")
# Tests point the `hermes` alias at fixture files they build; this placeholder is replaced.
os.environ.setdefault(
    "HERMES_STATE_DB", os.path.join(os.environ["HERMES_EXPLORER_DATA_DIR"], "placeholder.db")
)

from hermes_explorer.settings import *  # noqa: E402,F403

STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405

STORAGES = {
    **STORAGES,  # noqa: F405
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
ALLOWED_HOSTS = ["testserver", "127.0.0.1", "localhost"]
