"""The failures page's filters: the window, a group, a kind, days, and where each list's page
starts.  Bad input is a form error (the page then shows the window of the valid fields)."""

from __future__ import annotations

from django import forms
from django.core import signing
from django.utils.translation import gettext

from . import across
from .failures import KIND_LABELS, MAX_DAYS, Filters


class FailuresForm(forms.Form):
    days = forms.IntegerField(required=False, min_value=1, max_value=MAX_DAYS)
    source = forms.CharField(required=False, max_length=200)
    model = forms.CharField(required=False, max_length=200)
    tool = forms.CharField(required=False, max_length=200)
    kind = forms.ChoiceField(required=False, choices=[("", ""), *((k, k) for k in KIND_LABELS)])
    start = forms.DateField(required=False)
    end = forms.DateField(required=False)
    # Where each list's page starts: per-profile positions, signed (``across.page``).
    mpos = forms.CharField(required=False)
    spos = forms.CharField(required=False)

    def clean(self):
        data = super().clean()
        for name in ("mpos", "spos"):
            try:
                data[name] = across.positions(data.get(name) or "")
            except signing.BadSignature:
                self.add_error(name, gettext("This page link is damaged; showing the first page."))
        return data

    def filters(self) -> Filters:
        """The filters of the valid fields (the defaults for the others)."""
        data = getattr(self, "cleaned_data", {})
        given = {k: data[k] for k in ("days", "source", "model", "tool", "kind") if data.get(k)}
        return Filters(**given, start=data.get("start"), end=data.get("end"))

    def position(self, name: str) -> dict:
        return getattr(self, "cleaned_data", {}).get(name) or {}
