"""Who may do what with annotations, on top of ``accounts_app.roles``: a note is edited by its
author only; a score given in a profile the staff member cannot see is not theirs to delete.
"""

from __future__ import annotations

from functools import partial, wraps

from django.shortcuts import get_object_or_404
from django.utils.translation import gettext_lazy

from accounts_app.middleware import forbidden
from accounts_app.roles import ANALYST, STAFF, Capability, has_capability
from hermes_explorer import stores
from profiles_app.access import restricted_to

ANNOTATE = Capability("annotate", ANALYST, gettext_lazy("tag sessions or write notes"))
MANAGE_TAGS = Capability("manage_tags", STAFF, gettext_lazy("manage the tag vocabulary"))
can_annotate = partial(has_capability, capability=ANNOTATE)
can_manage_tags = partial(has_capability, capability=MANAGE_TAGS)


def can_edit_note(user, note) -> bool:
    return can_annotate(user) and note.author_id is not None and note.author_id == user.pk


def can_delete_note(user, note) -> bool:
    return can_edit_note(user, note) or can_manage_tags(user)


def can_delete_view(user, view) -> bool:
    return view.owner_id == user.pk or can_manage_tags(user)


def requires(capability: Capability, check=None, load=None):
    """A view decorator: the 403 page naming ``capability`` unless the user has it.  With
    ``load`` (``(URL argument, queryset)``), the row that argument names is read first (a 404
    when missing), handed to the view in place of its id (``note_id`` → ``note``), and the
    view runs when ``check(user, row)``."""

    def decorate(view):
        @wraps(view)
        def guarded(request, **kwargs):
            if load is None:
                allowed = has_capability(request.user, capability)
            else:
                argument, queryset = load
                row = kwargs[argument.removesuffix("_id")] = get_object_or_404(
                    queryset, pk=kwargs.pop(argument)
                )
                allowed = check(request.user, row)
            return view(request, **kwargs) if allowed else forbidden(request, capability)

        return guarded

    return decorate


def can_delete_score(request, score) -> bool:
    if not can_manage_tags(request.user):
        return False
    names = restricted_to(request)
    if names is None:
        return True
    given = score.session_scores.all()
    if stores.multi():  # values are keyed by profile name; else the one store is seen or not
        return not given.exclude(store__in=names).exists()
    return bool(names) or not given.exists()
