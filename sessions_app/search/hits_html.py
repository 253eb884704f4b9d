"""Search hits as HTML (``<li class="hit">``), built in Python.

Through templates (per hit, per copy button, two ``reverse()`` per link) hits were a third of
the results page (measured).  Values are escaped once here; the snippet arrives as safe,
redacted HTML (:mod:`.snippets`).
"""

from __future__ import annotations

from html import escape

from django.utils.safestring import SafeString, mark_safe
from django.utils.text import slugify
from django.utils.translation import gettext

from ..formatting import per_language
from ..links import TranscriptLinks
from ..templatetags.explorer import role_labels, text_html, time_html


@per_language
def hit_words() -> dict:
    """What every hit repeats, in the page's language (escaped, looked up once per language)."""
    return {
        "not_live": escape(gettext("Not part of the live transcript")),
        "copy_id": escape(gettext("Copy message id")),
        "copy": escape(gettext("Copy")),
        "profile": escape(gettext("Profile")),
        "no_snippet": '<span class="muted">'
        + escape(gettext("(the match is in the tool call or tool name)"))
        + "</span>",
        "labels": role_labels(),
    }


_v = text_html


def hit_html(hit, links: TranscriptLinks, badges: dict | None, words: dict) -> str:
    roles, visibilities = words["labels"]
    store = hit.store
    url = links.message(hit.session_id, hit.id, store)
    untitled = f'<span class="untitled">{_v(hit.session_id)}</span>'
    if url:
        label = _v(hit.title) if hit.title else untitled
        head = f'<a class="hit-link" href="{_v(url)}">{label}</a>'
    else:
        head = untitled
    source = (
        f'<span class="badge source source-{slugify(str(hit.source))}">{_v(hit.source)}</span>'
        if hit.source
        else ""
    )
    # Only a search over several profiles gives its hits a store.
    profile = (
        f'<span class="badge profile" title="{words["profile"]}">{_v(store.name)}</span>\n    '
        if store is not None
        else ""
    )
    # A session's badge is keyed by its id, or (profile, id) over profiles.
    key = hit.session_id if store is None else (store.name, hit.session_id)
    badge = badges.get(key) if badges else None
    tool = f'<span class="tool-name">{_v(hit.tool_name)}</span>' if hit.tool_name else ""
    visibility = (
        f'<span class="badge warn" title="{words["not_live"]}">'
        f"{_v(visibilities.get(hit.visibility, hit.visibility))}</span>"
        if hit.visibility != "live"
        else ""
    )
    when = _v(time_html(hit.timestamp)) if hit.timestamp is not None else ""
    mid = _v(hit.id)
    return (
        f'<li class="hit role-{slugify(str(hit.role))}">\n  <div class="hit-head">\n    {head}\n'
        f"    {profile}{source}\n"
        + (f"    {badge}\n" if badge else "")
        + f'    <span class="role">{_v(roles.get(hit.role, hit.role) or "—")}</span>\n'
        f"    {tool}\n    {visibility}\n    {when}\n"
        f'    <span class="muted copy-id">#{mid} <button type="button" class="copy" '
        f'data-copy="{mid}" aria-label="{words["copy_id"]} {mid}" title="{words["copy_id"]}">'
        f"{words['copy']}</button>\n</span>\n  </div>\n"
        f'  <p class="snippet">{_v(hit.snippet) if hit.snippet else words["no_snippet"]}</p>\n'
        "</li>\n"
    )


def hits_html(hits, badges: dict | None = None) -> SafeString:
    """``badges``: the team's tags (safe HTML) after each hit's source, by session."""
    links = TranscriptLinks()
    words = hit_words()
    return mark_safe("".join(hit_html(hit, links, badges, words) for hit in hits))  # noqa: S308 - escaped
