"""The cache table of settings.CACHES (Django's database cache), so that `migrate` alone sets
up a new database; createcachetable leaves an existing table alone."""

from django.conf import settings
from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


def drop_cache_table(apps, schema_editor):
    for cache in settings.CACHES.values():
        if cache["BACKEND"].endswith(".DatabaseCache"):
            schema_editor.execute(
                f"DROP TABLE IF EXISTS {schema_editor.quote_name(cache['LOCATION'])}"
            )


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0006_payout_position"),
    ]

    operations = [migrations.RunPython(create_cache_table, drop_cache_table)]
