from django.conf import settings
from django.db import models


class FigurePage(models.TextChoices):
    AGREEMENT = "agreement", "Agreement"
    JUDGES = "judges", "Judges"
    MODELS = "models", "Models"
    DISAGREEMENT = "disagreement", "Judges' disagreement with the experts (the pair browser)"


class FigureSnapshot(models.Model):
    """A dashboard page's figures as last computed for a project, with the version of the
    project's data they reflect (dashboards/snapshots.py): the page is served from here, so a
    cleared cache or a restarted server never means waiting for the figures again."""

    Page = FigurePage

    project = models.ForeignKey(
        "projects.Project", on_delete=models.CASCADE, related_name="figure_snapshots"
    )
    page = models.CharField(max_length=16, choices=FigurePage.choices)
    version = models.CharField(max_length=40)
    figures = models.BinaryField()  # pickled by dashboards.snapshots, never from a request
    computed_at = models.DateTimeField()
    compute_seconds = models.FloatField()
    refreshing_since = models.DateTimeField(null=True, blank=True)  # a refresh under way

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "page"], name="figure_snapshot_unique"),
            models.CheckConstraint(
                condition=models.Q(page__in=FigurePage.values), name="figure_snapshot_page"
            ),
            models.CheckConstraint(
                condition=models.Q(compute_seconds__gte=0), name="figure_snapshot_seconds"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project_id}/{self.page} @ {self.version[:8]}"


class SavedView(models.Model):
    """A lead's named view of the pair browser: its filter, sort and columns as the canonical
    query string the page itself builds (dashboards/services/saved_views.py checks it on the
    way in). Private to its owner, or shared with the project's leads; only its owner deletes
    it."""

    project = models.ForeignKey(
        "projects.Project", on_delete=models.CASCADE, related_name="saved_views"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_views"
    )
    name = models.CharField(max_length=80)
    shared = models.BooleanField(default=False)
    query = models.CharField(max_length=4000, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "owner", "name"], name="saved_view_name_unique"
            ),
            models.CheckConstraint(condition=~models.Q(name=""), name="saved_view_name_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.project_id}/{self.owner_id}: {self.name}"
