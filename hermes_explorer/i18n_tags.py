"""The ``i18n`` template library every template loads: Django's, with a literal
``{% translate "…" %}`` looked up once per language.

Django's ``{% translate %}`` builds a lazy string, asks the active language (a thread-and-task
local) and searches the catalog on every render: a few microseconds each, and a page's chrome
alone has a few dozen of them.  A translation of a literal message depends only on the
language, the message context and whether the output is autoescaped, so
:class:`LiteralTranslateNode` keeps each result per language (the language of the page, as
:func:`sessions_app.formatting.language` gives it) and renders it again with a dict lookup.
A message from a variable or with filters renders the stock way.

``{% language %}`` also records its language where ``formatting.language()`` reads it, so the
kept translations and the number formats inside such a block follow it.  The settings map the
``i18n`` label to this module (``TEMPLATES[…]["OPTIONS"]["libraries"]``) and name
:class:`Templates` as the backend, whose check of duplicate library labels expects that one;
every other tag and filter is Django's own.
"""

from __future__ import annotations

import weakref

from django.dispatch import receiver
from django.template import Context, Library, Variable
from django.template.backends.django import DjangoTemplates
from django.template.base import render_value_in_context
from django.templatetags import i18n as django_i18n
from django.utils import translation
from django.utils.autoreload import file_changed
from django.utils.safestring import SafeString

from sessions_app.formatting import REQUEST_LANGUAGE, language

register = Library()
register.tags.update(django_i18n.register.tags)
register.filters.update(django_i18n.register.filters)

# Every node that keeps translations, emptied when a compiled catalog changes under the
# development server's reloader (Django then drops its own catalogs too).
_KEEPING: weakref.WeakSet = weakref.WeakSet()


def _literal(expression) -> bool:
    """Whether a compiled ``FilterExpression`` is a plain string literal (no variable, no filter)."""
    if expression.filters:
        return False
    var = expression.var
    return isinstance(var, str) or (isinstance(var, Variable) and var.lookups is None)


class LiteralTranslateNode(django_i18n.TranslateNode):
    """``{% translate "literal" [context "literal"] [noop] [as var] %}``, translated once per
    language and autoescape setting."""

    def __init__(self, filter_expression, noop, asvar=None, message_context=None):
        super().__init__(filter_expression, noop, asvar, message_context)
        self.kept: dict[tuple[str, bool], str] = {}
        _KEEPING.add(self)

    def render(self, context):
        key = (language(), context.autoescape)
        try:
            value = self.kept[key]
        except KeyError:
            value = self.kept[key] = self._translate(key[0], context)
        if self.asvar:
            context[self.asvar] = value
            return ""
        return value

    def translate_ahead(self, lang: str) -> None:
        """Keep this node's autoescaped translation in ``lang`` before any page needs it."""
        key = (lang, True)
        if key not in self.kept:
            self.kept[key] = self._translate(lang, Context(autoescape=True))

    def _translate(self, lang: str, context) -> str:
        with translation.override(lang):
            if not self.asvar:
                return super().render(context)
            # Django's render stores the value under ``asvar``: keep it in a layer of its own.
            with context.push():
                super().render(context)
                return context[self.asvar]


@register.tag("translate")
@register.tag("trans")
def do_translate(parser, token):
    node = django_i18n.do_translate(parser, token)
    if not _literal(node.filter_expression) or (
        node.message_context is not None and not _literal(node.message_context)
    ):
        return node
    return LiteralTranslateNode(node.filter_expression, node.noop, node.asvar, node.message_context)


class LiteralBlockTranslateNode(django_i18n.BlockTranslateNode):
    """``{% blocktranslate [with …] [context "literal"] [trimmed] [asvar …] %}`` without a
    plural: the message (its text with ``%(name)s`` slots) is built and translated once per
    language; the values are rendered into it on every render.  A value missing from the
    context or a translation whose slots do not match renders the stock way."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.kept: dict[str, tuple[str, list[str]]] = {}
        _KEEPING.add(self)

    def translate_ahead(self, lang: str) -> None:
        """Keep this node's message in ``lang`` before any page needs it."""
        if lang not in self.kept:
            self.kept[lang] = self._message(lang)

    def _message(self, lang: str) -> tuple[str, list[str]]:
        text, names = self.render_token_list(self.singular)
        with translation.override(lang):
            if self.message_context is None:
                return translation.gettext(text), names
            return translation.pgettext(self.message_context.var, text), names

    def render(self, context, nested=False):
        lang = language()
        try:
            message, names = self.kept[lang]
        except KeyError:
            message, names = self.kept[lang] = self._message(lang)
        context.update({name: value.resolve(context) for name, value in self.extra_context.items()})
        try:
            if not all(name in context for name in names):
                data = None
            else:
                data = {name: render_value_in_context(context[name], context) for name in names}
        finally:
            context.pop()
        if data is not None:
            try:
                result = message % data
            except (KeyError, ValueError):
                data = None
        if data is None:
            return super().render(context, nested)
        if self.asvar:
            context[self.asvar] = SafeString(result)
            return ""
        return result


@register.tag("blocktranslate")
@register.tag("blocktrans")
def do_block_translate(parser, token):
    node = django_i18n.do_block_translate(parser, token)
    context_name = node.message_context
    if node.plural or (
        context_name is not None and (context_name.filters or not isinstance(context_name.var, str))
    ):
        return node
    return LiteralBlockTranslateNode(
        node.extra_context,
        node.singular,
        node.plural,
        node.countervar,
        node.counter,
        node.message_context,
        trimmed=node.trimmed,
        asvar=node.asvar,
        tag_name=node.tag_name,
    )


class LanguageNode(django_i18n.LanguageNode):
    """``{% language %}``: Django's, with the page's language for the formatting functions
    (and the kept translations) switched for the block as well."""

    def render(self, context):
        code = self.language.resolve(context)
        token = REQUEST_LANGUAGE.set(code)
        try:
            with translation.override(code):
                return self.nodelist.render(context)
        finally:
            REQUEST_LANGUAGE.reset(token)


@register.tag("language")
def do_language(parser, token):
    node = django_i18n.language(parser, token)
    return LanguageNode(node.nodelist, node.language)


def translate_ahead(languages) -> None:
    """Keep, in every node compiled so far, its translation in each of ``languages``: what a
    worker's first page would otherwise look up in the catalogs (15 ms for the insights page)."""
    for node in list(_KEEPING):
        for lang in languages:
            node.translate_ahead(lang)


@receiver(file_changed, dispatch_uid="hermes_explorer.i18n_tags.catalog_changed")
def _catalog_changed(sender, file_path, **kwargs):
    if file_path.suffix == ".mo":
        for node in list(_KEEPING):
            node.kept.clear()


# The one label this module takes over on purpose, as Django's check words it.
EXPECTED_DUPLICATE = (
    "'i18n' is used for multiple template tag modules: "
    "'django.templatetags.i18n', 'hermes_explorer.i18n_tags'"
)


class Templates(DjangoTemplates):
    """Django's template backend, whose warning about a library label used by two modules
    leaves out the ``i18n`` label mapped to this module (any other duplicate still warns)."""

    def _check_for_template_tags_with_the_same_name(self):
        found = super()._check_for_template_tags_with_the_same_name()
        return [warning for warning in found if warning.msg != EXPECTED_DUPLICATE]
