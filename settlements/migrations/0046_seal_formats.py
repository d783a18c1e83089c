"""Every event records the seal format its digests were written in (settlements.seal_formats).
The events written before are format 1, which is how they are verified from now on.

The column is added with 1 as its default, which PostgreSQL writes into the table's catalogue
rather than into each row: no row is updated, so the events' write-once trigger, which refuses
UPDATE, stays in place and is not fired. The default is then dropped, as the writers say which
format they sealed in.

Taken back, the column goes, and with it which events were sealed in a later format. Applied
again, those events are found by their hashes, which cover their format from format 2 on: the
latest events whose hash is that of their content in format 2 are given 2 again (the
write-once trigger skipped for that one update: the migration runs as the tables' owner, the
one role allowed to, see settlements/triggers.py). Formats only grow along the chain, so the
search stops at the first event, from the latest back, that is not of format 2: on a desk
migrated for the first time, the latest event.
"""

import hashlib

from django.db import migrations, models

from settlements.audit_log import canonical

WRITE_ONCE = "pgtrigger_write_once_13d3c"  # settlements_event's, as migration 0016 installed it


def formats_kept_by_the_hashes(apps, schema_editor):
    Event = apps.get_model("settlements", "Event")
    later = []
    for event in Event.objects.order_by("-seq").iterator(chunk_size=1000):
        event.seal_format = 2
        if hashlib.sha256(canonical(event)).hexdigest() != event.hash:
            break
        later.append(event.pk)
    if not later:
        return
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "SELECT set_config('pgtrigger.ignore', %s, true)", [f"{{{WRITE_ONCE}}}"]
        )
    Event.objects.filter(pk__in=later).update(seal_format=2)


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0045_sessions_in_the_database"),
    ]

    operations = [
        migrations.AddField(
            model_name="event",
            name="seal_format",
            field=models.PositiveSmallIntegerField(default=1, verbose_name="seal format"),
            preserve_default=False,
        ),
        migrations.RunPython(formats_kept_by_the_hashes, migrations.RunPython.noop),
    ]
