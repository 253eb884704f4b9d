"""Template tags: the annotations panel of a session page, tag chips, saved views in the
navigation.  Each reads the app's database only; none touches the state.db."""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import ngettext

from hermes_explorer import stores
from profiles_app.links import in_store
from sessions_app.formatting import per_language

from .. import permissions, selectors
from ..models import Note, Tag
from ..targets import current_store

register = template.Library()


@register.inclusion_tag("annotations_app/_session_panel.html", takes_context=True)
def session_annotations(context, session_id: str):
    request = context["request"]
    user = request.user
    found = selectors.for_sessions([session_id], user).get(session_id, selectors.NONE)
    written = Note.objects.filter(target__store=current_store(), target__session_id=session_id)
    notes = [
        (note, permissions.can_edit_note(user, note), permissions.can_delete_note(user, note))
        for note in written
    ]
    annotate = permissions.can_annotate(user)
    have = {t.pk for t in found.tags}
    return {
        "request": request,
        "session_id": session_id,
        "found": found,
        "notes": notes,
        "can_annotate": annotate,
        "addable": [t for t in Tag.objects.all() if t.pk not in have] if annotate else [],
        "can_manage_tags": permissions.can_manage_tags(user),
        "scores": selectors.session_scores(session_id, user),
    }


def tag_chips(tags) -> str:
    return format_html_join(
        " ",
        '<span class="badge tag tag-{}" title="{}">{}</span>',
        ((t.colour, t.description or t.name, t.name) for t in tags),
    )


@register.inclusion_tag("annotations_app/_nav_views.html", takes_context=True)
def saved_views_nav(context):
    request = context.get("request")
    # The page's URL is read from the Referer, not written in: a page looks the same whatever
    # its query string.
    own, shared = selectors.views_for(
        getattr(request, "user", None), getattr(request, "visible_stores", ())
    )
    return {"own": own, "shared": shared}


@register.inclusion_tag("annotations_app/_save_view.html", takes_context=True)
def save_view_form(context):
    """ "Save this view as [name]", on every page that can be saved."""
    from ..forms import VIEW_NAMESPACES

    request = context.get("request")
    match = getattr(request, "resolver_match", None)
    user = getattr(request, "user", None)
    shown = (
        match is not None
        and match.namespace in VIEW_NAMESPACES
        and match.url_name in ("list", "results", "index")
        and user is not None
        and user.is_authenticated
    )
    return {"shown": shown}  # an inclusion tag copies the CSRF token over itself


@register.simple_tag(takes_context=True)
def review_queue(context, stores=None):
    """The form that starts a review of the current list: the list's query string as hidden
    fields, the scores chosen to collect (``review=``), and ``/review/next/`` (of each of
    ``stores`` for a list over several profiles)."""
    from ..review import list_params

    params = list_params(context["request"])
    chosen = params.pop("review", [])
    return {
        "action": in_store(reverse("review:next")),
        "hidden": [(key, value) for key, values in params.lists() for value in values],
        "chosen": chosen,
        "stores": [(s.name, in_store(reverse("review:next"), s)) for s in stores or ()],
    }


@register.simple_tag
def note_indicator(count: int):
    if not count:
        return ""
    return format_html(
        '<span class="badge note-count" title="{}">✎ {}</span>', _note_count(count), count
    )


@per_language
def _note_count(count: int) -> str:
    return ngettext("%(count)s note", "%(count)s notes", count) % {"count": count}


@register.simple_tag
def hit_session_tags(result):
    """``{session id: tag badges}`` for every hit of a search result, one query per profile
    (keyed ``(profile, session id)`` over several)."""
    by_store: dict = {}
    for hit in result.hits + result.unindexed_hits:
        by_store.setdefault(getattr(hit, "store", None), []).append(hit.session_id)
    out: dict = {}
    for store, ids in by_store.items():
        # A search over several profiles: each profile's tags, keyed as the hits look them up.
        with stores.using(store):
            tags = selectors.tags_by_session(ids)
        for sid, found in tags.items():
            out[(store.name, sid) if store is not None else sid] = tag_chips(found)
    return out
