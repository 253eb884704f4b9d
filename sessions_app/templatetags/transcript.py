"""``{% transcript_entries entries %}`` and ``{% search_hits hits badges %}``, built in Python."""

from __future__ import annotations

from django import template

from ..search.hits_html import hits_html
from ..transcript_html import entries_html

register = template.Library()
register.simple_tag(hits_html, name="search_hits")


@register.simple_tag(takes_context=True)
def transcript_entries(context, entries):
    return entries_html(entries, context.get("request"), can_reveal=bool(context.get("can_reveal")))
