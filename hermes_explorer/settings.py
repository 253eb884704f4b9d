"""Settings for Hermes Explorer, read from the environment.

Development defaults are safe on a laptop; with ``DJANGO_DEBUG`` off, a missing secret key is
an error rather than a silent default.  ``deploy/env.example`` lists every variable.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from hermes_explorer import app_data
from hermes_explorer.params import truthy

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return truthy(value) if value else default


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DJANGO_DEBUG", False)

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY and os.environ.get("DJANGO_SECRET_KEY_FILE"):
    SECRET_KEY = Path(os.environ["DJANGO_SECRET_KEY_FILE"]).read_text().strip()
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY (or DJANGO_SECRET_KEY_FILE) must be set when DJANGO_DEBUG is off "
            "(see deploy/env.example)."
        )
    SECRET_KEY = "insecure-development-key-do-not-use-in-production"

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", "")

# The app's own small database (users, groups, Django sessions) lives in the data directory.
DATA_DIR = Path(os.environ.get("HERMES_EXPLORER_DATA_DIR", BASE_DIR / "var"))

# Which Hermes stores are served: HERMES_STORES, else HERMES_STATE_DB, else HERMES_HOME
# (hermes_explorer/stores.py); none of them means demo mode (`make run` builds a demo home).
HERMES_STORES = os.environ.get("HERMES_STORES", "")
HERMES_STATE_DB = os.environ.get("HERMES_STATE_DB", "")
HERMES_HOME = os.environ.get("HERMES_HOME", "")
if not (HERMES_HOME or HERMES_STATE_DB or HERMES_STORES):
    _home = Path.home() / ".hermes"
    HERMES_HOME = str(_home) if _home.is_dir() else ""
HERMES_DEMO = not (HERMES_HOME or HERMES_STATE_DB or HERMES_STORES)
# One file, as the explorer always served it (HERMES_STATE_DB alone).
HERMES_SINGLE_FILE = bool(HERMES_STATE_DB) and not HERMES_STORES
if HERMES_DEMO:
    HERMES_HOME = str(DATA_DIR / "demo-home")
if HERMES_STORES:
    # The ``hermes`` alias reads the state.db named "default", else the first one listed (a
    # PostgreSQL schema always has an alias of its own).
    _listed = [part.partition("=") for part in HERMES_STORES.split(",") if "=" in part]
    _paths = {n.strip(): p.strip() for n, _eq, p in _listed if not p.strip().startswith("postg")}
    HERMES_STATE_DB = _paths.get("default") or next(iter(_paths.values()), "")
elif not HERMES_STATE_DB:
    HERMES_STATE_DB = str(Path(HERMES_HOME) / "state.db")
# Seconds between two scans of HERMES_HOME for profiles created or removed meanwhile.
HERMES_STORES_RESCAN = float(os.environ.get("HERMES_STORES_RESCAN", "30"))

# Seconds a statement on the state.db may run before it is interrupted.
HERMES_QUERY_TIMEOUT = float(os.environ.get("HERMES_QUERY_TIMEOUT", "3"))
# Per chunk of a streamed export (each chunk is its own short statement).
HERMES_EXPORT_CHUNK_TIMEOUT = float(os.environ.get("HERMES_EXPORT_CHUNK_TIMEOUT", "15"))
# Insights: seconds for one statement, and for a first pass before the page shows what it has.
HERMES_INSIGHTS_TIMEOUT = float(os.environ.get("HERMES_INSIGHTS_TIMEOUT", "15"))
HERMES_INSIGHTS_COLLECT_SECONDS = float(os.environ.get("HERMES_INSIGHTS_COLLECT_SECONDS", "20"))
# Seconds a report of an earlier version of the file may still be shown, "as of" its time.
HERMES_INSIGHTS_STALE_SECONDS = float(os.environ.get("HERMES_INSIGHTS_STALE_SECONDS", "900"))
# Where ``manage.py search_index`` keeps each PostgreSQL profile's word index (one SQLite file
# per schema, this app server's own: a cache, rebuilt when missing, never backed up).
HERMES_SEARCH_INDEX_DIR = Path(os.environ.get("HERMES_SEARCH_INDEX_DIR", DATA_DIR / "search-index"))
# Log every statement that held its read lock longer than this (ms): Hermes's commit waited.
_holds_ms = os.environ.get("HERMES_LOG_LOCK_HOLDS_MS")
HERMES_LOG_LOCK_HOLDS_MS = float(_holds_ms) if _holds_ms else None

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_tables2",
    "django_filters",
    "axes",
    "accounts_app",
    "profiles_app",
    "sessions_app",
    "insights_app",
    "console_app",
    "legacy_app",
    "live_app",
    "annotations_app",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # One log line per request, after everything below has answered; and /metrics.
    "accounts_app.request_log.RequestLogMiddleware",
    "hermes_explorer.metrics.MetricsMiddleware",
    # After static files: every page and download is no-store; HEAD is answered as GET.
    "hermes_explorer.http_policy.HttpPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The language: the switch's cookie, else the browser's Accept-Language, else LANGUAGE_CODE.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Scripts: HTTP Basic or a personal token on the API and export URLs (GET only).
    "accounts_app.scripts.ScriptAuthMiddleware",
    # The store a request reads: /p/<profile>/… names it (profiles the user may see only).
    "profiles_app.middleware.StoreScopeMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    # Roles: 403 for what the user's role may not see (pages and exports alike).
    "accounts_app.middleware.RoleAccessMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "hermes_explorer.middleware.StateDBErrorMiddleware",
    # Last, as django-axes asks: turns a locked-out sign-in into its 429 page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "hermes_explorer.urls"
WSGI_APPLICATION = "hermes_explorer.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "hermes_explorer.context_processors.explorer",
                "accounts_app.context_processors.roles",
                "profiles_app.context_processors.profiles",
            ],
        },
    },
]

DATABASE_URL = os.environ.get("DATABASE_URL", "").strip()
DATABASES = {
    "default": app_data.database(
        DATABASE_URL,
        DATA_DIR,
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", app_data.DEFAULT_CONN_MAX_AGE)),
    ),
    "hermes": {
        # Django's SQLite backend opened read-only (mode=ro URI + query_only) with deadlines.
        "ENGINE": "hermes_explorer.hermes_db",
        "NAME": HERMES_STATE_DB,
        "OPTIONS": {"detect_types": 0, "timeout": 5.0},
        # A fresh connection per request: a replaced state.db is picked up without a restart.
        "CONN_MAX_AGE": 0,
    },
}
DATABASE_ROUTERS = ["hermes_explorer.routers.HermesRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "overview"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = os.environ.get("DJANGO_LANGUAGE_CODE", "").strip() or "en"
LANGUAGES = [("en", "English"), ("fr", "Français")]
LOCALE_PATHS = [BASE_DIR / "locale"]
# The language switch remembers the choice for a year (not httponly: no secret in it).
LANGUAGE_COOKIE_NAME = "explorer_language"
LANGUAGE_COOKIE_AGE = 365 * 86_400
LANGUAGE_COOKIE_SAMESITE = "Lax"
# Weekday/hour/day buckets and displayed times use this zone (Hermes ids are local time).
TIME_ZONE = os.environ.get("HERMES_TIME_ZONE", os.environ.get("TZ", "UTC")) or "UTC"
# Per-language formats (no thousands grouping for every number: ids go into URLs too).
FORMAT_MODULE_PATH = ["hermes_explorer.formats"]
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "staticfiles"

CACHE_URL = os.environ.get("CACHE_URL", "").strip()
CACHES = app_data.caches(CACHE_URL, DATA_DIR)
# An unreachable Redis is a miss (django-redis IGNORE_EXCEPTIONS), logged.
DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = True
# Cached database sessions: a sign-out ends the session on every server.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
# Serve straight from the finders in development and tests (no collectstatic needed there).
WHITENOISE_USE_FINDERS = DEBUG

# Security: roles, sign-in, headers, secrets ---------------------------------------------------
# Django's defaults already give HttpOnly, SameSite=Lax session cookies, X-Frame-Options DENY,
# nosniff, and same-origin referrer and opener policies.
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
CSRF_COOKIE_HTTPONLY = True
# Behind Caddy (deploy/Caddyfile), which terminates TLS and sets X-Forwarded-Proto/-For.
BEHIND_TLS_PROXY = env_bool("DJANGO_BEHIND_TLS_PROXY", False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if BEHIND_TLS_PROXY else None
SESSION_COOKIE_AGE = int(os.environ.get("DJANGO_SESSION_AGE", str(12 * 3600)))
SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", BEHIND_TLS_PROXY)
# Local health checks (systemd, a monitor on the host) speak plain HTTP to gunicorn.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = int(
    os.environ.get("DJANGO_HSTS_SECONDS", "31536000" if BEHIND_TLS_PROXY else "0")
)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
# HSTS on subdomains and preloading are the domain owner's decision, not this app's.
SILENCED_SYSTEM_CHECKS = env_list("DJANGO_SILENCED_CHECKS", "security.W005,security.W021")

# Content-Security-Policy (django-csp): no inline script or style, everything from this origin.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# Failed sign-ins (django-axes) lock a user name and address pair out for a while.
AUTHENTICATION_BACKENDS = [
    "hermes_explorer.security.LoginThrottleBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = int(os.environ.get("HERMES_LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=float(os.environ.get("HERMES_LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_CLIENT_IP_CALLABLE = "hermes_explorer.security.client_ip"
# X-Forwarded-For is trusted only from the proxy (hermes_explorer.security.client_ip).
HERMES_TRUST_FORWARDED_FOR = BEHIND_TLS_PROXY
HERMES_TRUSTED_PROXIES = env_list("HERMES_TRUSTED_PROXIES", "127.0.0.1,::1")
# From the proxy's address, this many failures of one user name from all addresses lock it.
HERMES_LOGIN_USER_FAILURE_LIMIT = int(
    os.environ.get("HERMES_LOGIN_USER_FAILURE_LIMIT", str(4 * AXES_FAILURE_LIMIT))
)

# Optional sign-in by the proxy (forward_auth/SSO): it MUST overwrite this header every time.
HERMES_REMOTE_USER_HEADER = os.environ.get("HERMES_REMOTE_USER_HEADER", "").strip()
HERMES_REMOTE_USER_CREATE = env_bool("HERMES_REMOTE_USER_CREATE", True)
if HERMES_REMOTE_USER_HEADER:
    MIDDLEWARE.insert(
        MIDDLEWARE.index("django.contrib.auth.middleware.AuthenticationMiddleware") + 1,
        "hermes_explorer.security.ProxyUserMiddleware",
    )
    AUTHENTICATION_BACKENDS.append("hermes_explorer.security.ProxyUserBackend")

# Secrets in message content are replaced by "[redacted: …]" markers when shown or exported.
HERMES_REDACT_SECRETS = env_bool("HERMES_REDACT_SECRETS", True)

# The SQL console (/sql/, staff): limits on the page and downloads, memory, statements at once.
HERMES_SQL_TIMEOUT = float(os.environ.get("HERMES_SQL_TIMEOUT", "1"))
HERMES_SQL_MAX_ROWS = int(os.environ.get("HERMES_SQL_MAX_ROWS", "1000"))
HERMES_SQL_MAX_BYTES = int(os.environ.get("HERMES_SQL_MAX_BYTES", str(8 * 2**20)))
HERMES_SQL_EXPORT_MAX_ROWS = int(os.environ.get("HERMES_SQL_EXPORT_MAX_ROWS", "100000"))
HERMES_SQL_EXPORT_MAX_BYTES = int(os.environ.get("HERMES_SQL_EXPORT_MAX_BYTES", str(64 * 2**20)))
HERMES_SQL_MEMORY_MB = int(os.environ.get("HERMES_SQL_MEMORY_MB", "512"))
HERMES_SQL_CONCURRENCY = int(os.environ.get("HERMES_SQL_CONCURRENCY", "2"))
# Full-text searches at once on this host: costly searches cannot hold every worker.
HERMES_SEARCH_CONCURRENCY = int(os.environ.get("HERMES_SEARCH_CONCURRENCY", "3"))
# Streamed exports (CSV, JSON, JSONL, datasets, the old API's _stream=on) at once on this host.
HERMES_EXPORT_CONCURRENCY = int(os.environ.get("HERMES_EXPORT_CONCURRENCY", "3"))

# One line per request (accounts_app.request_log); JSON lines when HERMES_LOG_JSON is on.
HERMES_LOG_JSON = env_bool("HERMES_LOG_JSON", False)
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "accounts_app.request_log.JsonFormatter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            **({"formatter": "json"} if HERMES_LOG_JSON else {}),
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("DJANGO_LOG_LEVEL", "INFO")},
    # django-axes logs every sign-in at INFO; lockouts and failures come at WARNING.
    "loggers": {"axes": {"level": "WARNING"}},
}
