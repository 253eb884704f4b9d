"""Per-language formats (``FORMAT_MODULE_PATH``): the one place a language's numbers, money and
dates are defined.  ``sessions_app.formatting`` reads them with Django's ``get_format``, Django's
names and the explorer's own alike (``en/formats.py`` lists them all); a new language needs
its module here, naming every one of them, its catalog and its line in ``LANGUAGES``.

Date fields are ``<input type="date">``, which speak ISO 8601 in every language, so ISO comes
first among the French input formats too.
"""
