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
from django.utils.html import conditional_escape
from django.utils.safestring import SafeData, SafeString, mark_safe

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


def text(value) -> str:
    # ``{{ value|stringformat:'s' }}`` under autoescape: safe strings pass as they are.
    return str(value) if isinstance(value, SafeData) else escape(str(value))


def attrs_html(attrs: dict) -> str:
    """``django/forms/widgets/attrs.html``: True is a bare attribute, False none at all."""
    return "".join(
        f" {text(name)}" if value is True else f' {text(name)}="{text(value)}"'
        for name, value in attrs.items()
        if value is not False
    )


def input_html(widget: dict) -> str:
    """``django/forms/widgets/input.html`` (with ``attrs.html``) for a widget context."""
    value = "" if widget["value"] is None else f' value="{text(widget["value"])}"'
    return (
        f'<input type="{text(widget["type"])}" name="{text(widget["name"])}"{value}'
        f"{attrs_html(widget['attrs'])}>"
    )


class FastInputRenderer(DjangoTemplates):
    def render(self, template_name, context, request=None):
        if template_name in INPUT_TEMPLATES:
            return input_html(context["widget"])
        return super().render(template_name, context, request)


def form_fields_html(form) -> SafeString:
    """Every field of ``form`` as the filter sidebars and the sign-in form show them: errors,
    the hidden fields that carry a value, then one ``div.field`` per visible field (a lone
    checkbox before its label, a group of checkboxes in a fieldset, anything else after its
    label).  Built in Python: a template loop over a dozen fields cost ~1.5 ms a page."""
    esc = conditional_escape
    out = []
    errors = form.non_field_errors()
    if errors:
        out.append(f'<div class="form-errors" role="alert">{esc(errors)}</div>')
    out.append("\n")
    out.extend(esc(field) for field in form.hidden_fields() if field.value())
    out.append("\n")
    for field in form.visible_fields():
        widget = field.field.widget
        input_type = getattr(widget, "input_type", None)
        choices = getattr(field.field, "choices", None)
        label, html = esc(field.label), esc(field)
        has_error = " has-error" if field.errors else ""
        out.append(f'\n  <div class="field{has_error} field-{esc(field.name)}">\n    \n      ')
        if input_type == "checkbox" and not choices:
            out.append(f'{html} <label for="{esc(field.id_for_label)}">{label}</label>')
        elif (
            choices
            and getattr(widget, "allow_multiple_selected", False)
            and (input_type == "checkbox")
        ):
            out.append(f"<fieldset><legend>{label}</legend>{html}</fieldset>")
        else:
            out.append(f'<label for="{esc(field.id_for_label)}">{label}</label>{html}')
        out.append("\n    \n    ")
        if field.errors:
            joined = " ".join(esc(error) for error in field.errors)
            out.append(f'<div class="field-error" role="alert">{joined}</div>')
        out.append("\n  </div>\n")
    out.append("\n")
    return mark_safe("".join(out))  # noqa: S308 - every value is escaped above
