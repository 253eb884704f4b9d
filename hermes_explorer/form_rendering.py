"""The form renderer: Django's, with the plain ``<input>`` widgets written in Python.

Every ``<input>`` widget (text, date, number, hidden, checkbox…) renders through two
templates, ``input.html`` and ``attrs.html``; a filter form of a dozen inputs spent about
2 ms there per page (measured).  :class:`FastInputRenderer` writes the same markup from the
same widget context (value formatting, ids, ``required``… are all settled by the widget's
``get_context`` before rendering), and hands every other template to Django unchanged.

It stands for Django's stock ``input.html``/``attrs.html``: a project template overriding one
of them would have to be rendered by the template engine again (drop it from
``INPUT_TEMPLATES``).
"""

from __future__ import annotations

from html import escape

from django.forms.renderers import DjangoTemplates
from django.utils.safestring import SafeData

INPUT_TYPES = (
    "text",
    "number",
    "email",
    "url",
    "password",
    "hidden",
    "date",
    "datetime",
    "time",
    "search",
    "tel",
    "color",
    "checkbox",
)
# Each of these is ``{% include "django/forms/widgets/input.html" %}``.
INPUT_TEMPLATES = frozenset(f"django/forms/widgets/{name}.html" for name in INPUT_TYPES)


def _text(value) -> str:
    # ``{{ value|stringformat:'s' }}`` under autoescape: safe strings pass as they are.
    return str(value) if isinstance(value, SafeData) else escape(str(value))


def input_html(widget: dict) -> str:
    """``django/forms/widgets/input.html`` (with ``attrs.html``) for a widget context."""
    parts = [f'<input type="{_text(widget["type"])}" name="{_text(widget["name"])}"']
    if widget["value"] is not None:
        parts.append(f' value="{_text(widget["value"])}"')
    for name, value in widget["attrs"].items():
        if value is False:
            continue
        parts.append(f" {_text(name)}" if value is True else f' {_text(name)}="{_text(value)}"')
    parts.append(">")
    return "".join(parts)


class FastInputRenderer(DjangoTemplates):
    def render(self, template_name, context, request=None):
        if template_name in INPUT_TEMPLATES:
            return input_html(context["widget"])
        return super().render(template_name, context, request)
