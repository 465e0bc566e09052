from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "notifications"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from notifications.receivers import project_event_record
        from projects.events import project_event

        project_event.connect(project_event_record, dispatch_uid="notifications.record")
