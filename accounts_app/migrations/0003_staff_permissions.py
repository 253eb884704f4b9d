"""Let the ``staff`` group manage accounts and roles in the admin (users, groups) and read the
audit trail, without being superusers (the console grants its own saved-query permissions
after ``migrate``, see ``accounts_app.roles.ensure_role_groups``).

NOTE: permissions are normally created after the last migration (post_migrate); on a fresh
database they do not exist yet here, so they are created first for the apps concerned.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

STAFF_PERMISSIONS = {
    "auth": ["add_user", "change_user", "view_user", "view_group"],
    "accounts_app": ["view_auditevent"],
}


def grant(apps, schema_editor):
    alias = schema_editor.connection.alias
    for label in STAFF_PERMISSIONS:
        app_config = apps.get_app_config(label)
        app_config.models_module = True  # create_permissions skips apps without models
        create_permissions(app_config, verbosity=0, using=alias, apps=apps)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    staff, _ = Group.objects.using(alias).get_or_create(name="staff")
    for label, codenames in STAFF_PERMISSIONS.items():
        perms = Permission.objects.using(alias).filter(
            content_type__app_label=label, codename__in=codenames
        )
        staff.permissions.add(*perms)


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    staff = Group.objects.using(schema_editor.connection.alias).filter(name="staff").first()
    if staff is not None:
        staff.permissions.clear()


class Migration(migrations.Migration):
    dependencies = [
        ("accounts_app", "0002_roles"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
