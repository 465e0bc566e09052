# The import jobs, moved from the annotation app. Their table stays (annotation_importjob): this
# migration makes the model in Django's state only, and annotation/0021 removes it there.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("annotation", "0020_assignment_skipped_at"),
        ("projects", "0012_scale_from_first_file"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ImportJob",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("task_slug", models.SlugField(max_length=64)),
                        ("file_name", models.CharField(max_length=255)),
                        ("file", models.CharField(blank=True, max_length=255)),
                        ("file_format", models.CharField(blank=True, max_length=16)),
                        ("as_candidates", models.BooleanField(default=True)),
                        ("queue", models.BooleanField(default=True)),
                        ("status", models.CharField(choices=[("queued", "Waiting for a worker"), ("running", "Running"), ("done", "Done"), ("failed", "Refused")], default="queued", max_length=16)),
                        ("records_checked", models.PositiveIntegerField(default=0)),
                        ("images_checked", models.PositiveIntegerField(default=0)),
                        ("pairs_written", models.PositiveIntegerField(default=0)),
                        ("summary", models.JSONField(blank=True, default=dict)),
                        ("error", models.TextField(blank=True)),
                        ("error_record", models.PositiveIntegerField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("enqueued_at", models.DateTimeField(blank=True, null=True)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        ("attempts", models.PositiveSmallIntegerField(default=0)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        ("project", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="import_jobs", to="projects.project")),
                        ("requested_by", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="import_jobs", to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        "db_table": "annotation_importjob",
                        "ordering": ["-created_at", "-id"],
                        "constraints": [
                            models.CheckConstraint(condition=models.Q(("status__in", ["queued", "running", "done", "failed"])), name="import_job_status_valid"),
                            models.CheckConstraint(condition=models.Q(("file_format__in", ["", "native", "mmrb2", "mjbench", "parquet"])), name="import_job_format_valid"),
                        ],
                    },
                ),
            ],
        ),
    ]
