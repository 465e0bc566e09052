from django.db import migrations

SAMPLING_KEYS = {
    "temperature": (0.0, 2.0),
    "top_p": (0.0, 1.0),
    "top_k": (1, 1000),
    "max_tokens": (1, 65_536),
    "seed": (0, 2**31 - 1),
}  # judging.models.SAMPLING_RANGES when this was written

BUILT_IN_NAMES = {
    "mmrb2-t2i", "mmrb2-edit", "mmrb2-interleaved", "mmrb2-reasoning", "mmrb2-other",
    "mjbench-t2i",
}  # fmt: skip


def move_to_connections_and_projects(apps, schema_editor):
    """Judges were global with a lead-typed URL and variable name. Each distinct (backend,
    URL, variable) becomes an operator's connection that NO project may use yet: a value typed
    by any lead must be reviewed by the operator before it carries a key again (SECURITY.md,
    "Upgrading"). Existing judges stay shared (operator-owned: leads run them, only operators
    change them). Limits above the new bounds are lowered to them; sampling keeps its known
    numeric parameters only. Custom templates (not a built-in name) are copied into every
    project as their version 1; built-in names are taken from the code from now on, whatever
    versions leads had added."""
    Judge = apps.get_model("judging", "Judge")
    Connection = apps.get_model("judging", "Connection")
    JudgeRun = apps.get_model("judging", "JudgeRun")
    PromptTemplate = apps.get_model("judging", "PromptTemplate")
    Project = apps.get_model("annotation", "Project")
    made = {}
    for judge in Judge.objects.filter(backend__in=["openai", "anthropic"]).order_by("pk"):
        url = judge.base_url or (
            "https://api.anthropic.com"
            if judge.backend == "anthropic"
            else "http://invalid.invalid"
        )
        env = judge.api_key_env if judge.api_key_env.replace("_", "").isalnum() else ""
        key = (judge.backend, url, env)
        if key not in made:
            made[key] = Connection.objects.create(
                name=f"migrated-{len(made) + 1}", backend=judge.backend, base_url=url,
                api_key_env=env, all_projects=False,
            )  # fmt: skip
        judge.connection = made[key]
        judge.save(update_fields=["connection"])
    for judge in Judge.objects.exclude(sampling={}).order_by("pk"):
        # Sampling is merged into the request body: keep the known numeric parameters only
        # (a lead could have put "model", "messages" or "n" there).
        kept = {
            key: value
            for key, value in (judge.sampling or {}).items()
            if key in SAMPLING_KEYS
            and isinstance(value, int | float)
            and not isinstance(value, bool)
            and SAMPLING_KEYS[key][0] <= value <= SAMPLING_KEYS[key][1]
        }
        if kept != judge.sampling:
            judge.sampling = kept
            judge.save(update_fields=["sampling"])
    Judge.objects.filter(concurrency__gt=256).update(concurrency=256)
    Judge.objects.filter(requests_per_minute__gt=100_000).update(requests_per_minute=100_000)
    Judge.objects.filter(timeout_seconds__gt=600).update(timeout_seconds=600)
    JudgeRun.objects.filter(samples__gt=20).update(samples=20)
    customs = {}
    for template in PromptTemplate.objects.filter(project__isnull=True).order_by("name", "version"):
        if template.name not in BUILT_IN_NAMES:
            customs[template.name] = template  # the latest version wins
    for project in Project.objects.all():
        for template in customs.values():
            PromptTemplate.objects.create(
                project=project, name=template.name, version=1, body=template.body,
                answer_format=template.answer_format,
            )  # fmt: skip


class Migration(migrations.Migration):
    dependencies = [("judging", "0004_connections_project_judges")]

    operations = [
        migrations.RunPython(move_to_connections_and_projects, migrations.RunPython.noop),
    ]
