"""French: 30/11/2026 14:05, 30 nov. 2026, 1 234,56 and 12,34 $US (a non-breaking space groups
digits and joins a number to its unit)."""

DATE_FORMAT = "j N Y"
SHORT_DATE_FORMAT = "d/m/Y"
SHORT_DATETIME_FORMAT = "d/m/Y H:i"
DATETIME_FORMAT = "d/m/Y H:i"
DATE_INPUT_FORMATS = ["%Y-%m-%d", "%d/%m/%Y", "%d/%m/%y"]

# The explorer's own (see ``en/formats.py``).
LONG_DATE_FORMAT = "j\xa0N\xa0Y"
WEEK_DATE_FORMAT = LONG_DATE_FORMAT
CHART_DAY_FORMAT = "D j\xa0N\xa0Y"
DAY_TICK_FORMAT = "j\xa0N"
MONTH_TICK_FORMAT = "N y"
MONTH_LABEL_FORMAT = "F Y"
MONEY_FORMAT = "%s\xa0$US"
COMPACT_SUFFIXES = ("\xa0k", "\xa0M", "\xa0Md")
DURATION_UNITS = ("\xa0h", "\xa0min", "\xa0s")
