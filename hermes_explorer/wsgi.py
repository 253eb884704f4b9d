"""WSGI entry point (gunicorn: ``hermes_explorer.wsgi:application``)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hermes_explorer.settings")
application = get_wsgi_application()
