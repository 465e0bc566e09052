from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("judging", "0005_connections_data")]

    operations = [
        migrations.RemoveField(
            model_name="judge",
            name="api_key_env",
        ),
        migrations.RemoveField(
            model_name="judge",
            name="base_url",
        ),
        migrations.AddConstraint(
            model_name="judgerun",
            constraint=models.CheckConstraint(
                condition=models.Q(("samples__gte", 1), ("samples__lte", 20)),
                name="judge_run_samples_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="prompttemplate",
            constraint=models.UniqueConstraint(
                condition=models.Q(("project__isnull", False)),
                fields=("project", "name", "version"),
                name="prompt_template_version_in_project",
            ),
        ),
        migrations.AddConstraint(
            model_name="prompttemplate",
            constraint=models.UniqueConstraint(
                condition=models.Q(("project__isnull", True)),
                fields=("name", "version"),
                name="prompt_template_version_built_in",
            ),
        ),
        migrations.AddConstraint(
            model_name="judge",
            constraint=models.UniqueConstraint(
                condition=models.Q(("project__isnull", False)),
                fields=("project", "name"),
                name="judge_name_unique_in_project",
            ),
        ),
        migrations.AddConstraint(
            model_name="judge",
            constraint=models.UniqueConstraint(
                condition=models.Q(("project__isnull", True)),
                fields=("name",),
                name="judge_name_unique_shared",
            ),
        ),
        migrations.AddConstraint(
            model_name="judge",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(
                        ("backend__in", ("openai", "anthropic")), ("connection__isnull", False)
                    ),
                    models.Q(
                        models.Q(("backend__in", ("openai", "anthropic")), _negated=True),
                        ("connection__isnull", True),
                    ),
                    _connector="OR",
                ),
                name="judge_connection_iff_api",
            ),
        ),
        migrations.AddConstraint(
            model_name="judge",
            constraint=models.CheckConstraint(
                condition=models.Q(("concurrency__gte", 1), ("concurrency__lte", 256)),
                name="judge_concurrency_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="judge",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("requests_per_minute__gte", 1), ("requests_per_minute__lte", 100000)
                ),
                name="judge_rpm_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="judge",
            constraint=models.CheckConstraint(
                condition=models.Q(("timeout_seconds__gt", 0), ("timeout_seconds__lte", 600)),
                name="judge_timeout_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="connection",
            constraint=models.CheckConstraint(
                condition=models.Q(("backend__in", ("openai", "anthropic"))),
                name="connection_backend_valid",
            ),
        ),
    ]
