from django.core.management.base import BaseCommand

from webhooks.services import deliveries_due_send


class Command(BaseCommand):
    help = (
        "Send the webhook deliveries whose retry is due (Celery beat does it on the full "
        "stack; in the embedded mode, run this from cron or let the next event do it)."
    )

    def handle(self, *args, **options):
        self.stdout.write(f"{deliveries_due_send()} delivery(ies) sent.")
