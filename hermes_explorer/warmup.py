"""What a web worker does once as it starts instead of in its first requests.

Django fills its URL resolvers on the first ``reverse()`` (one per namespace and language)
and compiles each template the first time it is rendered (then keeps it, with the cached
template loader).  On pages that link hundreds of rows and include a dozen templates, that is a
tenth of a second or more added to the first view of each page after every restart, in every
worker.  :func:`warm_up` does both ahead of time; it reads nothing from any database.  It
also keeps each template's literal translations in every language (looked up in the catalogs
on a worker's first page otherwise: 15 ms for the insights page), compiles the statement that
reads each request's session and user (the ORM's first compilation, 28 ms of any first
request).

It then moves everything loaded so far (modules, the URL map, compiled templates: objects that
live as long as the process) out of the garbage collector's reach (``gc.freeze``), so that a
full collection during a request, triggered by a big report being built or unpickled from the
cache, does not walk them all again (it cost 0.1–0.2 s on the second insights view).
"""

from __future__ import annotations

import gc
import logging
from importlib import import_module
from pathlib import Path

from django.conf import settings
from django.db import connections
from django.template import TemplateDoesNotExist, TemplateSyntaxError, engines
from django.template.loader import get_template
from django.urls import NoReverseMatch, get_resolver, reverse
from django.utils import formats, translation

from hermes_explorer.i18n_tags import translate_ahead

log = logging.getLogger(__name__)


def _template_names() -> list[str]:
    names = []
    for folder in settings.TEMPLATES[0].get("DIRS", []):
        root = Path(folder)
        names += [str(p.relative_to(root)) for p in sorted(root.rglob("*.html"))]
    return names


def _load_lazy_modules() -> None:
    # What Django imports on a first request: the database backends (no connection is
    # opened), the context processors, the active language's formats.
    for alias in connections:
        connections[alias]  # noqa: B018 - the access loads the backend's module
    for engine in engines.all():
        if hasattr(engine, "engine"):
            engine.engine.template_context_processors  # noqa: B018 - imports them
    formats.get_format("DATETIME_FORMAT")


def _fill_url_resolvers() -> None:
    # Each namespace under a prefix has a resolver of its own, filled on its first reverse()
    # and per language: a name that does not exist fills it all the same.
    namespaces = list(get_resolver().namespace_dict)
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            for namespace in namespaces:
                try:
                    reverse(f"{namespace}:-")
                except NoReverseMatch:
                    pass


def _compile_session_read() -> None:
    # The statement that reads every request's session with its user, when the session
    # engine has one to compile (accounts_app.signed_in).
    store = import_module(settings.SESSION_ENGINE).SessionStore
    prepare = getattr(store, "prepare_read", None)
    if prepare is not None:
        prepare()


def warm_up() -> None:
    """Fill the URL resolvers, compile the project's templates (with their literal
    translations in every language) and the session statement; never fails a start."""
    _fill_url_resolvers()
    for name in _template_names():
        try:
            get_template(name)
        except (TemplateDoesNotExist, TemplateSyntaxError) as exc:
            log.warning("template %s not compiled ahead: %s", name, exc)
    translate_ahead([code for code, _name in settings.LANGUAGES])
    _load_lazy_modules()
    try:
        _compile_session_read()
    except Exception:  # never fails a start (an app database that is not up yet, say)
        log.warning("session statement not compiled ahead", exc_info=True)
    gc.collect()
    gc.freeze()
