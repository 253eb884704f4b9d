"""WSGI entry point (gunicorn: ``hermes_explorer.wsgi:application``).

Loading it also builds what every page needs (:mod:`hermes_explorer.warmup`): gunicorn does it
once, before it forks the workers (``preload_app``)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hermes_explorer.settings")
application = get_wsgi_application()

from hermes_explorer import warmup  # noqa: E402 (Django is set up above)

warmup.warm()
