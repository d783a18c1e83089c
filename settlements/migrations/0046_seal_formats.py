"""Every event records the seal format its digests were written in (settlements.seal_formats).
The events written before are format 1, which is how they are verified from now on.

The column is added with 1 as its default, which PostgreSQL writes into the table's catalogue
rather than into each row: no row is updated, so the events' write-once trigger, which refuses
UPDATE, stays in place and is not fired. The default is then dropped, as the writers say which
format they sealed in.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0042_job_item_leases"),
    ]

    operations = [
        migrations.AddField(
            model_name="event",
            name="seal_format",
            field=models.PositiveSmallIntegerField(default=1, verbose_name="seal format"),
            preserve_default=False,
        ),
    ]
