from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from content.importing.errors import ImportFailed
from demo.seed import DEFAULT_PASSWORD, demo_seed

DEFAULT_HOST = "127.0.0.1:8000"  # runserver's, and the Makefile's HOST


class Command(BaseCommand):
    help = (
        "Create or refresh the demo project: four tasks of generated image pairs queued for "
        "annotation, three annotators and a lead, and finished work on other pairs (ratings, "
        "verdicts, candidates, an export). Safe to run again; prints the logins."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--host",
            default=DEFAULT_HOST,
            help=f"host:port the server answers on, for the links printed (default {DEFAULT_HOST}; "
            "make demo passes its HOST)",
        )
        parser.add_argument(
            "--password",
            default=DEFAULT_PASSWORD,
            help=f"password of every demo user, set again on each run (default {DEFAULT_PASSWORD})",
        )

    def handle(self, *args, **options):
        password = options["password"]
        if not password:
            raise CommandError("--password must not be empty")
        host = options["host"]
        if not host or any(c.isspace() or c in "/?#@" for c in host):
            raise CommandError(f"--host is host:port, e.g. {DEFAULT_HOST}; got {host!r}")
        url = f"http://{host}/"
        try:
            result = demo_seed(password)
        except ImportFailed as exc:
            raise CommandError(f"demo import failed: {exc}") from None
        except ValidationError as exc:
            raise CommandError(f"demo setup failed: {'; '.join(exc.messages)}") from None
        write = self.stdout.write
        write(f"Demo project {result['project']!r} is ready at {url}")
        for task, count in result["pairs"].items():
            write(f"  {task:<12} {count:>3} pairs ({result['new_pairs'][task]} new)")
        finished = result["finished"]
        write(
            "Finished work on other pairs (expert1..3, so your queues stay full): "
            f"{finished['ratings']} new ratings, {finished['verdicts']} new verdicts, "
            f"{finished['candidates']} new candidates for the ensemble filter"
            + (", an export" if finished["export"] else "")
        )
        write(f"Log in with password {password!r} as:")
        write(f"  {', '.join(result['annotators'])}  (annotators)")
        write(
            f"  {result['lead']}  (lead: judges, templates, runs and dashboards at "
            f"{url}projects/{result['project']}/...)"
        )
        write("The Django admin is for operators: python manage.py createsuperuser")
        write(
            f"Offline judges {', '.join(result['judges'])}: the lead starts runs at "
            f"{url}projects/{result['project']}/runs/"
        )
