"""The account page's API tokens: list them, make one (shown once), revoke one."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext, gettext_lazy, pgettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from . import tokens
from .models import ApiToken

EXPIRY_CHOICES = [
    ("", pgettext_lazy("token expiry", "never")),
    ("30", gettext_lazy("in 30 days")),
    ("90", gettext_lazy("in 90 days")),
    ("365", gettext_lazy("in a year")),
]


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, required=False, label=gettext_lazy("What it is for"))
    expires = forms.ChoiceField(
        choices=EXPIRY_CHOICES, required=False, label=gettext_lazy("Expires")
    )


@never_cache
def token_list(request):
    """The signed-in user's tokens; a POST makes a new one and shows it once."""
    created = None
    form = TokenForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        days = form.cleaned_data["expires"]
        _token, created = tokens.create(
            request.user,
            name=form.cleaned_data["name"],
            expires_in_days=int(days) if days else None,
        )
        form = TokenForm()
    return render(
        request,
        "accounts_app/tokens.html",
        {
            "tokens": ApiToken.objects.filter(user=request.user),
            "form": form,
            "created": created,
        },
    )


@require_POST
def token_revoke(request, key_id: str):
    token = get_object_or_404(ApiToken, key_id=key_id, user=request.user)
    tokens.revoke(token)
    messages.success(
        request,
        gettext("Token %(key)s is revoked: scripts using it are refused.") % {"key": token.key_id},
    )
    return redirect("accounts:tokens")
