"""The insights window: preset days, all time or a custom range of local days; source; model.

``?days=`` takes the presets, ``all``, ``custom`` or any whole number (Hermes's ``--days``);
``start``/``end`` make a custom range when ``days`` is ``custom`` or absent.  An unknown
source or model is no error (bookmarks outlive data): the report is empty.
"""

from __future__ import annotations

import datetime as dt

from django import forms
from django.utils.translation import gettext, gettext_lazy

from sessions_app.formatting import number, per_language

from .window import DEFAULT_DAYS, PRESET_DAYS, Window, last_days

MAX_DAYS = 36_500
# Days outside these make no sense for a state.db (and overflow date arithmetic at the ends).
FIRST_DAY = dt.date(1970, 1, 1)
LAST_DAY = dt.date(2199, 12, 31)


@per_language
def day_choices() -> list[tuple[str, str]]:
    """The window's choices in the page's language (built once per language)."""
    return [
        *((str(d), last_days(d)) for d in PRESET_DAYS),
        ("all", gettext("All time")),
        ("custom", gettext("Custom range")),
    ]


def _in_range(day: dt.date) -> None:
    if not FIRST_DAY <= day <= LAST_DAY:
        raise forms.ValidationError(
            gettext("Pick a day between %(first)s and %(last)s.")
            % {"first": FIRST_DAY.isoformat(), "last": LAST_DAY.isoformat()}
        )


def _day_field(label) -> forms.DateField:
    return forms.DateField(
        required=False,
        label=label,
        widget=forms.DateInput(attrs={"type": "date"}),
        validators=[_in_range],
    )


BASIS_CHOICES = [
    ("start", gettext_lazy("By start day (as Hermes counts)")),
    ("activity", gettext_lazy("By activity day (usage on the day it happened)")),
]


class InsightsForm(forms.Form):
    days = forms.CharField(
        required=False,
        label=gettext_lazy("Window"),
        max_length=10,
        initial=str(DEFAULT_DAYS),
        widget=forms.Select,
    )
    start = _day_field(gettext_lazy("From"))
    end = _day_field(gettext_lazy("To"))
    source = forms.CharField(required=False, label=gettext_lazy("Source"), max_length=200)
    model = forms.CharField(
        required=False,
        label=gettext_lazy("Model"),
        max_length=200,
        widget=forms.TextInput(
            attrs={"list": "insights-models", "placeholder": gettext_lazy("any model")}
        ),
    )
    basis = forms.ChoiceField(
        required=False,
        label=gettext_lazy("Daily charts"),
        choices=BASIS_CHOICES,
        widget=forms.RadioSelect,
    )

    def __init__(
        self,
        data=None,
        *,
        sources: list[str] | None = None,
        activity_days: bool = False,
        **kwargs,
    ):
        super().__init__(data, **kwargs)
        choices = list(day_choices())
        raw_days = (data or {}).get("days", "")
        if raw_days and raw_days.isdigit() and raw_days not in dict(choices):
            choices.insert(len(PRESET_DAYS), (raw_days, last_days(int(raw_days))))
        self.fields["days"].widget.choices = choices
        source_choices = [("", gettext("All sources"))] + [(s, s) for s in sources or []]
        current = (data or {}).get("source", "")
        if current and current not in dict(source_choices):
            source_choices.append((current, current))
        self.fields["source"].widget = forms.Select(choices=source_choices)
        if not activity_days:
            del self.fields["basis"]

    def clean_days(self) -> str:
        value = (self.cleaned_data.get("days") or "").strip().lower()
        if value in ("", "all", "custom"):
            return value
        if not value.isdigit() or not 1 <= int(value) <= MAX_DAYS:
            raise forms.ValidationError(
                gettext("Pick a window, or a whole number of days from 1 to %(max)s.")
                % {"max": number(MAX_DAYS)}
            )
        return value

    def clean(self):
        cleaned = super().clean()
        days, start, end = cleaned.get("days"), cleaned.get("start"), cleaned.get("end")
        if "days" in self.errors or "start" in self.errors or "end" in self.errors:
            return cleaned
        if days == "custom" and not start and not end:
            raise forms.ValidationError(
                gettext("A custom range needs a start day, an end day, or both.")
            )
        if start and end and start > end:
            raise forms.ValidationError(gettext("The start day is after the end day."))
        return cleaned

    def window(self) -> Window:
        """The window the (valid) form describes; the default 30 days when unbound."""
        if not self.is_bound:
            return Window(days=DEFAULT_DAYS)
        data = self.cleaned_data
        days, start, end = data.get("days"), data.get("start"), data.get("end")
        source = (data.get("source") or "").strip() or None
        model = (data.get("model") or "").strip() or None
        # A preset wins over dates left from an earlier custom range.
        if (start or end) and days in ("", "custom"):
            return Window(days=None, start_day=start, end_day=end, source=source, model=model)
        if days == "all":
            return Window(days=None, source=source, model=model)
        return Window(days=int(days) if days else DEFAULT_DAYS, source=source, model=model)

    def chart_basis(self) -> str:
        if "basis" not in self.fields or not self.is_bound:
            return "start"
        return self.cleaned_data.get("basis") or "start"
