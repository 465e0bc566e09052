from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0014_enqueued_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="importjob",
            name="attempts",
            field=models.PositiveSmallIntegerField(default=0),
        ),
    ]
