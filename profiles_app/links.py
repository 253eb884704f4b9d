"""Links that name the store: ``/p/<profile>/sessions/<id>/`` when several stores are served
(under ``/p/<profile>/`` the script prefix already carries it), ``/sessions/<id>/`` otherwise.
"""

from __future__ import annotations

from urllib.parse import quote

from django.urls import get_script_prefix, reverse

from hermes_explorer import store as one_store
from hermes_explorer import stores as registry
from hermes_explorer.stores import Store


def in_store(url: str, store: Store | None = None) -> str:
    """``url`` (built by ``reverse``) made to address ``store`` (default: the current one)."""
    if not registry.multi():
        return url
    store = store or registry.current()
    if store is None:
        return url
    base = get_script_prefix()
    head, sep, scope = base.rstrip("/").rpartition("/p/")
    if sep and scope and "/" not in scope:
        # Under ``p/<profile>/`` already: the link is made again from the prefix before it.
        if scope == store.name:
            return url
        url, base = head + "/" + url[len(base) :], head + "/"
    if not url.startswith(base):
        return url
    return f"{base}p/{quote(store.name, safe='')}/{url[len(base) :]}"


def store_reverse(viewname: str, args=(), store: Store | None = None) -> str:
    return in_store(reverse(viewname, args=list(args)), store)


def store_key() -> str:
    """The store read now as annotations and joined ids name it: its profile name when
    several are served (they follow a moved file), else the file's name."""
    current = registry.current() if registry.multi() else None
    return current.name if current is not None else one_store.name()
