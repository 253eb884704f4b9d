"""Signed-in sessions move to a table that keeps the user's id: the ones still running are
copied over, so nobody is signed out by the upgrade."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def copy_running_sessions(apps, schema_editor):
    from django.contrib.sessions.backends.db import SessionStore
    from django.utils import timezone

    alias = schema_editor.connection.alias
    old = apps.get_model("sessions", "Session")
    new = apps.get_model("accounts_app", "SignedInSession")
    decoder = SessionStore()
    rows = []
    for row in old.objects.using(alias).filter(expire_date__gt=timezone.now()).iterator():
        user_id = decoder.decode(row.session_data).get("_auth_user_id")
        rows.append(
            new(
                session_key=row.session_key,
                session_data=row.session_data,
                expire_date=row.expire_date,
                user_id=int(user_id) if str(user_id or "").isdigit() else None,
            )
        )
    new.objects.using(alias).bulk_create(rows, batch_size=500)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts_app", "0005_audit_annotation_actions"),
        ("sessions", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="SignedInSession",
            fields=[
                (
                    "session_key",
                    models.CharField(
                        max_length=40, primary_key=True, serialize=False, verbose_name="session key"
                    ),
                ),
                ("session_data", models.TextField(verbose_name="session data")),
                ("expire_date", models.DateTimeField(db_index=True, verbose_name="expire date")),
                (
                    "user",
                    models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "signed-in session",
                "verbose_name_plural": "signed-in sessions",
                "abstract": False,
            },
        ),
        migrations.RunPython(copy_running_sessions, migrations.RunPython.noop),
    ]
