from django.core.management.base import BaseCommand

from webhooks.services import deliveries_due_attempt


class Command(BaseCommand):
    help = (
        "Send the webhook deliveries whose attempt is due, here and now, waiting for each "
        "answer (the scheduled job webhook-retries does it in the background: Celery beat on "
        "the full stack, the web server's process in the embedded mode)."
    )

    def handle(self, *args, **options):
        outcomes = deliveries_due_attempt()
        self.stdout.write(
            f"{sum(outcomes.values())} due delivery(ies) attempted: "
            f"{outcomes['delivered']} delivered, {outcomes['pending']} to retry later, "
            f"{outcomes['failed']} failed (no attempt left)."
        )
