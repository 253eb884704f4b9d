"""Forms of the SQL console: the query with its named parameters, and saving a query."""

from __future__ import annotations

from django import forms
from django.utils.text import slugify
from django.utils.translation import gettext, gettext_lazy, ngettext

from sessions_app.formatting import number

from .canned import CANNED_BY_SLUG
from .models import SavedQuery
from .readonly import MAX_SQL_CHARS, sql_parameters

# Query-string names the console itself uses: a parameter cannot be called one of these.
RESERVED_NAMES = frozenset({"sql", "query", "_export", "csrfmiddlewaretoken"})
MAX_PARAMETERS = 30
MAX_PARAMETER_CHARS = 10_000


class ConsoleForm(forms.Form):
    """The SQL, plus one text field per ``:name`` found in it (bound, never pasted)."""

    sql = forms.CharField(
        label="SQL",
        max_length=MAX_SQL_CHARS,
        strip=False,
        widget=forms.Textarea(
            attrs={"rows": 10, "spellcheck": "false", "class": "sql-input", "autocomplete": "off"}
        ),
    )

    def __init__(self, data=None, *, sql: str = "", **kwargs):
        super().__init__(data, **kwargs)
        self.parameter_names = sql_parameters(sql)[:MAX_PARAMETERS]
        for name in [n for n in self.parameter_names if n not in RESERVED_NAMES]:
            self.fields[name] = forms.CharField(
                label=f":{name}",
                required=False,
                strip=False,
                max_length=MAX_PARAMETER_CHARS,
                widget=forms.TextInput(attrs={"class": "sql-param", "autocomplete": "off"}),
            )

    def clean(self):
        cleaned = super().clean()
        reserved = [n for n in self.parameter_names if n in RESERVED_NAMES]
        if reserved:
            raise forms.ValidationError(
                ngettext(
                    "Rename the parameter %(names)s: the console uses these names itself.",
                    "Rename the parameters %(names)s: the console uses these names itself.",
                    len(reserved),
                )
                % {"names": ", ".join(f":{n}" for n in reserved)}
            )
        return cleaned

    @property
    def parameter_fields(self):
        return [self[name] for name in self.parameter_names if name in self.fields]

    def parameters(self) -> dict[str, str]:
        return {name: self.cleaned_data.get(name) or "" for name in self.parameter_names}

    def missing_parameters(self) -> list[str]:
        """Parameters the request did not give at all (an empty value counts as given)."""
        return [n for n in self.parameter_names if n not in self.data]


class SaveQueryForm(forms.ModelForm):
    slug = forms.SlugField(
        max_length=80,
        required=False,
        label=gettext_lazy("Slug"),
        help_text=gettext_lazy("Used in the link /sql/?query=<slug>; made from the name if empty."),
    )

    class Meta:
        model = SavedQuery
        fields = ["name", "slug", "description", "sql"]
        widgets = {
            "sql": forms.HiddenInput,
            "description": forms.Textarea(attrs={"rows": 2}),
        }
        labels = {
            "name": gettext_lazy("Name"),
            "description": gettext_lazy("Description"),
        }

    def clean_sql(self):
        sql = self.cleaned_data["sql"]  # required: never empty here
        if len(sql) > MAX_SQL_CHARS:
            raise forms.ValidationError(
                gettext("The query is longer than %(n)s characters.") % {"n": number(MAX_SQL_CHARS)}
            )
        return sql

    def clean(self):
        cleaned = super().clean()
        slug = cleaned.get("slug") or slugify(cleaned.get("name") or "")[:80]
        if not slug:
            self.add_error(
                "slug", gettext("Give the query a name or a slug made of letters and digits.")
            )
            return cleaned
        if slug in CANNED_BY_SLUG:
            self.add_error(
                "slug", gettext("A query that ships with the console already uses this slug.")
            )
        elif SavedQuery.objects.filter(slug=slug).exclude(pk=self.instance.pk).exists():
            self.add_error("slug", gettext("A saved query already uses this slug."))
        cleaned["slug"] = slug
        return cleaned
