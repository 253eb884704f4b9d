"""What a new process would otherwise build on its first request, built once at start.

The WSGI entry point calls :func:`warm`, and gunicorn loads it once in its master before
forking the workers (``preload_app``).  What belongs to one process (connections, cache
clients) is not made here, or is closed before the fork.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from django.conf import settings
from django.conf.urls.i18n import is_language_prefix_patterns_used
from django.contrib.staticfiles.storage import staticfiles_storage
from django.core.cache import caches
from django.db import DatabaseError, connections, router
from django.forms.renderers import get_default_renderer
from django.template import TemplateDoesNotExist, TemplateSyntaxError, engines
from django.template.loader_tags import ExtendsNode, IncludeNode
from django.urls import URLResolver, get_resolver
from django.urls.resolvers import get_ns_resolver
from django.utils import formats, timezone, translation
from django.utils.module_loading import import_string

from . import stores

TEMPLATE_SUFFIXES = (".html", ".txt")


def warm() -> None:
    """Build the process-wide state every page uses; leave no connection open."""
    try:
        for code, _name in settings.LANGUAGES:
            with translation.override(code):
                # The catalog, the formats and the URL tables are kept per language.
                translation.check_for_language(code)
                for name in formats.FORMAT_SETTINGS:
                    formats.get_format(name)
                _patterns(get_resolver())
                _reverse(get_resolver())
        is_language_prefix_patterns_used(settings.ROOT_URLCONF)
        timezone.get_default_timezone()
        _templates()
        _backends()
    finally:
        connections.close_all()


def _patterns(resolver: URLResolver) -> None:
    """Every pattern's regex (compiled on first use)."""
    for pattern in resolver.url_patterns:
        pattern.pattern.regex  # noqa: B018
        if isinstance(pattern, URLResolver):
            _patterns(pattern)


def _reverse(resolver: URLResolver, ns_pattern: str = "", converters: dict | None = None) -> None:
    """The reverse tables of the root and of each namespace, as ``reverse`` caches them."""
    resolver.reverse_dict  # noqa: B018
    for extra, sub in resolver.namespace_dict.values():
        found = {**(converters or {}), **sub.pattern.converters}
        get_ns_resolver(ns_pattern + extra, sub, tuple(found.items())).reverse_dict  # noqa: B018
        _reverse(sub, ns_pattern + extra, found)


def _templates() -> None:
    """Every template of the project's and the forms' directories, and what they extend and
    include, compiled into the cached loaders."""
    for backend in (*engines.all(), get_default_renderer().engine):
        engine = backend.engine
        waiting = [
            str(path.relative_to(folder))
            for folder in map(Path, engine.dirs)
            for path in sorted(folder.rglob("*"))
            if path.suffix in TEMPLATE_SUFFIXES
        ]
        seen: set[str] = set()
        while waiting:
            name = waiting.pop()
            if name in seen:
                continue
            seen.add(name)
            try:
                template = engine.get_template(name)
            except (TemplateDoesNotExist, TemplateSyntaxError):
                continue  # reported by the page that renders it, as before
            for node in template.nodelist.get_nodes_by_type((ExtendsNode, IncludeNode)):
                named = node.parent_name if isinstance(node, ExtendsNode) else node.template
                if isinstance(named.var, str):
                    waiting.append(str(named.var))


def _backends() -> None:
    """The database, cache, session and static-file machinery set up; each store's shape read."""
    router.routers  # noqa: B018
    stores.REGISTRY.stores()  # each profile's alias
    for alias in connections:
        connection = connections[alias]
        connection.ops.compiler("SQLCompiler")
        shape = getattr(connection, "hermes_shape_now", None)
        if shape is not None:
            # A store missing now is reported by the first page that reads it.
            with contextlib.suppress(DatabaseError, OSError):
                shape()
    for alias in caches:
        caches[alias]  # noqa: B018
    staticfiles_storage.location  # noqa: B018 (loads the manifest of hashed names)
    for engine in engines.all():
        engine.engine.template_context_processors  # noqa: B018
    import_string(f"{settings.SESSION_ENGINE}.SessionStore")
    import_string(settings.SESSION_SERIALIZER)
    import_string(settings.MESSAGE_STORAGE)
