"""Template filters for Hermes values: epoch times, model names, tokens, money, durations."""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import math
from html import escape

from django import template
from django.conf import settings
from django.contrib.humanize.templatetags.humanize import NaturalTimeFormatter, intcomma
from django.utils import timezone
from django.utils.dates import WEEKDAYS_ABBR
from django.utils.formats import localize
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import slugify
from django.utils.translation import get_language, gettext, pgettext_lazy

from redaction import redact as redact_secrets

from .. import formatting
from ..timefmt import from_epoch

register = template.Library()


@register.simple_tag
def form_fragment_key(form) -> str:
    """What a filter form's HTML depends on (language, fields, choices, submitted values): the
    list templates cache the form under it, as rendering its ~30 widgets took 6–7 ms of a 20 ms
    session list (measured, 1M-message store); a hit takes ~0.1 ms."""
    fields = [
        (name, type(field).__name__, [str(c) for c in getattr(field, "choices", ())])
        for name, field in form.fields.items()
    ]
    data = sorted(form.data.lists()) if form.is_bound else None
    raw = repr((get_language(), form.prefix, fields, data))
    return hashlib.sha256(raw.encode()).hexdigest()


# Epoch seconds → aware datetime (rendered in TIME_ZONE by the template engine).
register.filter("epoch", from_epoch)
# Numbers, money, durations and model names: one definition each, in ``formatting``.
register.filter("short_model", formatting.short_model)
register.filter("compact", formatting.compact)
register.filter("usd", formatting.usd)
register.filter("duration", formatting.duration)
register.filter("number", formatting.number)
register.filter("seconds", formatting.seconds_text)
# Well-known secret shapes replaced by ``[redacted: …]`` markers (HERMES_REDACT_SECRETS).
register.filter("redact", redact_secrets)


@register.filter
def grouped(value):
    """``intcomma`` through :func:`formatting.number` for plain ints and finite floats: Django's
    looks up three formats per number (about 5 µs each; an insights page shows ~300)."""
    kind = value.__class__
    if kind is int or (kind is float and math.isfinite(value) and abs(value) < 1e15):
        return formatting.number(value)
    return intcomma(value)


# Roles and visibilities as words of the page's language (the values stay in classes, URLs
# and exports); unknown values show as they are.
ROLE_LABELS = {
    "user": pgettext_lazy("message role", "user"),
    "assistant": pgettext_lazy("message role", "assistant"),
    "tool": pgettext_lazy("message role", "tool"),
    "system": pgettext_lazy("message role", "system"),
}
VISIBILITY_LABELS = {
    "live": pgettext_lazy("message visibility", "live"),
    "compacted": pgettext_lazy("message visibility", "compacted"),
    "rewound": pgettext_lazy("message visibility", "rewound"),
    "hidden": pgettext_lazy("message visibility", "hidden"),
}


COST_STATUS_LABELS = {
    "estimated": pgettext_lazy("cost status", "estimated"),
    "actual": pgettext_lazy("cost status", "actual"),
    "included": pgettext_lazy("cost", "included"),
    "unknown": pgettext_lazy("cost", "unknown"),
}


@formatting.per_language
def role_labels() -> tuple[dict[str, str], dict[str, str]]:
    return (
        {k: str(v) for k, v in ROLE_LABELS.items()},
        {k: str(v) for k, v in VISIBILITY_LABELS.items()},
    )


@register.filter
def role_label(role):
    return role_labels()[0].get(role, role)


@register.filter
def visibility_label(visibility):
    return role_labels()[1].get(visibility, visibility)


def _local(value):
    if not hasattr(value, "strftime"):
        value = from_epoch(value)  # None for None or ""
    if getattr(value, "tzinfo", None) is not None:
        value = timezone.localtime(value)
    return value


@register.filter
def when(value, precision=""):
    """A datetime or epoch seconds as local text: ``|when`` to the minute, ``|when:"seconds"``."""
    value = _local(value)
    return "" if value is None else formatting.datetime_text(value, seconds=precision == "seconds")


@register.filter
def day(value):
    """A date (or ISO day), datetime or epoch as the language's day ("" without one)."""
    if isinstance(value, str):
        try:
            value = dt.date.fromisoformat(value)
        except ValueError:
            return value
    value = _local(value)
    if getattr(value, "tzinfo", None) is not None:
        value = value.date()
    return "" if value is None else formatting.date_text(value)


@register.simple_tag(takes_context=True)
def query_with(context, **changes):
    """The current query string with some parameters replaced (None removes one)."""
    params = context["request"].GET.copy()
    for key, value in changes.items():
        if value is None or value == "":
            params.pop(key, None)
        else:
            params[key] = value
    return "?" + params.urlencode()


@register.simple_tag(takes_context=True)
def export_url(context, fmt, **extra):
    """The current URL plus ``_export=<fmt>``: the same rows, all pages, as a download."""
    changes = {"cursor": None, "page": None, "_export": fmt, **extra}
    return context["request"].path + query_with(context, **changes)


def text_html(value) -> str:
    """``{{ value }}``'s HTML, without ``conditional_escape``'s costly lazy-string wrapper."""
    if value.__class__ is str:
        return escape(value)
    if hasattr(value, "__html__"):
        return value.__html__()
    if value.__class__ is int and not settings.USE_THOUSAND_SEPARATOR:
        return str(value)  # what localize() gives, without its format lookups
    return escape(str(localize(value)))


# Ages: Django's ``naturaltime`` with its phrases translated once per language and values
# (measured: the session list sorted by source went from 22.8 to 18.6 ms a page).
class _Phrase:
    def __init__(self, phrase) -> None:
        self.phrase = phrase
        self.format = formatting.per_language(lambda *items: str(phrase % dict(items)))

    def __mod__(self, values: dict) -> str:
        return self.format(*values.items())

    def __str__(self) -> str:
        return str(self.phrase)


class _Ages(NaturalTimeFormatter):
    time_strings = {k: _Phrase(v) for k, v in NaturalTimeFormatter.time_strings.items()}
    past_substrings = {k: _Phrase(v) for k, v in NaturalTimeFormatter.past_substrings.items()}
    future_substrings = {k: _Phrase(v) for k, v in NaturalTimeFormatter.future_substrings.items()}


# Cells shared by the tables and the templates, called once per row: f-strings and
# ``html.escape``, as ``format_html``'s lazy-string checks cost more than the formatting.
def time_html(epoch_value, *, seconds: bool = False, age: bool = False, empty="—"):
    """The ``<time>`` element: local time, the full time and zone on hover, the age if asked."""
    moment = from_epoch(epoch_value)
    if moment is None:
        return empty
    local = timezone.localtime(moment)
    stamp = formatting.datetime_text(local, seconds=True)
    html = (
        f'<time datetime="{escape(local.isoformat(timespec="seconds"))}" '
        f'title="{escape(stamp)} {escape(local.tzname() or "")}">'
        f"{escape(stamp if seconds else stamp[:-3])}</time>"
    )
    if age:
        html += f'<span class="age">{escape(str(_Ages.string_for(moment)))}</span>'
    return mark_safe(html)  # noqa: S308 - every value is escaped above


@register.filter
def time_cell(epoch_value, precision=""):
    return time_html(epoch_value, seconds=precision == "seconds")


@register.filter
def started_cell(epoch_value):
    return time_html(epoch_value, age=True)


@register.filter
def source_badge(source) -> SafeString:
    try:
        return _source_badge(source)
    except TypeError:  # an unhashable value cannot be cached
        return _source_badge.__wrapped__(source)


@functools.lru_cache(maxsize=512)
def _source_badge(source) -> SafeString:
    # A handful of distinct sources, one per row: slugify is the costly part.
    return format_html(
        '<span class="badge source source-{}">{}</span>', slugify(source) or "none", source
    )


@formatting.per_language
def _cost_words() -> dict[str, str]:
    # The cells' fixed markup, escaped; ``{}`` takes a sum.
    titles = {
        "included": gettext("Included in a subscription: shows $0 but is not free"),
        "unknown": gettext("No price known"),
        "actual": gettext("Provider-reported cost"),
        "estimated": gettext("Local estimate"),
    }
    words = {
        kind: format_html('<span class="cost {}" title="{}">', kind, title) + "{}</span>"
        for kind, title in titles.items()
    }
    for kind in ("included", "unknown"):
        words[kind] = mark_safe(words[kind].format(escape(str(COST_STATUS_LABELS[kind]))))  # noqa: S308
    return words


@register.filter
def cost_badge(record):
    """A cost and its status: ``included`` is not a plain $0, ``unknown`` not a missing number."""
    status = getattr(record, "cost_status", None)
    words = _cost_words()
    if status in ("included", "unknown"):
        return words[status]
    kind, value = "actual", getattr(record, "actual_cost_usd", None)
    if status != "actual" or value is None:
        kind, value = "estimated", getattr(record, "estimated_cost_usd", None)
    if value is None:
        return mark_safe('<span class="cost none">—</span>')
    return mark_safe(words[kind].format(escape(formatting.usd(value))))  # noqa: S308


# Insights words: Hermes's report keeps its English fields, the page shows its language's.
WEEKDAY_INDEX = {
    name: i for i, name in enumerate(("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"))
}
BUCKET_LABELS = {
    "day": pgettext_lazy("chart bucket", "day"),
    "week": pgettext_lazy("chart bucket", "week"),
    "month": pgettext_lazy("chart bucket", "month"),
    "year": pgettext_lazy("chart bucket", "year"),
}
CSV_TABLE_LABELS = {
    "models": pgettext_lazy("insights table", "models"),
    "platforms": pgettext_lazy("insights table", "platforms"),
    "tools": pgettext_lazy("insights table", "tools"),
    "tool_latency": pgettext_lazy("insights table", "tool latency"),
    "skills": pgettext_lazy("insights table", "skills"),
    "daily": pgettext_lazy("insights table", "daily"),
    "activity": pgettext_lazy("insights table", "activity"),
    "top_sessions": pgettext_lazy("insights table", "top_sessions"),
}


@register.filter
def weekday_label(name):
    """``Mon`` → the language's abbreviation (``lun.``); other values as they are."""
    index = WEEKDAY_INDEX.get(name)
    return name if index is None else WEEKDAYS_ABBR[index]


def _labelled(labels: dict):
    return lambda value: labels.get(value, value)


register.filter("cost_status_label", _labelled(COST_STATUS_LABELS))
register.filter("bucket_label", _labelled(BUCKET_LABELS))
register.filter("csv_table_label", _labelled(CSV_TABLE_LABELS))


@register.filter
def month_label(value):
    """``2026-11`` as the page writes a month: as it is in English, ``novembre 2026`` in French."""
    try:
        first = dt.date.fromisoformat(f"{value}-01")
    except (TypeError, ValueError):
        return value
    return formatting.date_format(first, "MONTH_LABEL_FORMAT")


@register.filter
def long_day(value):
    value = _local(value)
    return "" if value is None else formatting.long_date_text(value)


@register.filter
def notable_value(top):
    """Hermes's text for a notable session's figure (``12 msgs``), in the page's language."""
    metric, raw = top.get("metric"), top.get("raw_value")
    labels = {
        "messages": gettext("%(n)s msgs"),
        "tokens": gettext("%(n)s tokens"),
        "tool_calls": gettext("%(n)s calls"),
    }
    if formatting.hermes_words() or raw is None or metric not in (*labels, "longest"):
        return top.get("value", "")
    if metric == "longest":
        return formatting.duration(raw)
    return labels[metric] % {"n": formatting.number(int(raw))}
