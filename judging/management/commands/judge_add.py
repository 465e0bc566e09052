import json

from django.core.management.base import BaseCommand, CommandError

from core.errors import Invalid
from judging.models import Connection, Judge
from judging.services.judges import judge_save
from projects.models import Project


def _json_object(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise CommandError(f"not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise CommandError("expected a JSON object")
    return value


def error_text(error: Invalid) -> str:
    if not error.fields:
        return error.message
    return "; ".join(f"{k}: {' '.join(v)}" for k, v in error.fields.items())


class Command(BaseCommand):
    help = (
        "Create a project's judge (without --project: an operator's judge every project may "
        "run), or update the settings given for an existing one."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--project", help="slug of the project the judge belongs to")
        parser.add_argument(
            "--backend", choices=[b for b in Judge.Backend.values if b != "external"]
        )
        parser.add_argument(
            "--connection", help="name of the connection to call (see connection_add)"
        )
        parser.add_argument("--model")
        parser.add_argument("--concurrency", type=int)
        parser.add_argument(
            "--rpm", type=int, dest="requests_per_minute",
            help="a hard cap on requests per minute (default: none, calls adapt to the API)",
        )  # fmt: skip
        parser.add_argument("--timeout", type=float, dest="timeout_seconds")
        parser.add_argument("--sampling", type=_json_object, help='e.g. {"temperature": 0}')
        parser.add_argument("--price-input", dest="price_input_per_mtok", help="per 1M tokens")
        parser.add_argument("--price-output", dest="price_output_per_mtok", help="per 1M tokens")
        parser.add_argument(
            "--template",
            action="append",
            default=[],
            metavar="KIND=NAME",
            help="prompt template for a task kind, e.g. t2i=mjbench-t2i",
        )

    def handle(self, *args, **options):
        project = None
        if options["project"]:
            project = Project.objects.filter(slug=options["project"]).first()
            if project is None:
                raise CommandError(f"no project {options['project']!r}")
        fields = (
            "backend", "model", "concurrency", "requests_per_minute", "timeout_seconds",
            "sampling", "price_input_per_mtok", "price_output_per_mtok",
        )  # fmt: skip
        changes = {field: options[field] for field in fields if options[field] is not None}
        if options["connection"]:
            connection = Connection.objects.filter(name=options["connection"]).first()
            if connection is None:
                raise CommandError(f"no connection {options['connection']!r}: see connection_add")
            changes["connection"] = connection
            changes.setdefault("backend", connection.backend)
        existing = Judge.objects.filter(name=options["name"], project=project).first()
        if existing is None and "backend" not in changes:
            raise CommandError("a new judge needs --backend (or --connection)")
        if options["template"]:
            templates = dict(existing.templates) if existing else {}
            for item in options["template"]:
                kind, sep, name = item.partition("=")
                if not sep or not kind or not name:
                    raise CommandError(f"--template expects KIND=NAME, got {item!r}")
                templates[kind] = name
            changes["templates"] = templates
        try:
            judge, created = judge_save(options["name"], project=project, **changes)
        except Invalid as error:
            raise CommandError(f"judge not saved: {error_text(error)}") from None
        verb = "Created" if created else "Updated"
        model = f", {judge.model}" if judge.model else ""
        owner = f"project {project.slug}" if project else "the operator (every project)"
        self.stdout.write(
            f"{verb} judge {judge.name} of {owner} ({judge.backend}{model}; "
            f"concurrency {judge.concurrency}, {_rpm(judge.requests_per_minute)}, "
            f"timeout {judge.timeout_seconds:g} s)."
        )


def _rpm(cap: int | None) -> str:
    return f"at most {cap} rpm" if cap else "adaptive rate"
