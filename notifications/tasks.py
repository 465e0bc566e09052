"""Celery tasks of the notifications app: thin, take ids and plain data."""

from celery import shared_task

from notifications.services import notification_mail_send


@shared_task(name="notifications.tasks.notification_mail")
def notification_mail(
    user_id: int, project_id: int, kind: str, data: dict, about_recipient: bool
) -> bool:
    return notification_mail_send(
        user_id=user_id,
        project_id=project_id,
        kind=kind,
        data=data,
        about_recipient=about_recipient,
    )
