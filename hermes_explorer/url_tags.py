"""The ``{% url %}`` tag (a template builtin), with an argument-less URL kept once reversed.

Django's ``reverse()`` asks the active language several times per call (its resolvers keep
their tables per language) on top of matching the pattern: a dozen microseconds, and every
page's navigation reverses about ten fixed names.  Without arguments, a name reverses to the
same URL for the same URL configuration, script prefix (a profile's ``/p/<name>/``) and
current application, so :class:`KeptURLNode` keeps the result per those and renders it again
with a dict lookup.  A ``{% url %}`` with arguments, or a view name from a variable, renders
the stock way.  The settings list this module in ``TEMPLATES[…]["OPTIONS"]["builtins"]``.
"""

from __future__ import annotations

import weakref

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.template import Library, Variable
from django.template.defaulttags import URLNode
from django.template.defaulttags import url as django_url
from django.urls import get_script_prefix, get_urlconf

register = Library()

# A node keeps at most this many URLs (script prefixes are bounded by the profiles, but a
# deployment could have many): past it, it starts again.
KEPT_MAX = 256
_KEEPING: weakref.WeakSet = weakref.WeakSet()


def _current_app(context):
    # As Django's URLNode: the request's current_app, else the namespace it resolved to.
    request = getattr(context, "request", None)
    try:
        return request.current_app
    except AttributeError:
        try:
            return request.resolver_match.namespace
        except AttributeError:
            return None


class KeptURLNode(URLNode):
    def __init__(self, view_name, args, kwargs, asvar):
        super().__init__(view_name, args, kwargs, asvar)
        self.kept: dict[tuple, str] = {}
        _KEEPING.add(self)

    def render(self, context):
        key = (
            get_urlconf() or settings.ROOT_URLCONF,
            get_script_prefix(),
            _current_app(context),
            context.autoescape,
        )
        try:
            value = self.kept[key]
        except KeyError:
            value = self._reverse(context)
            if len(self.kept) >= KEPT_MAX:
                self.kept.clear()
            self.kept[key] = value
        if self.asvar:
            context[self.asvar] = value
            return ""
        return value

    def _reverse(self, context) -> str:
        if not self.asvar:
            return super().render(context)
        # Django's render stores the URL under ``asvar``: keep it in a layer of its own.
        with context.push():
            super().render(context)
            return context[self.asvar]


@register.tag
def url(parser, token):
    node = django_url(parser, token)
    name = node.view_name
    fixed = not name.filters and not isinstance(name.var, Variable)
    if not fixed or node.args or node.kwargs:
        return node
    return KeptURLNode(node.view_name, node.args, node.kwargs, node.asvar)


@receiver(setting_changed, dispatch_uid="hermes_explorer.url_tags.urls_changed")
def _urls_changed(sender, setting, **kwargs):
    # Django empties its URL caches on these changes; the kept URLs go with them.
    if setting in ("ROOT_URLCONF", "FORCE_SCRIPT_NAME"):
        for node in list(_KEEPING):
            node.kept.clear()
