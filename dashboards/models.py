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
