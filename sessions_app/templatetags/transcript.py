"""``{% transcript_entries entries %}``: a transcript page's entries, built in Python."""

from __future__ import annotations

from django import template

from ..transcript_html import entries_html

register = template.Library()


@register.simple_tag(takes_context=True)
def transcript_entries(context, entries):
    return entries_html(entries, context.get("request"), can_reveal=bool(context.get("can_reveal")))
