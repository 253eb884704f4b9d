"""French: 30/11/2026 14:05, 30 nov. 2026, 1 234,56 (a non-breaking space groups digits)."""

DATE_FORMAT = "j N Y"
SHORT_DATE_FORMAT = "d/m/Y"
SHORT_DATETIME_FORMAT = "d/m/Y H:i"
DATETIME_FORMAT = "d/m/Y H:i"
TIME_FORMAT = "H:i"
FIRST_DAY_OF_WEEK = 1
DATE_INPUT_FORMATS = ["%Y-%m-%d", "%d/%m/%Y", "%d/%m/%y"]
DECIMAL_SEPARATOR = ","
THOUSAND_SEPARATOR = "\xa0"
NUMBER_GROUPING = 3
