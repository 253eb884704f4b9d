"""The audit trail moves here from the console app, without touching its table or rows.

The table ``console_app_auditevent`` was created by ``console_app.0001_initial`` and keeps its
name (``Meta.db_table``): only Django's idea of which app owns the model changes.  This
migration declares the model here (state only); ``console_app.0002_auditevent_moved``, which
depends on this one, removes it from the console's state.  The content type is renamed too, so
permissions already granted on it (the staff group's ``view_auditevent``) follow the model.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def move_content_type(apps, schema_editor):
    _rename_content_type(apps, schema_editor, "console_app", "accounts_app")


def move_content_type_back(apps, schema_editor):
    _rename_content_type(apps, schema_editor, "accounts_app", "console_app")


def _rename_content_type(apps, schema_editor, old: str, new: str) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    types = ContentType.objects.using(schema_editor.connection.alias)
    if not types.filter(app_label=new, model="auditevent").exists():
        types.filter(app_label=old, model="auditevent").update(app_label=new)


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("contenttypes", "0002_remove_content_type_name"),
        # The table was made there.
        ("console_app", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="AuditEvent",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("username", models.CharField(max_length=150)),
                        (
                            "action",
                            models.CharField(
                                choices=[
                                    ("reveal", "revealed a redacted message"),
                                    ("sql", "ran SQL on the state.db"),
                                ],
                                max_length=16,
                            ),
                        ),
                        ("session_id", models.CharField(blank=True, max_length=200)),
                        ("message_id", models.BigIntegerField(blank=True, null=True)),
                        ("detail", models.TextField(blank=True)),
                        ("ip", models.GenericIPAddressField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                        (
                            "user",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="audit_events",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "console_app_auditevent",
                        "ordering": ["-created_at"],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(move_content_type, move_content_type_back),
    ]
