from typing import TYPE_CHECKING

from django.apps import AppConfig

if TYPE_CHECKING:
    from projects.models import Project

# The project events after which the dashboards' figures are computed ahead of any visit.
FIGURES_MOVED_BY = {"import.finished", "run.finished", "pair.decided"}


class DashboardsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "dashboards"

    def ready(self) -> None:
        from projects.events import project_event

        project_event.connect(_figures_ahead, dispatch_uid="dashboards.figures_ahead")


def _figures_ahead(sender: object, *, project: "Project", kind: str, **_: object) -> None:
    from django.conf import settings

    from projects.events import burst_gather

    if kind in FIGURES_MOVED_BY and settings.ARBITER_FIGURES_AHEAD:
        # Once per burst: a settings change or an import deciding a thousand pairs moves the
        # figures once.
        burst_gather(
            ("dashboards.figures_ahead", project.pk), kind, lambda _kinds: _prepare(project)
        )


def _prepare(project: "Project") -> None:
    from dashboards.snapshots import figures_prepare

    figures_prepare(project)
