from django.apps import AppConfig


class SetupConfig(AppConfig):
    """The lead's project and task set-up: new project, settings, tasks, queueing candidates."""

    name = "setup"
    verbose_name = "Project set-up"
