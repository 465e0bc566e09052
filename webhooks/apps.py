from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from core.outbound import webhook_delivery_retries
        from core.outbox import job_kind_register
        from projects.events import project_event
        from webhooks.models import Delivery, DeliveryStatus
        from webhooks.receivers import project_event_deliver
        from webhooks.tasks import delivery_send

        webhook_delivery_retries()  # a wrong ARBITER_WEBHOOK_RETRY_SECONDS stops the start
        project_event.connect(project_event_deliver, dispatch_uid="webhooks.deliver")
        # The outbox's sweep sends the first attempts accepted while the broker was down;
        # retries by the scheduled job webhook-retries (settings.ARBITER_SCHEDULED_JOBS).
        job_kind_register(
            delivery_send,
            Delivery,
            lambda: Delivery.objects.filter(status=DeliveryStatus.PENDING, attempts=0),
        )
