"""``{% store_url 'sessions:detail' id %}``: a link to the current (or given) store's page."""

from __future__ import annotations

from django import template
from django.urls import NoReverseMatch, reverse

from profiles_app.links import in_store

register = template.Library()


@register.simple_tag
def store_url(viewname, *args, store=None):
    try:
        return in_store(reverse(viewname, args=list(args)), store)
    except NoReverseMatch:
        return ""
