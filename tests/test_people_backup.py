"""A person staff joined on ``/people/`` is the team's own data: backed up and restored with
the rest of it."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from insights_app.models import Person, PersonId
from tests.test_backup import _counts, _team_data, _wipe

pytestmark = pytest.mark.django_db


def test_a_person_and_their_ids_survive_backup_and_restore(tmp_path):
    _team_data()
    ann = Person.objects.create(name="Ann")
    PersonId.objects.create(person=ann, store="bot", source="telegram", user_id="12345")
    PersonId.objects.create(person=ann, store="coder", source="slack", user_id="U0ANN")
    before = _counts()
    assert before["insights_app.person"] == 1 and before["insights_app.personid"] == 2
    call_command("backup", str(tmp_path))
    _wipe()
    assert not Person.objects.exists()
    call_command("restore", str(tmp_path))
    assert _counts() == before
    assert set(Person.objects.get(name="Ann").ids.values_list("store", "source", "user_id")) == {
        ("bot", "telegram", "12345"),
        ("coder", "slack", "U0ANN"),
    }
