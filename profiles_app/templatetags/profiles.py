"""``{% store_url 'sessions:detail' id %}``: a link to the current (or given) store's page."""

from __future__ import annotations

from django import template
from django.urls import NoReverseMatch

from profiles_app.links import store_reverse

register = template.Library()


@register.simple_tag
def store_url(viewname, *args, store=None):
    try:
        return store_reverse(viewname, args, store)
    except NoReverseMatch:
        return ""
