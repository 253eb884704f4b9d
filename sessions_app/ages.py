"""A moment's age in words ("3 hours ago", "il y a 2 jours"): Django's ``naturaltime``.

Caching its translated phrases per language would save about 0.4 ms on a 50-row page
(measured), under the 10% a page needs to admit performance code.
"""

from __future__ import annotations

from django.contrib.humanize.templatetags.humanize import naturaltime


def natural_age(moment) -> str:
    """``naturaltime(moment)`` as text in the page's language."""
    return str(naturaltime(moment))
