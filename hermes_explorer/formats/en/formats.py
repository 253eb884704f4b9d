"""English: 2026-11-30 14:05, Nov 30, 2026, 1,234.56 and $12.34."""

SHORT_DATE_FORMAT = "Y-m-d"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"

# The explorer's own, read with ``get_format`` like Django's (dates in its ``date`` syntax).
LONG_DATE_FORMAT = "M j, Y"
WEEK_DATE_FORMAT = "M d, Y"  # "week of Nov 03, 2026"
CHART_DAY_FORMAT = "D M d, Y"
DAY_TICK_FORMAT = "M d"
MONTH_TICK_FORMAT = "M y"
MONTH_LABEL_FORMAT = "Y-m"
MONEY_FORMAT = "$%s"  # %s: the amount, its digits as above
COMPACT_SUFFIXES = ("k", "M", "B")  # thousands, millions, billions
DURATION_UNITS = ("h", "m", "s")
