"""Signed-in sessions go back to Django's own session table: the ones still running are copied
over, so nobody is signed out by the upgrade."""

from django.db import migrations


def copy_back(apps, schema_editor):
    from django.utils import timezone

    alias = schema_editor.connection.alias
    ours = apps.get_model("accounts_app", "SignedInSession")
    django_sessions = apps.get_model("sessions", "Session")
    running = ours.objects.using(alias).filter(expire_date__gt=timezone.now())
    known = set(django_sessions.objects.using(alias).values_list("session_key", flat=True))
    django_sessions.objects.using(alias).bulk_create(
        [
            django_sessions(
                session_key=row.session_key,
                session_data=row.session_data,
                expire_date=row.expire_date,
            )
            for row in running.iterator()
            if row.session_key not in known
        ],
        batch_size=500,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts_app", "0007_audit_profile_and_filter"),
        ("sessions", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(copy_back, migrations.RunPython.noop),
        migrations.DeleteModel(name="SignedInSession"),
    ]
