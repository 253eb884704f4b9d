"""The forms of ``/people/``: its window and filter, and the staff form that joins user ids
into a person."""

from __future__ import annotations

import json

from django import forms
from django.utils.translation import gettext_lazy

from .forms import InsightsForm
from .models import Person


class PeopleForm(InsightsForm):
    user = forms.CharField(
        required=False,
        label=gettext_lazy("User, person or name contains"),
        max_length=200,
    )

    def __init__(self, data=None, **kwargs):
        super().__init__(data, activity_days=False, **kwargs)

    def matches(self, row: dict) -> bool:
        wanted = (self.cleaned_data.get("user") or "").casefold()
        return not wanted or any(
            wanted in (row[k] or "").casefold() for k in ("user_id", "display_name", "person")
        )


def id_value(key: tuple[str, str, str]) -> str:
    """A joinable id as a form value: ``[profile, platform, user id]`` in JSON."""
    return json.dumps(list(key))


class IdsField(forms.MultipleChoiceField):
    """Ids of :func:`id_value`, each a profile the user may see (``visible``)."""

    def __init__(self, *args, visible, **kwargs):
        super().__init__(*args, **kwargs)
        self.visible = visible

    def valid_value(self, value) -> bool:
        try:
            key = json.loads(value)
        except ValueError:
            return False
        return (
            isinstance(key, list)
            and len(key) == 3
            and all(isinstance(part, str) and 0 < len(part) <= 500 for part in key)
            and self.visible(key[0])
        )

    def clean(self, value):
        return [tuple(json.loads(one)) for one in super().clean(value)]


class JoinForm(forms.Form):
    """Staff join the chosen ids into the person of that name (made when new); without a
    name, the chosen ids leave their person."""

    name = forms.CharField(
        required=False,
        max_length=Person._meta.get_field("name").max_length,
        label=gettext_lazy("Person"),
        help_text=gettext_lazy("Empty: the chosen ids are no longer joined."),
    )

    def __init__(self, data=None, *, visible):
        super().__init__(data)
        self.fields["id"] = IdsField(
            visible=visible,
            error_messages={"invalid_choice": gettext_lazy("That id cannot be joined here.")},
        )

    def clean_name(self):
        return " ".join(self.cleaned_data["name"].split())  # one line, single spaces
