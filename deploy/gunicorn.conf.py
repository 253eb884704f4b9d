"""gunicorn settings for Hermes Explorer (``gunicorn -c deploy/gunicorn.conf.py``).

gthread workers: SQLite reads release the GIL, and a thread streaming a long CSV download does
not block the worker's other requests.  Each request opens its own read-only connection.

The application is loaded once, in the master, before the workers are forked (``preload_app``):
the URL tables, compiled templates, catalogs and the rest of ``hermes_explorer.warmup`` are
built there, so a new worker (after a deploy, or replacing one) serves its first request as
fast as its hundredth.  No connection is carried across the fork (:func:`post_fork`).
"""

import multiprocessing
import os

# An instance of the template unit (hermes-explorer@<port>) is given its port, and listens on
# GUNICORN_HOST (default 127.0.0.1) at that port; otherwise GUNICORN_BIND says where.
if os.environ.get("GUNICORN_PORT"):
    bind = f"{os.environ.get('GUNICORN_HOST', '127.0.0.1')}:{int(os.environ['GUNICORN_PORT'])}"
else:
    bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
worker_class = "gthread"
# A deploy restarts the service (a HUP would keep the code the master loaded).
preload_app = True
workers = int(os.environ.get("GUNICORN_WORKERS", max(2, multiprocessing.cpu_count())))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
# The worker heartbeat: gthread keeps it alive while a thread streams a download, so exports
# of any length finish; a stuck worker is still replaced.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "120"))
graceful_timeout = 30
keepalive = 5
# Behind Caddy: trust X-Forwarded-* from the local proxy only.
forwarded_allow_ips = os.environ.get("GUNICORN_FORWARDED_ALLOW_IPS", "127.0.0.1")
# The app writes one line per request itself (user, view, status, duration; never a query
# string), so gunicorn's access log is off unless GUNICORN_ACCESS_LOG names a file ("-": the
# output).  Its lines then carry the path without the query string, and no Referer (a URL with
# its query): search words and staff filters on secret columns stay out of the journal.
accesslog = os.environ.get("GUNICORN_ACCESS_LOG") or None
access_log_format = '%(h)s %(l)s %(u)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s "%(a)s" %(L)s'
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")


# /metrics: the workers share their figures through files (prometheus-client's multi-process
# mode), in a directory named here and given to the master's environment before it loads the
# application (prometheus-client reads it on import), emptied when gunicorn starts, before any
# worker is forked.
raw_env = [
    "PROMETHEUS_MULTIPROC_DIR="
    + (
        os.environ.get("PROMETHEUS_MULTIPROC_DIR")
        or os.path.join(
            os.environ.get("HERMES_EXPLORER_DATA_DIR", "var"), f"prometheus-{os.getpid()}"
        )
    )
]


def on_starting(server):
    import shutil

    folder = os.environ["PROMETHEUS_MULTIPROC_DIR"]
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder, exist_ok=True)


def post_fork(server, worker):
    # Each worker opens its own connections (the warm-up closed the master's): none is shared.
    from django.db import connections

    connections.close_all()


def child_exit(server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
