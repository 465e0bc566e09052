"""Celery tasks of the webhooks app: thin, take ids."""

from celery import shared_task

from webhooks.sending import delivery_attempt


@shared_task(name="webhooks.tasks.delivery_send", ignore_result=True)
def delivery_send(delivery_id: int) -> str | None:
    return delivery_attempt(delivery_id=delivery_id)


@shared_task(name="webhooks.tasks.deliveries_retry", ignore_result=True)
def deliveries_retry() -> int:
    """Scheduled (settings.ARBITER_SCHEDULED_JOBS): send the deliveries whose retry is due."""
    from webhooks.services import deliveries_due_send

    return deliveries_due_send()
