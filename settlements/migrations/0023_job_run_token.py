from django.db import migrations


class Migration(migrations.Migration):
    """A job is queued as several tasks now, so it keeps its run's token, not one task's id."""

    dependencies = [("settlements", "0022_signin_epoch")]

    operations = [
        migrations.RenameField(model_name="job", old_name="task_id", new_name="run_token"),
    ]
