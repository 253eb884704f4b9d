"""Per-language formats (``FORMAT_MODULE_PATH``) where Django's own do not suit the explorer.

English keeps Django's.  Date fields are ``<input type="date">``, which speak ISO 8601 whatever
the language: ISO comes first among the French input formats too, so a form re-renders a date
the browser can read.  The explorer's own pages format numbers and times in
``sessions_app.formatting`` (faster than Django's generic formatting, same conventions).
"""
