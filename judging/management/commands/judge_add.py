import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from judging.models import Judge
from judging.services.judges import judge_save


def _json_object(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise CommandError(f"not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise CommandError("expected a JSON object")
    return value


class Command(BaseCommand):
    help = "Create a judge, or update the settings given for an existing one."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument(
            "--backend", choices=[b for b in Judge.Backend.values if b != "external"]
        )
        parser.add_argument("--model")
        parser.add_argument("--base-url", dest="base_url")
        parser.add_argument(
            "--api-key-env", dest="api_key_env", help="NAME of the variable holding the key"
        )
        parser.add_argument("--concurrency", type=int)
        parser.add_argument("--rpm", type=int, dest="requests_per_minute")
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
        fields = (
            "backend", "model", "base_url", "api_key_env", "concurrency", "requests_per_minute",
            "timeout_seconds", "sampling", "price_input_per_mtok", "price_output_per_mtok",
        )  # fmt: skip
        changes = {field: options[field] for field in fields if options[field] is not None}
        existing = Judge.objects.filter(name=options["name"]).first()
        if existing is None and "backend" not in changes:
            raise CommandError("a new judge needs --backend")
        if options["template"]:
            templates = dict(existing.templates) if existing else {}
            for item in options["template"]:
                kind, sep, name = item.partition("=")
                if not sep or not kind or not name:
                    raise CommandError(f"--template expects KIND=NAME, got {item!r}")
                templates[kind] = name
            changes["templates"] = templates
        try:
            judge, created = judge_save(options["name"], **changes)
        except ValidationError as error:
            messages = "; ".join(f"{k}: {' '.join(v)}" for k, v in error.message_dict.items())
            raise CommandError(f"judge not saved: {messages}") from None
        verb = "Created" if created else "Updated"
        model = f", {judge.model}" if judge.model else ""
        self.stdout.write(
            f"{verb} judge {judge.name} ({judge.backend}{model}; "
            f"concurrency {judge.concurrency}, {judge.requests_per_minute} rpm, "
            f"timeout {judge.timeout_seconds:g} s)."
        )
