"""Creates the four role groups that business permissions follow (see settlements.roles)."""

from django.db import migrations

# Spelled out rather than imported: a migration must keep working if the module changes.
ROLES = ("operator", "marketing_manager", "tournament_manager", "auditor")


def create_roles(apps, schema_editor):
    group = apps.get_model("auth", "Group")
    for name in ROLES:
        group.objects.get_or_create(name=name)


def remove_roles(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=ROLES).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("settlements", "0001_initial"),
    ]

    operations = [migrations.RunPython(create_roles, remove_roles)]
