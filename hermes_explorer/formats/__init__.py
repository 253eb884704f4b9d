"""Per-language formats (``FORMAT_MODULE_PATH``), read with Django's ``get_format``: a new
language needs its module here naming every format ``en/formats.py`` names (Django's own
formats of the language give the rest).

Date fields are ``<input type="date">``, which speak ISO 8601 in every language, so ISO comes
first among the French input formats too.
"""
