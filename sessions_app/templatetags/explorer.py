"""Template filters for Hermes values: epoch times, model names, tokens, money, durations."""

from __future__ import annotations

import functools
from html import escape

from django import template
from django.conf import settings
from django.contrib.humanize.templatetags.humanize import naturaltime
from django.utils import timezone
from django.utils.formats import localize
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import slugify

from hermes_explorer.form_rendering import form_fields_html

from .. import formatting
from ..timefmt import from_epoch

register = template.Library()


@register.filter
def epoch(value):
    """Epoch seconds → aware datetime (rendered in TIME_ZONE by the template engine)."""
    return from_epoch(value)


# Numbers, money, durations and model names: one definition each, in ``formatting``.
register.filter("short_model", formatting.short_model)
register.filter("compact", formatting.compact)
register.filter("usd", formatting.usd)
register.filter("duration", formatting.duration)


# ``{% form_fields form %}``: the fields of a filter sidebar or of the sign-in form.
register.simple_tag(form_fields_html, name="form_fields")


@register.simple_tag(takes_context=True)
def query_with(context, **changes):
    """The current query string with some parameters replaced (None removes one)."""
    request = context["request"]
    params = request.GET.copy()
    for key, value in changes.items():
        if value is None or value == "":
            params.pop(key, None)
        else:
            params[key] = value
    encoded = params.urlencode()
    return "?" + encoded if encoded else "?"


@register.simple_tag(takes_context=True)
def export_url(context, fmt, **extra):
    """The current URL plus ``_export=<fmt>``: the same rows, all pages, as a download."""
    request = context["request"]
    params = request.GET.copy()
    for key in ("cursor", "page"):
        params.pop(key, None)
    params["_export"] = fmt
    for key, value in extra.items():
        params[key] = value
    return request.path + "?" + params.urlencode()


@register.filter
def redact(value):
    """Well-known secret shapes replaced by ``[redacted: …]`` markers (HERMES_REDACT_SECRETS)."""
    from hermes_explorer.redaction import redact as redact_secrets

    return redact_secrets(value)


def text_html(value) -> str:
    """What ``{{ value }}`` renders in an autoescaping template (safe HTML as it is, anything
    else localised and escaped), without ``conditional_escape``'s lazy-string wrapper: the
    tables, transcripts and search hits call this for every value they show."""
    if value.__class__ is str:
        return escape(value)
    if hasattr(value, "__html__"):
        return value.__html__()
    if value.__class__ is int and not settings.USE_THOUSAND_SEPARATOR:
        return str(value)  # what localize() gives, without its format lookups
    return escape(str(localize(value)))


# Cells shared by the django-tables2 tables and the page templates (one rendering each).
# Tables call these once per row: they build their HTML with f-strings and ``html.escape``
# rather than ``format_html`` (whose lazy-string checks cost more than the formatting).
def time_html(epoch_value, *, seconds: bool = False, age: bool = False, empty="—"):
    """The one ``<time>`` element of the explorer: local time (to the minute, or the second),
    the full time and zone on hover, optionally its age beneath."""
    moment = from_epoch(epoch_value)
    if moment is None:
        return empty
    local = timezone.localtime(moment)
    stamp = local.strftime("%Y-%m-%d %H:%M:%S")
    html = (
        f'<time datetime="{escape(local.isoformat(timespec="seconds"))}" '
        f'title="{escape(stamp)} {escape(local.tzname() or "")}">'
        f"{escape(stamp if seconds else stamp[:-3])}</time>"
    )
    if age:
        html += f'<span class="age">{escape(naturaltime(moment))}</span>'
    return mark_safe(html)  # noqa: S308 - every value is escaped above


@register.filter
def time_cell(epoch_value, precision=""):
    """``{{ epoch|time_cell }}`` to the minute, ``{{ epoch|time_cell:"seconds" }}``."""
    return time_html(epoch_value, seconds=precision == "seconds")


@register.filter
def started_cell(epoch_value):
    """Local start time with its age beneath (hover for seconds and zone)."""
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


@register.filter
def cost_badge(record):
    """A cost with its status: an ``included`` session is not a plain $0, an ``unknown`` one
    not a missing number."""
    status = getattr(record, "cost_status", None)
    if status == "included":
        return INCLUDED_COST
    if status == "unknown":
        return mark_safe('<span class="cost unknown" title="No price known">unknown</span>')
    actual = getattr(record, "actual_cost_usd", None)
    if status == "actual" and actual is not None:
        return mark_safe(  # noqa: S308 - escaped
            '<span class="cost actual" title="Provider-reported cost">'
            f"{escape(formatting.usd(actual))}</span>"
        )
    estimated = getattr(record, "estimated_cost_usd", None)
    if estimated is not None:
        return mark_safe(  # noqa: S308 - escaped
            '<span class="cost estimated" title="Local estimate">'
            f"{escape(formatting.usd(estimated))}</span>"
        )
    return mark_safe('<span class="cost none">—</span>')


INCLUDED_COST = format_html(
    '<span class="cost included" title="{}">included</span>',
    "Included in a subscription: shows $0 but is not free",
)
