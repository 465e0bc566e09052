from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from projects.scale import center as scale_center


class RatingMode(models.TextChoices):
    ALL = "all", _("Rate every pair")
    SAMPLE = "sample", _("Rate a sample chosen for information")


class Project(models.Model):
    """One benchmark under construction, with its rating scale and consensus rules."""

    RatingMode = RatingMode

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    scale_points = models.PositiveSmallIntegerField(
        "Likert points (K)",
        default=7,
        validators=[MinValueValidator(2), MaxValueValidator(11)],
        help_text="Scores run 1..K; above the centre means A is better.",
    )
    # A lead who makes a project in the browser before uploading its first file may leave K
    # to that file (MMRB2's are on 1..6): setup/services.py::project_get_or_create.
    scale_from_first_file = models.BooleanField(
        "take K from the first file imported",
        default=False,
        help_text="While the project has no pairs, a file whose scores are on another scale "
        "sets K.",
    )
    annotators_per_pair = models.PositiveSmallIntegerField(
        "annotators per pair (N)", default=3, validators=[MinValueValidator(1)]
    )
    max_span = models.PositiveSmallIntegerField(
        default=4, help_text="A complete pair whose max − min score exceeds this is dropped."
    )
    ambiguous_half_width = models.FloatField(
        default=0.5,
        validators=[MinValueValidator(0)],
        help_text="Pairs whose mean lies within centre ± this are dropped as ambiguous.",
    )
    ensemble_threshold = models.FloatField(
        default=0.9, validators=[MinValueValidator(0), MaxValueValidator(1)]
    )
    lease_minutes = models.PositiveIntegerField(default=30, validators=[MinValueValidator(1)])
    # An annotator may correct a slip this long after submitting, even once the pair is
    # complete (the edit re-decides it); 0 locks a rating as soon as its pair is decided. The
    # rule, and its query twin: content/lifecycle.py::within_grace.
    edit_grace_minutes = models.PositiveIntegerField(
        default=10, validators=[MaxValueValidator(7 * 24 * 60)]
    )
    guidelines = models.TextField(blank=True, help_text="Markdown, shown to annotators.")
    # The planner's target: judge accuracies known to ± this at 95 %.
    target_half_width = models.FloatField(
        "target interval (±)",
        default=0.03,
        validators=[MinValueValidator(0.001), MaxValueValidator(0.5)],
        help_text="Rate until every judge's accuracy is known to ± this (0.03: ±3 points) at 95 %.",
    )
    rating_mode = models.CharField(
        "which pairs the experts rate",
        max_length=8,
        choices=RatingMode.choices,
        default=RatingMode.ALL,
        help_text="A sample chosen for information: the pairs the judges are unsure of come "
        "first, in an order that keeps the estimates unbiased however early rating stops.",
    )
    rating_budget = models.PositiveIntegerField(
        "pairs to rate per task (sample)",
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="In a sample, the experts start no more pairs per task than this "
        "(empty: no limit).",
    )
    # Judge labels with a guarantee (metrics/selective_labels.py), in the export.
    judge_labels = models.BooleanField(
        "export judge labels with a guarantee",
        default=False,
        help_text="Pairs still to rate get the judges' label where the judges are surest: as far "
        "down as, with probability 1 − δ, at most α of all the task's pairs that sure (rated or "
        "not; a dropped pair counts against the judges) would not get the judges' side from the "
        "experts.",
    )
    judge_labels_alpha = models.FloatField(
        "disagreement allowed (α)",
        default=0.1,
        validators=[MinValueValidator(0.01), MaxValueValidator(0.5)],
    )
    judge_labels_delta = models.FloatField(
        "risk that the guarantee fails (δ)",
        default=0.05,
        validators=[MinValueValidator(0.001), MaxValueValidator(0.5)],
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotation_project"  # kept from before the app split
        ordering = ["slug"]
        constraints = [
            models.CheckConstraint(
                condition=Q(scale_points__gte=2, scale_points__lte=11), name="project_scale_2_11"
            ),
            models.CheckConstraint(condition=Q(annotators_per_pair__gte=1), name="project_n_ge_1"),
            models.CheckConstraint(
                condition=Q(ambiguous_half_width__gte=0), name="project_band_non_negative"
            ),
            models.CheckConstraint(
                condition=Q(ensemble_threshold__gte=0, ensemble_threshold__lte=1),
                name="project_threshold_0_1",
            ),
            models.CheckConstraint(condition=Q(lease_minutes__gte=1), name="project_lease_ge_1"),
            models.CheckConstraint(
                condition=Q(target_half_width__gte=0.001, target_half_width__lte=0.5),
                name="project_target_half_width_range",
            ),
            models.CheckConstraint(
                condition=Q(rating_mode__in=RatingMode.values), name="project_rating_mode_valid"
            ),
            models.CheckConstraint(
                condition=Q(judge_labels_alpha__gte=0.01, judge_labels_alpha__lte=0.5)
                & Q(judge_labels_delta__gte=0.001, judge_labels_delta__lte=0.5),
                name="project_judge_labels_levels",
            ),
            models.CheckConstraint(
                condition=Q(edit_grace_minutes__lte=7 * 24 * 60), name="project_grace_le_week"
            ),
        ]

    def __str__(self) -> str:
        return self.name or self.slug

    def clean(self):
        # Stored ratings are canonical on the K they were made with; a new K would silently
        # change what they mean.
        if self.pk is None:
            return
        stored_k = Project.objects.filter(pk=self.pk).values_list("scale_points", flat=True).first()
        if (
            stored_k not in (None, self.scale_points)
            and self.pairs.filter(ratings__isnull=False).exists()
        ):
            raise ValidationError(
                {
                    "scale_points": gettext(
                        "ratings exist on the %(k)s-point scale; K cannot change"
                    )
                    % {"k": stored_k}
                }
            )

    @property
    def center(self) -> float:
        return scale_center(self.scale_points)


class TaskKind(models.TextChoices):
    T2I = "t2i", _("Text to image")
    EDIT = "edit", _("Image editing")
    INTERLEAVED = "interleaved", _("Interleaved text and images")
    REASONING = "reasoning", _("Multimodal reasoning")
    OTHER = "other", _("Other")


class GoldAction(models.TextChoices):
    FLAG = "flag", _("Flag the annotator")
    PAUSE = "pause", _("Pause their access until a lead re-admits them")


class TaskQuerySet(models.QuerySet):
    def active(self) -> "TaskQuerySet":
        """Tasks that are not archived: what annotators, member forms and imports see."""
        return self.filter(archived_at__isnull=True)


class Task(models.Model):
    """A category of pairs inside a project, with the aspects its annotators rate."""

    Kind = TaskKind
    GoldAction = GoldAction

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="tasks")
    slug = models.SlugField(max_length=64)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.OTHER)
    # [{"key": "faithfulness", "label": "Faithfulness", "help": "..."}, ...]
    aspects = models.JSONField(default=list, blank=True)
    guidelines = models.TextField(blank=True, help_text="Markdown, shown with the project's.")
    # Quality control (annotation/gold/services.py, metrics/annotator_flags.py).
    gold_rate = models.FloatField(
        default=0.1,
        validators=[MinValueValidator(0), MaxValueValidator(0.5)],
        help_text="Share of an annotator's pairs that are gold checks (0.1: one in ten).",
    )
    gold_min_accuracy = models.FloatField(
        default=0.7,
        validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text="Gold accuracy below this (after the minimum answers) triggers the action.",
    )
    gold_min_answers = models.PositiveSmallIntegerField(
        default=5,
        validators=[MinValueValidator(1)],
        help_text="Gold answers needed before an annotator is judged on them.",
    )
    gold_action = models.CharField(
        max_length=8,
        choices=GoldAction.choices,
        default=GoldAction.FLAG,
        help_text="What happens below the gold threshold.",
    )
    qualification_required = models.BooleanField(
        default=False,
        help_text="Annotators answer the task's qualification set (with feedback) first.",
    )
    qualification_pass = models.FloatField(
        default=0.8,
        validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text="Share of the qualification set to get right to be admitted.",
    )
    min_active_seconds = models.FloatField(
        "speed floor (s)",
        default=3.0,
        validators=[MinValueValidator(0)],
        help_text="Ratings with less active time than this count as too fast.",
    )
    # An archived task keeps its pairs, ratings and place in exports, but annotators no longer
    # see or claim it and imports refuse it (projects/services/tasks.py); a lead restores it.
    archived_at = models.DateTimeField(null=True, blank=True)
    archived_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )

    objects = TaskQuerySet.as_manager()

    class Meta:
        db_table = "annotation_task"  # kept from before the app split
        ordering = ["project", "slug"]
        constraints = [
            models.UniqueConstraint(fields=["project", "slug"], name="task_slug_unique_in_project"),
            models.CheckConstraint(
                condition=Q(kind__in=TaskKind.values),
                name="task_kind_valid",
            ),
            models.CheckConstraint(
                condition=Q(gold_rate__gte=0, gold_rate__lte=0.5), name="task_gold_rate_0_half"
            ),
            models.CheckConstraint(
                condition=Q(gold_min_accuracy__gte=0, gold_min_accuracy__lte=1),
                name="task_gold_min_accuracy_0_1",
            ),
            models.CheckConstraint(
                condition=Q(gold_min_answers__gte=1), name="task_gold_min_answers_ge_1"
            ),
            models.CheckConstraint(
                condition=Q(gold_action__in=GoldAction.values), name="task_gold_action_valid"
            ),
            models.CheckConstraint(
                condition=Q(min_active_seconds__gte=0), name="task_speed_floor_non_negative"
            ),
            models.CheckConstraint(
                condition=Q(qualification_pass__gte=0, qualification_pass__lte=1),
                name="task_qualification_pass_0_1",
            ),
            # Who archived is recorded only with when (the account may be deleted later;
            # the time stays).
            models.CheckConstraint(
                condition=Q(archived_by__isnull=True) | Q(archived_at__isnull=False),
                name="task_archived_by_has_archived_at",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project.slug}/{self.slug}"

    @property
    def archived(self) -> bool:
        return self.archived_at is not None


class MembershipRole(models.TextChoices):
    ANNOTATOR = "annotator", _("Annotator")
    LEAD = "lead", _("Lead")


class Membership(models.Model):
    """What a user may do in a project: annotate (optionally only some tasks) or lead."""

    Role = MembershipRole

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)
    tasks = models.ManyToManyField(
        Task, blank=True, help_text="Limit an annotator to these tasks (empty: all tasks)."
    )
    # Quotas: the most pairs the member may take (rated or held) in the whole project and in
    # each task; empty means no limit. The claim enforces them (annotation/services/quotas.py).
    project_quota = models.PositiveIntegerField(
        "pairs at most in the project",
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
    )
    task_quota = models.PositiveIntegerField(
        "pairs at most in each task",
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
    )

    class Meta:
        db_table = "annotation_membership"  # kept from before the app split
        constraints = [
            models.UniqueConstraint(fields=["user", "project"], name="membership_unique"),
            models.CheckConstraint(
                condition=Q(role__in=MembershipRole.values), name="membership_role_valid"
            ),
            models.CheckConstraint(
                condition=(Q(project_quota__isnull=True) | Q(project_quota__gte=1))
                & (Q(task_quota__isnull=True) | Q(task_quota__gte=1)),
                name="membership_quotas_positive",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} · {self.project.slug} · {self.role}"
