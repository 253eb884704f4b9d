"""Create the three role groups (see accounts_app/roles.py). Idempotent, reversible."""

from django.db import migrations

ROLE_GROUPS = ("viewers", "analysts", "staff")


def create_groups(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    for name in ROLE_GROUPS:
        Group.objects.using(schema_editor.connection.alias).get_or_create(name=name)


def remove_groups(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Group.objects.using(schema_editor.connection.alias).filter(
        name__in=ROLE_GROUPS, user__isnull=True
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("accounts_app", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(create_groups, remove_groups)]
