"""The title copies kept for orphaned annotations are redacted: no raw stored text is kept."""

from django.db import migrations

from redaction import redact_text


def redact_titles(apps, schema_editor):
    anchors = apps.get_model("annotations_app", "AnnotatedSession")
    for anchor in anchors.objects.exclude(title="").only("pk", "title").iterator():
        redacted = redact_text(anchor.title)[0][:300]
        if redacted != anchor.title:
            anchors.objects.filter(pk=anchor.pk).update(title=redacted)


class Migration(migrations.Migration):
    dependencies = [("annotations_app", "0001_initial")]

    operations = [migrations.RunPython(redact_titles, migrations.RunPython.noop)]
