"""Forms of the annotations: each rule of bad input has its own clear message."""

from __future__ import annotations

from urllib.parse import urlsplit

from django import forms
from django.urls import Resolver404, resolve
from django.utils.translation import gettext, gettext_lazy, pgettext_lazy

from hermes_explorer import stores
from hermes_explorer.params import flag
from profiles_app.middleware import PREFIX
from sessions_app.formatting import number

from .crossdb import Selection
from .models import (
    NOTE_CHARS,
    SCORE_MAX_VALUES,
    SCORE_NAME_CHARS,
    SCORE_VALUE_CHARS,
    TAG_NAME_CHARS,
    SavedView,
    Score,
    Tag,
)

VIEW_NAMESPACES = frozenset({"sessions", "messages", "search", "insights", "live", "failures"})
MAX_TAG_FILTERS = 10
# The colours' names in the page's language (the stored value stays the English word).
COLOUR_LABELS = {
    "grey": pgettext_lazy("tag colour", "grey"),
    "blue": pgettext_lazy("tag colour", "blue"),
    "green": pgettext_lazy("tag colour", "green"),
    "amber": pgettext_lazy("tag colour", "amber"),
    "red": pgettext_lazy("tag colour", "red"),
    "purple": pgettext_lazy("tag colour", "purple"),
}


def _single_line(value: str, problem: str) -> str:
    """``value`` (stripped by its field); ``problem`` (in words) when it is more than one line."""
    if any(ord(c) < 32 for c in value):
        raise forms.ValidationError(problem)
    return value


class _NamedForm(forms.ModelForm):
    """A model form whose name is one line (tags and scores: unique whatever its case); clean
    methods say each rule in words, the database constraints stay as the backstop."""

    # Per field, what its length limit says (``%(n)s``: the limit).
    too_long: dict = {}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, message in self.too_long.items():
            # Set when the form is made, so that the message is in the page's language.
            field = self.fields[name]
            field.error_messages["max_length"] = message % {"n": number(field.max_length)}

    def _clean_name(self, one_line: str, taken: str) -> str:
        name = _single_line(self.cleaned_data["name"], one_line)
        clash = type(self.instance).objects.filter(name__iexact=name).exclude(pk=self.instance.pk)
        if (existing := clash.first()) is not None:
            raise forms.ValidationError(taken % {"name": existing.name})
        return name

    def validate_constraints(self, exclude=None):
        return None


class TagForm(_NamedForm):
    colour = forms.ChoiceField(choices=COLOUR_LABELS, initial="grey", label=gettext_lazy("Colour"))

    class Meta:
        model = Tag
        fields = ["name", "colour", "description"]
        labels = {
            "name": gettext_lazy("Name"),
            "description": gettext_lazy("Description"),
        }

    too_long = {
        "name": gettext_lazy("A tag name has at most %(n)s characters."),
        "description": gettext_lazy("A description has at most %(n)s characters."),
    }

    def clean_name(self):
        return self._clean_name(
            gettext("The tag name must be one line of text."),
            gettext("A tag “%(name)s” already exists; tag names differ by more than case."),
        )


class AddTagForm(forms.Form):
    tag = forms.ModelChoiceField(
        queryset=Tag.objects.all(),
        label=gettext_lazy("Tag"),
        empty_label=None,
        error_messages={
            "invalid_choice": gettext_lazy("That tag does not exist (any more): pick another.")
        },
    )


class BulkTagForm(AddTagForm):
    session = forms.MultipleChoiceField(
        label=gettext_lazy("Sessions"),
        error_messages={"required": gettext_lazy("Select at least one session to tag.")},
    )

    MAX_SESSIONS = 500

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["session"].valid_value = lambda v: isinstance(v, str) and 0 < len(v) <= 200

    def clean_session(self):
        ids = list(dict.fromkeys(self.cleaned_data["session"]))
        if len(ids) > self.MAX_SESSIONS:
            raise forms.ValidationError(
                gettext("Tag at most %(n)s sessions at a time.") % {"n": self.MAX_SESSIONS}
            )
        return ids


class NoteForm(forms.Form):
    text = forms.CharField(
        label=gettext_lazy("Note"),
        max_length=NOTE_CHARS,
        widget=forms.Textarea(attrs={"rows": 3}),
        error_messages={"required": gettext_lazy("A note cannot be empty.")},
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # ``%(show_value)d`` is filled in by the validator.
        self.fields["text"].error_messages["max_length"] = gettext(
            "A note has at most %(n)s characters (this one has %%(show_value)d)."
        ) % {"n": number(NOTE_CHARS)}


class ScoreForm(_NamedForm):
    """A score: a name (one line, unique whatever its case, no ``:``, which the list's
    ``score=name:value`` filter uses) and its values, comma-separated, in button order."""

    values = forms.CharField(
        label=gettext_lazy("Values"),
        help_text=gettext_lazy("Separated by commas, in the order of the buttons: good, bad"),
    )

    class Meta:
        model = Score
        fields = ["name", "values"]
        labels = {"name": gettext_lazy("Name")}

    too_long = {"name": gettext_lazy("A score name has at most %(n)s characters.")}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk and not self.is_bound:
            self.initial["values"] = ", ".join(self.instance.values)

    def clean_name(self):
        name = self._clean_name(
            gettext("The score name must be one line of text."),
            gettext("A score “%(name)s” already exists; score names differ by more than case."),
        )
        if ":" in name or "," in name:
            raise forms.ValidationError(gettext("A score name cannot contain “:” or “,”."))
        return name

    def clean_values(self):
        text = _single_line(
            self.cleaned_data["values"], gettext("The values must be one line of text.")
        )
        values = [v.strip() for v in text.split(",") if v.strip()]
        if not values:
            raise forms.ValidationError(gettext("A score needs at least one value."))
        if len(values) > SCORE_MAX_VALUES:
            raise forms.ValidationError(
                gettext("A score has at most %(n)s values.") % {"n": SCORE_MAX_VALUES}
            )
        if any(len(v) > SCORE_VALUE_CHARS for v in values):
            raise forms.ValidationError(
                gettext("A value has at most %(n)s characters.") % {"n": SCORE_VALUE_CHARS}
            )
        if len({v.lower() for v in values}) < len(values):
            raise forms.ValidationError(gettext("Each value is given once."))
        return values


class ScoreValueForm(forms.Form):
    """A press of a score's button on a session: the score and one of its values."""

    score = forms.ModelChoiceField(
        queryset=Score.objects.all(),
        error_messages={
            "invalid_choice": gettext_lazy("That score does not exist (any more): pick another.")
        },
    )
    value = forms.CharField(max_length=SCORE_VALUE_CHARS)

    def clean(self):
        data = super().clean()
        score, value = data.get("score"), data.get("value")
        if score is not None and value is not None and value not in score.values:
            raise forms.ValidationError(
                gettext("“%(value)s” is not a value of the score “%(name)s”.")
                % {"value": value, "name": score.name}
            )
        return data


class ReviewForm(forms.Form):
    """The scores a review queue collects (``review=quality``, repeatable): a session leaves the
    queue once the reviewer has given each of them (none named: any score)."""

    review = forms.ModelMultipleChoiceField(
        queryset=Score.objects.all(),
        to_field_name="name",
        required=False,
    )


def view_url_problem(url: str, visible) -> str | None:
    """Why ``url`` cannot be a saved view, or None: it must be a path of this app's pages,
    of one profile (``/p/<profile>/…``, a profile among ``visible``: the stores the user may
    see) or of the profile read when none is named."""
    if not url:
        return gettext("A saved view needs the address of a page.")
    if any(ord(c) < 32 or c == "\\" for c in url):
        return gettext("The address has characters a page address cannot have.")
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or url.startswith("//") or not url.startswith("/"):
        return gettext(
            "A saved view opens a page of the explorer: give its path (starting with one /), "
            "not another site's address."
        )
    path = parts.path
    if scoped := PREFIX.match(path):
        if stores.by_name(scoped[1], visible) is None:
            return gettext("No profile you may see is named “%(name)s”.") % {"name": scoped[1]}
        path = scoped[2]
    try:
        match = resolve(path)
    except Resolver404:
        return gettext("No page of the explorer has this address.")
    if match.namespace not in VIEW_NAMESPACES:
        return gettext(
            "Only tables, search, insights, live and failures pages can be saved as views."
        )
    return None


class SavedViewForm(_NamedForm):
    class Meta:
        model = SavedView
        fields = ["name", "url", "shared"]
        labels = {
            "name": gettext_lazy("View name"),
            "url": gettext_lazy("Page address"),
            "shared": gettext_lazy("Share with the team"),
        }

    too_long = {
        "name": gettext_lazy("A view name has at most %(n)s characters."),
        "url": gettext_lazy("A page address has at most %(n)s characters."),
    }

    def __init__(self, *args, owner, visible, **kwargs):
        super().__init__(*args, **kwargs)
        self.instance.owner = owner
        self.visible = visible

    def clean_name(self):
        name = _single_line(
            self.cleaned_data["name"], gettext("The view name must be one line of text.")
        )
        if SavedView.objects.filter(owner=self.instance.owner, name__iexact=name).exists():
            raise forms.ValidationError(
                gettext("You already have a view named “%(name)s”.") % {"name": name}
            )
        return name

    def clean_url(self):
        if problem := view_url_problem(self.cleaned_data["url"], self.visible):
            raise forms.ValidationError(problem)
        return self.cleaned_data["url"]


def _given(request, name: str) -> list[str]:
    """The first ``MAX_TAG_FILTERS`` non-blank values of a list filter, stripped."""
    return [v.strip() for v in request.GET.getlist(name) if v.strip()][:MAX_TAG_FILTERS]


def _scores_from(request, selection: Selection) -> None:
    """``score=name:value`` (``name:`` or ``name``: any value; several: all of them) and
    ``noscore=name`` (nobody scored it yet).  A score name that does not exist matches no
    session."""
    wanted, unscored = _given(request, "score"), _given(request, "noscore")
    if not wanted and not unscored:
        return
    known = {s.name.lower(): s for s in Score.objects.all()}
    for item in dict.fromkeys(wanted):
        name, _, value = item.partition(":")
        score = known.get(name.strip().lower())
        if score is None:
            selection.unknown_scores.append(name.strip()[:SCORE_NAME_CHARS])
        else:
            selection.scores.append((score, value.strip()[:SCORE_VALUE_CHARS] or None))
    for name in dict.fromkeys(unscored):
        score = known.get(name.lower())
        if score is None:
            selection.unknown_scores.append(name[:SCORE_NAME_CHARS])
        elif score not in selection.noscores:
            selection.noscores.append(score)


def selection_from(request) -> Selection:
    """The annotation filters of a session list URL: ``tag`` (several: all of them),
    ``starred=1``, ``has_note=1``, ``score=``, ``noscore=``.  A tag name nobody uses matches
    no session."""
    names = [n[:TAG_NAME_CHARS] for n in dict.fromkeys(_given(request, "tag"))]
    selection = Selection(
        starred_by=request.user if flag(request, "starred") else None,
        has_note=flag(request, "has_note"),
    )
    if names:
        known = {t.name.lower(): t for t in Tag.objects.filter(name__in=names)}
        if len(known) < len(names):
            for tag in Tag.objects.all():
                known.setdefault(tag.name.lower(), tag)
        for name in names:
            tag = known.get(name.lower())
            if tag is None:
                selection.unknown_tags.append(name)
            elif tag not in selection.tags:
                selection.tags.append(tag)
    _scores_from(request, selection)
    return selection
