"""Pages and form posts of the annotations.  Every change is a CSRF-checked POST answered with
a redirect (no JavaScript needed), allowed by :mod:`.permissions`, audited by :mod:`.services`.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext, ngettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts_app.middleware import forbidden
from sessions_app.views.sessions import session_context

from . import permissions, review, selectors, services, targets
from .forms import (
    AddTagForm,
    BulkTagForm,
    NoteForm,
    SavedViewForm,
    ScoreForm,
    ScoreValueForm,
    TagForm,
    view_url_problem,
)
from .models import AnnotatedSession, Note, SavedView, Score, Tag
from .permissions import ANNOTATE, MANAGE_TAGS, requires

annotate, manage = requires(ANNOTATE), requires(MANAGE_TAGS)
NOTE = ("note_id", Note.objects.select_related("target"))
ORPHANS_PER_PAGE = 50
ORPHAN_CHECK_LIMIT = 5_000


def _back(request, fallback: str) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if (
        target.startswith("/")
        and not target.startswith("//")
        and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()})
    ):
        return target
    return fallback


def _refused(request, form, back: str):
    """Back to ``back``, the form's errors said in a message."""
    messages.error(request, " ".join(e for errors in form.errors.values() for e in errors))
    return redirect(back)


def _page(request, template: str, context: dict):
    """The page; a 400 when it answers a refused post."""
    return render(request, template, context, status=400 if request.method == "POST" else 200)


def _session_url(session_id: str) -> str:
    return reverse("sessions:detail", args=[session_id]) + "#annotations"


def _target_or_404(session_id: str) -> AnnotatedSession:
    target = targets.target_for(session_id)
    if target is None:
        raise Http404(gettext("No session with this id in the state.db."))
    return target


@require_POST
def star(request, session_id: str):
    starred = services.toggle_star(request, _target_or_404(session_id))
    messages.success(request, gettext("Starred.") if starred else gettext("Star removed."))
    return redirect(_back(request, _session_url(session_id)))


@require_POST
@annotate
def add_tag(request, session_id: str):
    form = AddTagForm(request.POST)
    if not form.is_valid():
        return _refused(request, form, _back(request, _session_url(session_id)))
    tag = form.cleaned_data["tag"]
    if services.add_tag(request, [_target_or_404(session_id)], tag):
        messages.success(request, gettext("Tagged “%(name)s”.") % {"name": tag.name})
    else:
        messages.info(
            request, gettext("The session already has the tag “%(name)s”.") % {"name": tag.name}
        )
    return redirect(_back(request, _session_url(session_id)))


@require_POST
@manage
def add_new_tag(request, session_id: str):
    """The tag of that name, made when staff tag with a new name."""
    target = _target_or_404(session_id)
    name = request.POST.get("name", "").strip()
    tag = Tag.objects.filter(name__iexact=name).first() if name else None
    if tag is None:
        form = TagForm({"name": name, "colour": "grey", "description": ""})
        if not form.is_valid():
            return _refused(request, form, _session_url(session_id))
        tag = form.instance
        services.save_tag(request, tag, created=True)
    services.add_tag(request, [target], tag)
    messages.success(request, gettext("Tagged “%(name)s”.") % {"name": tag.name})
    return redirect(_session_url(session_id))


@require_POST
@annotate
def remove_tag(request, session_id: str, tag_id: int):
    target = AnnotatedSession.objects.filter(
        store=targets.current_store(), session_id=session_id
    ).first()
    tag = Tag.objects.filter(pk=tag_id).first()
    if target is not None and tag is not None and services.remove_tag(request, target, tag):
        messages.success(request, gettext("Tag “%(name)s” removed.") % {"name": tag.name})
    return redirect(_back(request, _session_url(session_id)))


@require_POST
@annotate
def bulk_tag(request):
    back = _back(request, reverse("sessions:list"))
    form = BulkTagForm(request.POST)
    if not form.is_valid():
        return _refused(request, form, back)
    tag = form.cleaned_data["tag"]
    found = targets.targets_for(form.cleaned_data["session"])
    added = services.add_tag(request, list(found.values()), tag)
    missing = len(form.cleaned_data["session"]) - len(found)
    text = ngettext(
        "Tagged %(count)s session “%(name)s”.", "Tagged %(count)s sessions “%(name)s”.", added
    ) % {"count": added, "name": tag.name}
    if missing:
        text += " " + ngettext(
            "%(count)s selected session is not in the store.",
            "%(count)s selected sessions are not in the store.",
            missing,
        ) % {"count": missing}
    messages.success(request, text)
    return redirect(back)


@require_POST
@annotate
def add_note(request, session_id: str):
    target = _target_or_404(session_id)
    form = NoteForm(request.POST)
    if not form.is_valid():
        return _note_form(request, form, session_id, None)
    services.add_note(request, target, form.cleaned_data["text"])
    messages.success(request, gettext("Note added."))
    return redirect(_session_url(session_id))


@require_http_methods(["GET", "POST"])
@requires(ANNOTATE, permissions.can_edit_note, NOTE)
def edit_note(request, note: Note):
    session_id = note.target.session_id
    form = NoteForm(request.POST or None, initial={"text": note.text})
    if request.method == "POST" and form.is_valid():
        services.edit_note(request, note, form.cleaned_data["text"])
        messages.success(request, gettext("Note saved."))
        return redirect(_session_url(session_id))
    return _note_form(request, form, session_id, note)


def _note_form(request, form, session_id: str, note: Note | None):
    context = {"form": form, "session_id": session_id, "note": note}
    return _page(request, "annotations_app/note_form.html", context)


@require_POST
@requires(ANNOTATE, permissions.can_delete_note, NOTE)
def delete_note(request, note: Note):
    session_id = note.target.session_id
    services.delete_note(request, note)
    messages.success(request, gettext("Note deleted."))
    return redirect(_session_url(session_id))


# The tag vocabulary --------------------------------------------------------------------------
def _vocabulary(request, form_class, save, created: str, done: str, template: str, facets):
    """A list of tags or scores, with the form that adds one (staff only)."""
    manage = permissions.can_manage_tags(request.user)
    form = form_class(request.POST or None) if manage else None
    if request.method == "POST":
        if not manage:
            return forbidden(request, MANAGE_TAGS)
        if form.is_valid():
            save(request, form.instance, created=True)
            messages.success(request, created % {"name": form.instance.name})
            return redirect(done)
    return _page(request, template, {"facets": facets(), "form": form, "can_manage": manage})


@require_http_methods(["GET", "POST"])
def tag_list(request):
    return _vocabulary(
        request,
        TagForm,
        services.save_tag,
        gettext("Tag “%(name)s” created."),
        "annotations:tags",
        "annotations_app/tag_list.html",
        selectors.tag_facets,
    )


@require_http_methods(["GET", "POST"])
@manage
def tag_edit(request, tag_id: int):
    tag = get_object_or_404(Tag, pk=tag_id)
    form = TagForm(request.POST or None, instance=tag)
    if request.method == "POST" and form.is_valid():
        services.save_tag(request, form.instance, created=False)
        messages.success(request, gettext("Tag “%(name)s” saved.") % {"name": tag.name})
        return redirect("annotations:tags")
    return _page(request, "annotations_app/tag_form.html", {"form": form, "tag": tag})


@require_POST
@manage
def tag_delete(request, tag_id: int):
    tag = get_object_or_404(Tag, pk=tag_id)
    services.delete_tag(request, tag)
    messages.success(request, gettext("Tag “%(name)s” deleted.") % {"name": tag.name})
    return redirect("annotations:tags")


# Saved views ----------------------------------------------------------------------------------
@require_http_methods(["GET", "POST"])
def view_list(request):
    if request.method == "POST":
        data = request.POST.copy()
        # The one-step form names the view only: the page is the one it was sent from.
        from_page = "url" not in data
        if from_page:
            data["url"] = _referring_view(request)
        form = SavedViewForm(data, owner=request.user, visible=request.visible_stores)
        if form.is_valid():
            services.save_view(request, form.instance)
            messages.success(
                request, gettext("View “%(name)s” saved.") % {"name": form.instance.name}
            )
            return redirect(form.instance.url if from_page else "annotations:views")
    else:
        form = SavedViewForm(
            owner=request.user,
            visible=request.visible_stores,
            initial={"url": _referring_view(request)},
        )
    own, shared = selectors.views_for(request.user, request.visible_stores)
    context = {"form": form, "own": own, "shared": shared}
    return _page(request, "annotations_app/view_list.html", context)


def _referring_view(request) -> str:
    """The path and query of the saveable page of this site that linked here, else ``?url=``."""
    wanted = request.GET.get("url", "")
    if not wanted:
        referer = urlsplit(request.META.get("HTTP_REFERER", ""))
        if referer.netloc == request.get_host():
            wanted = referer.path + (f"?{referer.query}" if referer.query else "")
    return wanted if view_url_problem(wanted, request.visible_stores) is None else ""


@require_POST
@requires(MANAGE_TAGS, permissions.can_delete_view, ("view_id", SavedView.objects))
def view_delete(request, view: SavedView):
    services.delete_view(request, view)
    messages.success(request, gettext("View “%(name)s” deleted.") % {"name": view.name})
    return redirect("annotations:views")


# Annotations whose session has left the store -------------------------------------------------
@require_GET
def orphans(request):
    """Annotated sessions the state.db no longer has, checked ``ORPHAN_CHECK_LIMIT`` at a time,
    newest first; ``?after=`` goes on from the last one checked."""
    anchors = AnnotatedSession.objects.filter(store=targets.current_store()).order_by("-pk")
    after = request.GET.get("after", "")
    if after.isdigit():
        anchors = anchors.filter(pk__lt=int(after))
    checked = list(anchors.values_list("pk", "session_id")[:ORPHAN_CHECK_LIMIT])
    present = targets.sessions_in_store(sid for _, sid in checked)
    gone_pks = [pk for pk, sid in checked if sid not in present][:ORPHANS_PER_PAGE]
    rows = list(
        AnnotatedSession.objects.filter(pk__in=gone_pks)
        .prefetch_related("tags__tag", "notes", "scores__score")
        .order_by("-pk")
    )
    more = len(checked) == ORPHAN_CHECK_LIMIT or len(gone_pks) == ORPHANS_PER_PAGE
    last = rows[-1].pk if len(gone_pks) == ORPHANS_PER_PAGE else (checked[-1][0] if checked else 0)
    return render(
        request,
        "annotations_app/orphan_list.html",
        {"rows": rows, "next_after": last if more else None, "checked": len(checked)},
    )


# Scores and review queues ---------------------------------------------------------------------
@require_http_methods(["GET", "POST"])
def score_list(request):
    return _vocabulary(
        request,
        ScoreForm,
        services.save_score,
        gettext("Score “%(name)s” created."),
        "review:scores",
        "annotations_app/score_list.html",
        lambda: selectors.score_facets([targets.current_store()]),
    )


@require_POST
@manage
def score_delete(request, score_id: int):
    score = get_object_or_404(Score, pk=score_id)
    if not permissions.can_delete_score(request, score):
        raise PermissionDenied  # it was given in a profile they cannot see
    services.delete_score(request, score)
    messages.success(request, gettext("Score “%(name)s” deleted.") % {"name": score.name})
    return redirect("review:scores")


@require_POST
@annotate
def score_session(request, session_id: str):
    """A press of a score's button: the user's value (pressed again: cleared)."""
    back = _back(request, reverse("sessions:detail", args=[session_id]) + "#scores")
    form = ScoreValueForm(request.POST)
    if not form.is_valid():
        return _refused(request, form, back)
    score, value = form.cleaned_data["score"], form.cleaned_data["value"]
    now = services.press_score(request, _target_or_404(session_id), score, value)
    if now is None:
        text = gettext("Score “%(name)s” cleared.")
    else:
        text = gettext("Scored “%(name)s”: %(value)s.")
    messages.success(request, text % {"name": score.name, "value": value})
    return redirect(back)


def _with_query(url: str, params) -> str:
    query = params.urlencode()
    return url + (f"?{query}" if query else "")


@require_GET
@annotate
def review_next(request):
    """The list's first session (after ``from=``) the user has not scored yet (with the
    queue's scores)."""
    params = review.list_params(request)
    queue = review.Queue(request, params)
    found = queue.next_after(request.GET.get("from") or None)
    if found.session_id is not None:
        return redirect(_with_query(reverse("review:session", args=[found.session_id]), params))
    return render(
        request,
        "annotations_app/review_done.html",
        {
            "found": found,
            "valid": queue.valid,
            "review": queue.review,
            "scores": queue.scores,
            "list_url": _with_query(reverse("sessions:list"), params),
        },
    )


@require_GET
@annotate
def review_session(request, session_id: str):
    """The session page with the queue's place, "Next to review" and the way back."""
    context = session_context(request, session_id)
    params = review.list_params(request)
    next_query = params.copy()
    next_query["from"] = session_id
    context.update(
        position=review.Queue(request, params).position(session_id),
        list_url=_with_query(reverse("sessions:list"), params),
        next_url=reverse("review:next") + "?" + next_query.urlencode(),
        # The transcript's "Show also" form keeps the queue (the list's query string).
        keep_params=[(key, value) for key, values in params.lists() for value in values],
    )
    return render(request, "annotations_app/review_session.html", context)
