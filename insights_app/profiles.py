"""The insights page over several profiles: what differs from one profile's page.

The report is the sum of the profiles' (:mod:`insights_app.merged`); here are the month-to-date
cost of every profile, the per-profile chart and every profile's sources.
"""

from __future__ import annotations

from django.utils.safestring import SafeString
from django.utils.translation import gettext

from hermes_explorer.stores import Store
from sessions_app.search.merged import merged_choices

from . import charts, explorer
from . import merged as merged_insights
from .drilldown import Drill
from .stats import Report


def merged_sources(parts: list[Store]) -> list[str]:
    return [value for value, _label in merged_choices(parts)]


def merged_extras(
    report: Report, previous: Report | None, drill: Drill, parts: list[Store]
) -> explorer.Extras:
    """The explorer's figures of a combined report; the projection from every profile."""
    extra = explorer.extras(report, previous, drill)
    if extra.projection:
        mtd = merged_insights.month_to_date(parts, report.window, report.now)
        days, in_month = extra.projection["days_elapsed"], extra.projection["days_in_month"]
        extra.projection = {
            **extra.projection,
            "month_to_date_cost": mtd,
            "projected_cost": mtd / days * in_month if days else 0.0,
        }
    return extra


def profiles_chart(rows: list[dict]) -> SafeString:
    return charts.hbar_chart(
        [charts.Bar(r["profile"], r["sessions"], r["url"]) for r in rows],
        title=gettext("Sessions per profile"),
        desc=gettext(
            "Sessions of the window in each profile; each bar opens that profile's report."
        ),
    )
