"""The audit trail now belongs to ``accounts_app`` (same table, same rows): forget it here."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("console_app", "0001_initial"),
        ("accounts_app", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="AuditEvent")],
            database_operations=[],
        ),
    ]
