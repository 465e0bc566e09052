from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in, user_login_failed

        from audit.admin import admin_register
        from audit.receivers import pair_released_record, sign_in_failed_record, sign_in_record
        from audit.recording import models_register
        from projects.events import project_event

        admin_register()
        models_register()
        user_logged_in.connect(sign_in_record, dispatch_uid="audit.sign_in")
        user_login_failed.connect(sign_in_failed_record, dispatch_uid="audit.sign_in_failed")
        project_event.connect(pair_released_record, dispatch_uid="audit.pair_released")
