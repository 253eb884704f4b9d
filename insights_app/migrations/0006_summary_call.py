"""Timed tool calls join the per-session summaries.  Summaries stored before them have no
calls: they are dropped and computed again (by ``manage.py insights_warm`` or the next
report); they are derived from the state.db, nothing is lost."""

from django.db import migrations, models


def drop_summaries(apps, schema_editor):
    for name in ("SummaryTool", "SummarySkill", "StoredSummary", "SummaryMark"):
        apps.get_model("insights_app", name).objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("insights_app", "0005_drop_pass_blocks"),
    ]

    operations = [
        migrations.RunPython(drop_summaries, migrations.RunPython.noop),
        migrations.CreateModel(
            name="SummaryCall",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("store_key", models.BigIntegerField()),
                ("session_id", models.CharField(max_length=500)),
                ("started_at", models.FloatField(null=True)),
                ("source", models.TextField(null=True)),
                ("model", models.TextField(null=True)),
                ("tool_name", models.TextField()),
                ("seconds", models.FloatField()),
                ("message_id", models.BigIntegerField()),
            ],
            options={
                "indexes": [
                    models.Index(
                        fields=["store_key", "started_at", "tool_name", "seconds", "message_id"],
                        name="summary_call_window",
                    ),
                    models.Index(fields=["store_key", "session_id"], name="summary_call_session"),
                ],
            },
        ),
    ]
