"""Per-language formats (``FORMAT_MODULE_PATH``) where Django's own do not suit the explorer.

Date fields are ``<input type="date">``, which speak ISO 8601 in every language, so ISO comes
first among the French input formats too.
"""
