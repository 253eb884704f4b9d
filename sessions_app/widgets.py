"""Choice widgets rendered in Python: the filter forms of every list page.

Django renders a choice widget through one template per option; with the source checkboxes
and the selects of a filter form that was about a quarter of a session list page (measured:
3.4 ms for nine checkboxes).  These widgets produce the same markup (up to whitespace) from
the widget's own choices, attributes and value — the rules of Django's ``optgroups``: option
values as strings, the first match selected in a single select, every match in a multiple
one, ``<id>_<index>`` ids for checkboxes and radio buttons — with one escape per value and no
lazy-string wrappers (``format_html`` checks every argument for a lazy string; that cost ~1 ms
a page).
A widget whose choices hold groups renders the stock way.
"""

from __future__ import annotations

from django import forms
from django.utils.safestring import mark_safe

from hermes_explorer.form_rendering import attrs_html, text


def _flat_choices(widget) -> list[tuple] | None:
    """``(value, label)`` pairs, or ``None`` when a choice is a group (rendered the stock way)."""
    flat = []
    for value, label in widget.choices:
        if isinstance(label, list | tuple):
            return None
        flat.append(("" if value is None else str(value), label))
    return flat


def _chosen(widget, value, choices: list[tuple]) -> list[bool]:
    wanted = set(widget.format_value(value))
    if widget.allow_multiple_selected:
        return [v in wanted for v, _ in choices]
    marks, found = [], False
    for v, _ in choices:
        hit = not found and v in wanted
        found = found or hit
        marks.append(hit)
    return marks


class FastSelect(forms.Select):
    def render(self, name, value, attrs=None, renderer=None):
        choices = _flat_choices(self)
        if choices is None:
            return super().render(name, value, attrs, renderer)
        attrs = self.build_attrs(self.attrs, attrs)
        if self.allow_multiple_selected:
            attrs["multiple"] = True
        options = "".join(
            f'<option value="{text(v)}"{" selected" if on else ""}>{text(label)}</option>'
            for (v, label), on in zip(choices, _chosen(self, value, choices), strict=True)
        )
        return mark_safe(f'<select name="{text(name)}"{attrs_html(attrs)}>{options}</select>')  # noqa: S308 - escaped above


class _FastMultipleInput:
    """Django's ``multiple_input.html`` markup: one labelled ``<input>`` of the widget's
    ``input_type`` per choice, in a ``div``."""

    def render(self, name, value, attrs=None, renderer=None):
        choices = _flat_choices(self)
        if choices is None:
            return super().render(name, value, attrs, renderer)
        attrs = self.build_attrs(self.attrs, attrs)
        wrapper_id = attrs.get("id")
        boxes = []
        for index, ((v, label), on) in enumerate(
            zip(choices, _chosen(self, value, choices), strict=True)
        ):
            box = dict(attrs)
            if wrapper_id:
                box["id"] = f"{wrapper_id}_{index}"
            box["checked"] = on
            label_for = f' for="{text(box["id"])}"' if box.get("id") else ""
            boxes.append(
                f'<div><label{label_for}><input type="{self.input_type}" '
                f'name="{text(name)}" value="{text(v)}"{attrs_html(box)}> {text(label)}'
                "</label></div>"
            )
        wrapper = f' id="{text(wrapper_id)}"' if wrapper_id else ""
        if attrs.get("class"):
            wrapper += f' class="{text(attrs["class"])}"'
        return mark_safe(f"<div{wrapper}>{''.join(boxes)}</div>")  # noqa: S308 - escaped above


class FastCheckboxSelectMultiple(_FastMultipleInput, forms.CheckboxSelectMultiple):
    pass


class FastRadioSelect(_FastMultipleInput, forms.RadioSelect):
    pass
