"""The app database on PostgreSQL: Django's backend with a health check that costs no round
trip (see ``base.py``)."""
