from celery import shared_task

from dashboards.snapshots import figures_refresh_run, stale_refresh


@shared_task(name="dashboards.tasks.figures_refresh")
def figures_refresh(project_id: int, page: str) -> None:
    figures_refresh_run(project_id, page)


@shared_task(name="dashboards.tasks.figures_refresh_stale")
def figures_refresh_stale() -> int:
    return stale_refresh()
