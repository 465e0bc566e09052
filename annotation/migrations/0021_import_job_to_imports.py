# ImportJob moved to the imports app (imports/0001). Its table stays: this removes the model
# from Django's state only, and moves its content type, so that permissions granted on it and
# the audit trail's entries about import jobs follow.

from django.db import migrations


def _content_type_move(apps, source: str, target: str) -> None:
    content_type = apps.get_model("contenttypes", "ContentType")
    if content_type.objects.filter(app_label=target, model="importjob").exists():
        return  # made at the target already (post_migrate ran in between)
    content_type.objects.filter(app_label=source, model="importjob").update(app_label=target)


def content_type_forward(apps, schema_editor):
    _content_type_move(apps, "annotation", "imports")


def content_type_backward(apps, schema_editor):
    _content_type_move(apps, "imports", "annotation")


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0020_assignment_skipped_at"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("imports", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ImportJob")],
        ),
        migrations.RunPython(content_type_forward, content_type_backward),
    ]
