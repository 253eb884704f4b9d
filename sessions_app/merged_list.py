"""The session and message tables over every profile the user may see (or ``?profile=…``),
when several stores are served and the URL has no ``/p/<profile>/``: merged in the list's
order (:mod:`profiles_app.merge`), counts summed and capped, a failing store named in a note.
"""

from __future__ import annotations

import contextlib
import sqlite3

import django_tables2 as tables
from django.db import DatabaseError
from django.utils.translation import gettext, gettext_lazy

from hermes_explorer import store as one_store
from hermes_explorer import stores as registry
from hermes_explorer.hermes_db.deadline import QueryTimeout, query_budget
from hermes_explorer.stores import Store
from profiles_app import merge
from profiles_app.access import for_request

from .models import Session
from .selectors import COUNT_CAP, CappedCount


def requested_profiles(request) -> list[str]:
    names = (n.strip() for value in request.GET.getlist("profile") for n in value.split(","))
    return list(dict.fromkeys(n for n in names if n))


def chosen_stores(request, notes: list[str] | None = None) -> list[Store] | None:
    """The stores a page without ``/p/…`` spans; None when it reads one store as always."""
    if getattr(request, "store_scoped", False) or not registry.multi():
        return None
    visible = for_request(request)
    names = requested_profiles(request)
    if not names:
        return list(visible)
    known = {s.name for s in visible}
    for name in names:
        if name not in known and notes is not None:
            # A hidden profile and a missing one read the same.
            notes.append(gettext("No profile named “%(name)s”.") % {"name": name})
    return [s for s in visible if s.name in names]


def find_session(session_id: str, parts: list[Store] | None):
    """The session in the first store of ``parts`` (None: current) that has it, with ``store``."""
    for part in parts or [None]:
        with registry.using(part):
            found = (
                Session.objects.only_readable("id", "title", "source").filter(pk=session_id).first()
            )
        if found is not None:
            found.store = part
            return found
    return None


@contextlib.contextmanager
def store_trouble(store: Store, budget: float | None, notes: list[str]):
    """A store out of time or broken is named in ``notes``."""
    try:
        with query_budget(budget):
            yield
    except QueryTimeout:
        if budget is None:
            raise
        notes.append(
            gettext("Profile %(profile)s ran out of time for this filter.")
            % {"profile": store.name}
        )
    except (DatabaseError, sqlite3.Error) as exc:
        failure = registry.REGISTRY.failed(store, exc)
        notes.append(registry.unavailable_note(store, failure.reason))


def profile_column() -> tuple[str, tables.Column]:
    return (
        "profile",
        tables.Column(accessor="store_name", verbose_name=gettext_lazy("Profile"), orderable=False),
    )


class KeyRow(dict):
    """A row's keys and primary key as the merge sees them (a dict that takes a ``store``)."""


def _layout(shape) -> tuple:
    """What a filterset depends on in a file's shape."""
    return tuple(sorted(shape.columns.items()))


class MergedListMixin:
    """Each store gives the keys of a page, the merge picks the page and only its rows are read
    in full; stores of the same layout share one validated filterset."""

    merged_parts: list[Store] | None = None

    def _fill_page(self) -> None:
        parts = chosen_stores(self.request, self.notes)
        if parts is None:
            return super()._fill_page()
        self.merged_parts = parts
        per_page = self.get_per_page()
        counts: list[CappedCount] = []
        failed: set[str] = set()
        budget = self.page_budget
        default_shape = self.shape
        filtersets = {_layout(default_shape): self.filterset}
        # What the table shows, built once per layout and read from each store by its alias.
        shown: dict[tuple, object] = {}

        def fetch(store: Store, bound, forward: bool, limit: int) -> list:
            if store.name in failed:
                return []
            with store_trouble(store, budget, self.notes):
                self.shape = one_store.shape()
                if self.sort not in self.get_sorts():
                    self.notes.append(
                        gettext("Profile %(profile)s cannot be ordered this way: left out.")
                        % {"profile": store.name}
                    )
                    failed.add(store.name)
                    return []
                layout = _layout(self.shape)
                filterset = filtersets.get(layout)
                if filterset is None:
                    filterset = filtersets[layout] = self.get_filterset(self.get_filterset_class())
                if not filterset.is_valid():
                    return []
                filtered = filterset.filter_queryset(filterset.queryset.all())
                count = self.get_count(filtered)
                if count is not None:
                    counts.append(count)
                qs = self.key_queryset(filtered)
                if bound is not None:
                    qs = qs.filter(bound)
                order = self.keyset.order_by(reverse=not forward)
                keys = qs.order_by(*order).values(*(k for k, _ in self.keyset.keys), "pk")[:limit]
                return [KeyRow(row) for row in keys]
            failed.add(store.name)
            return []

        def load(store: Store, rows: list) -> list:
            wanted = [row["pk"] for row in rows]
            # The rows were chosen by the filters already: only what the table shows is added.
            layout = _layout(one_store.shape())
            if layout not in shown:
                shown[layout] = self.rows_queryset()
            qs = shown[layout].using(store.alias).filter(pk__in=wanted)
            found = {}
            # Out of time or broken since its keys were read: its rows are left out.
            with store_trouble(store, budget, self.notes):
                found = {row.pk: row for row in qs}
            return [found.get(pk) for pk in wanted]

        try:
            self.page = merge.paginate(
                self.keyset, parts, fetch, self.request.GET.get("cursor"), per_page, load=load
            )
        finally:
            self.shape = default_shape
        if counts:
            total = sum(c.value for c in counts)
            capped = total > COUNT_CAP or any(c.capped for c in counts)
            self.count = CappedCount(max(total, COUNT_CAP + 1) if capped else total, capped)

        def prepare(store: Store, chunk: list) -> list:
            prepared = self.prepare_rows(chunk)
            for row in prepared:
                row.store, row.store_name = store, store.name
            return prepared

        # ``prepare_rows`` on each store's rows, reading that store; the order kept.
        self.rows = registry.per_store(self.page.rows, prepare)
        self.notes.extend(self.page.notes)

    def get_table_kwargs(self):
        kwargs = super().get_table_kwargs()
        if self.merged_parts is not None:
            kwargs["extra_columns"] = [profile_column()]
            kwargs["sequence"] = ("profile", "...")
        return kwargs

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["merged_profiles"] = self.merged_parts
        context["chosen_profiles"] = requested_profiles(self.request)
        return context
