"""Creates the cashier role: the wallet system's user, which reads the ledger feed and
confirms payments through the API, and has no page of the desk (see settlements.roles)."""

from django.db import migrations

ROLE = "cashier"


def create_role(apps, schema_editor):
    apps.get_model("auth", "Group").objects.get_or_create(name=ROLE)


def remove_role(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=ROLE).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("settlements", "0011_release_records_approved_before_the_feed"),
    ]

    operations = [migrations.RunPython(create_role, remove_role)]
