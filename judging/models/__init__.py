from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from core.db_indexes import CoveringIndex

# The package's models, split for length: the batch one names the others by string.
from judging.models.batches import BatchStatus, ProviderBatch  # noqa: F401

# Bounds of what a lead may ask of a judge: enough for any real provider, too little to turn
# the server into a load generator (see SECURITY.md).
MAX_CONCURRENCY = 256
MAX_REQUESTS_PER_MINUTE = 100_000
MAX_TIMEOUT_SECONDS = 600
MAX_SAMPLES = 20
API_BACKENDS = ("openai", "anthropic")
# Sampling parameters a judge may set, and their ranges. They are merged into the request
# body, so anything else could override the model, the messages, `n` or the stream mode.
SAMPLING_RANGES = {
    "temperature": (0.0, 2.0),
    "top_p": (0.0, 1.0),
    "top_k": (1, 1000),
    "max_tokens": (1, 65_536),
    "max_completion_tokens": (1, 65_536),
    "seed": (0, 2**31 - 1),
}


class Connection(models.Model):
    """A model provider the operator has set up: where calls go and which environment
    variable of the server holds the key. Only operators create or change one; leads pick a
    connection the operator allowed for their project and never see its URL or variable."""

    class Backend(models.TextChoices):
        OPENAI = "openai", _("OpenAI-compatible chat completions")
        ANTHROPIC = "anthropic", _("Anthropic Messages")

    name = models.SlugField(max_length=64, unique=True)
    backend = models.CharField(max_length=16, choices=Backend.choices)
    base_url = models.URLField(max_length=500)
    # The NAME of the server's environment variable holding the key (empty: no key sent).
    api_key_env = models.CharField(max_length=100, blank=True)
    all_projects = models.BooleanField(default=False)
    projects = models.ManyToManyField("projects.Project", blank=True, related_name="connections")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(backend__in=API_BACKENDS), name="connection_backend_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class JudgeBackend(models.TextChoices):
    OPENAI = "openai", _("OpenAI-compatible chat completions")
    ANTHROPIC = "anthropic", _("Anthropic Messages")
    ALWAYS_A = "always-a", _("Baseline: always A")
    RANDOM = "random", _("Baseline: random (seeded)")
    EXTERNAL = "external", _("External predictions (imported)")


class Judge(models.Model):
    """A configured AI judge. A judge belongs to one project, whose leads manage it; a judge
    without a project is the operator's, which leads may run but not change. API judges call
    through a `Connection` of the operator's; the key itself is never stored."""

    Backend = JudgeBackend

    project = models.ForeignKey(
        "projects.Project",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="judges",
        help_text="empty: the operator's judge, shared with every project",
    )
    name = models.CharField(max_length=100)
    backend = models.CharField(max_length=16, choices=Backend.choices)
    connection = models.ForeignKey(
        Connection, null=True, blank=True, on_delete=models.PROTECT, related_name="judges"
    )
    model = models.CharField(max_length=200, blank=True)
    sampling = models.JSONField(default=dict, blank=True)  # temperature, max_tokens, seed ...
    # {task kind: template name}; a kind not named uses the built-in "mmrb2-<kind>" template.
    templates = models.JSONField(default=dict, blank=True)
    concurrency = models.PositiveSmallIntegerField(
        default=4, validators=[MinValueValidator(1), MaxValueValidator(MAX_CONCURRENCY)]
    )
    # A hard cap; empty (the default): none, the adaptive concurrency finds what the API
    # takes (judging/rate_limits.py).
    requests_per_minute = models.PositiveIntegerField(
        null=True,
        blank=True,
        default=None,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_REQUESTS_PER_MINUTE)],
    )
    timeout_seconds = models.FloatField(
        default=60, validators=[MinValueValidator(0.1), MaxValueValidator(MAX_TIMEOUT_SECONDS)]
    )
    price_input_per_mtok = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    price_output_per_mtok = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "name"],
                condition=Q(project__isnull=False),
                name="judge_name_unique_in_project",
            ),
            models.UniqueConstraint(
                fields=["name"], condition=Q(project__isnull=True), name="judge_name_unique_shared"
            ),
            models.CheckConstraint(
                condition=Q(backend__in=JudgeBackend.values),
                name="judge_backend_valid",
            ),
            # API judges call through a connection; baselines and imported judges never call.
            models.CheckConstraint(
                condition=(Q(backend__in=API_BACKENDS) & Q(connection__isnull=False))
                | (~Q(backend__in=API_BACKENDS) & Q(connection__isnull=True)),
                name="judge_connection_iff_api",
            ),
            models.CheckConstraint(
                condition=Q(concurrency__gte=1, concurrency__lte=MAX_CONCURRENCY),
                name="judge_concurrency_range",
            ),
            models.CheckConstraint(
                condition=Q(requests_per_minute__isnull=True)
                | Q(requests_per_minute__gte=1, requests_per_minute__lte=MAX_REQUESTS_PER_MINUTE),
                name="judge_rpm_range",
            ),
            models.CheckConstraint(
                condition=Q(timeout_seconds__gt=0, timeout_seconds__lte=MAX_TIMEOUT_SECONDS),
                name="judge_timeout_range",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class JudgeRunStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    RUNNING = "running", _("Running")
    CANCELLED = "cancelled", _("Cancelled")
    FINISHED = "finished", _("Finished")


class JudgeRunPurpose(models.TextChoices):
    EVALUATE = "evaluate", _("Evaluate against the experts")
    ENSEMBLE = "ensemble", _("Ensemble filter of candidate pairs")
    IMPORT = "import", _("Imported predictions")


class JudgeRunMode(models.TextChoices):
    LIVE = "live", _("Live calls")
    # The provider's batch API (OpenAI /v1/batches, Anthropic Message Batches): about half
    # the price, answers within 24 hours (judging/services/batches.py).
    BATCH = "batch", _("Provider batch")


# What a provider's batch API charges against live calls (OpenAI and Anthropic: half).
BATCH_PRICE_FACTOR = 0.5


class JudgeRun(models.Model):
    """One run of a judge over a selection of a project's pairs (or one imported file)."""

    Status = JudgeRunStatus
    Purpose = JudgeRunPurpose
    Mode = JudgeRunMode

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="runs")
    project = models.ForeignKey("projects.Project", on_delete=models.CASCADE, related_name="runs")
    task = models.ForeignKey("projects.Task", null=True, blank=True, on_delete=models.CASCADE)
    samples = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(MAX_SAMPLES)]
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    source = models.CharField(max_length=255, blank=True)  # file name of imported predictions
    purpose = models.CharField(max_length=16, choices=Purpose.choices, default=Purpose.EVALUATE)
    mode = models.CharField(max_length=8, choices=JudgeRunMode.choices, default=JudgeRunMode.LIVE)
    # Empty for a pairwise run; else the pointwise scales its templates use ("likert-10", or
    # several comma-separated across task kinds) or "imported" for imported scores.
    pointwise_scale = models.CharField(max_length=48, blank=True)
    trials = models.PositiveIntegerField(default=0)  # pairs × 2 orders (1 pointwise) × samples
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(samples__gte=1, samples__lte=MAX_SAMPLES),
                name="judge_run_samples_range",
            ),
            models.CheckConstraint(
                condition=Q(status__in=JudgeRunStatus.values),
                name="judge_run_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(purpose__in=JudgeRunPurpose.values),
                name="judge_run_purpose_valid",
            ),
            models.CheckConstraint(
                condition=Q(mode__in=JudgeRunMode.values), name="judge_run_mode_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} of {self.judge} on {self.project}"


class VerdictOrder(models.TextChoices):
    FORWARD = "forward", "Forward (A shown first)"
    REVERSE = "reverse", "Reverse (B shown first)"
    # A pointwise judge scores each response alone: no order was shown, one trial per sample.
    POINTWISE = "pointwise", "Pointwise (each response scored alone)"


class VerdictChoice(models.TextChoices):
    A = "A", "A"
    B = "B", "B"
    TIE = "tie", "Tie"
    INVALID = "invalid", "Invalid (names no side)"


class Verdict(models.Model):
    """A judge's answer on one pair, in one presentation order, for one sample.

    `choice` is canonical: for a `reverse` verdict (B shown first) the judge's letter has been
    flipped back. A call that finally failed has no choice and an `error`; metrics count it as
    missing, never as an answer.

    A `pointwise` verdict holds the scores the judge gave each response in its own request
    (`score_a`, `score_b`, on the template's scale, or imported); its choice is the higher one,
    a tie when equal, invalid when a score could not be read.
    """

    Order = VerdictOrder
    Choice = VerdictChoice

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="verdicts")
    pair = models.ForeignKey("content.Pair", on_delete=models.CASCADE, related_name="verdicts")
    run = models.ForeignKey(
        JudgeRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="verdicts"
    )
    order = models.CharField(max_length=9, choices=Order.choices)
    sample = models.PositiveSmallIntegerField(default=0)
    # NULL, not "": a failed call has no answer at all (see the constraint below).
    choice = models.CharField(  # noqa: DJ001
        max_length=8, choices=Choice.choices, null=True, blank=True
    )
    score_a = models.FloatField(null=True, blank=True)
    score_b = models.FloatField(null=True, blank=True)
    raw_output = models.TextField(blank=True)
    error = models.TextField(blank=True)
    template = models.ForeignKey(
        "judging.PromptTemplate", null=True, blank=True, on_delete=models.PROTECT
    )
    # The answer came from the response cache (an identical request paid before): no call.
    from_cache = models.BooleanField(default=False)
    # What was changed in the images to fit the API's limits (judging/image_limits.py): one
    # entry per image scaled or re-encoded for this request, never for storage.
    images_adapted = models.JSONField(default=list, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)  # when this answer (or error) came

    class Meta:
        indexes = [
            # The dashboards read every verdict of a project's pairs: an index-only scan
            # instead of reading the raw outputs stored in the same rows (PostgreSQL).
            CoveringIndex(
                fields=["pair"],
                covering=["judge", "order", "sample", "choice", "created_at"],
                name="verdict_pair_covering",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["judge", "pair", "order", "sample"], name="verdict_unique_trial"
            ),
            models.CheckConstraint(
                condition=Q(order__in=VerdictOrder.values), name="verdict_order_valid"
            ),
            models.CheckConstraint(
                condition=Q(choice__in=VerdictChoice.values) | Q(choice__isnull=True),
                name="verdict_choice_valid",
            ),
            # Either an answer or an error, never both, never neither.
            models.CheckConstraint(
                condition=(Q(choice__isnull=False) & Q(error=""))
                | (Q(choice__isnull=True) & ~Q(error="")),
                name="verdict_choice_xor_error",
            ),
            models.CheckConstraint(
                condition=Q(order=VerdictOrder.POINTWISE)
                | Q(score_a__isnull=True, score_b__isnull=True),
                name="verdict_scores_only_pointwise",
            ),
            # A pointwise choice is what its scores say (invalid: a score is missing).
            models.CheckConstraint(
                condition=~Q(order=VerdictOrder.POINTWISE)
                | Q(choice__isnull=True)
                | Q(choice=VerdictChoice.INVALID)
                | Q(choice=VerdictChoice.A, score_a__gt=F("score_b"))
                | Q(choice=VerdictChoice.B, score_a__lt=F("score_b"))
                | Q(choice=VerdictChoice.TIE, score_a=F("score_b")),
                name="verdict_pointwise_choice_from_scores",
            ),
        ]

    def __str__(self) -> str:
        return (
            f"{self.judge} · {self.pair} · {self.order}#{self.sample}: {self.choice or self.error}"
        )


class JudgeRunChunk(models.Model):
    """A slice of a run's pairs, executed by one Celery task. A chunk is done when every
    trial of its pairs has a verdict (an answer or a final error); resuming a run re-enqueues
    the chunks that are not done, and a chunk only calls for the trials still missing."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    pair_ids = models.JSONField()
    done = models.BooleanField(default=False)
    attempts = models.PositiveIntegerField(default=0)  # deliveries, >1 after a crash or resume
    finished_at = models.DateTimeField(null=True, blank=True)
    # Tallies of the chunk's trials, refreshed from the verdicts at every flush (a duplicate
    # delivery cannot double count): answers naming a side, ties, invalid answers, failures.
    answered = models.PositiveIntegerField(default=0)
    ties = models.PositiveIntegerField(default=0)
    invalid = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    cached = models.PositiveIntegerField(default=0)  # of the answers: from the response cache
    # A batch-mode chunk whose parts are still being sent: a poll that collects every part
    # already sent must not close it (judging/services/batches.py).
    submitting = models.BooleanField(default=False)
    # The judge's adaptive concurrency as this chunk saw it change: [[unix time, slots], ...]
    # (judging/rate_limits.py), for the run page's chart.
    concurrency_log = models.JSONField(default=list, blank=True)
    input_tokens = models.PositiveBigIntegerField(default=0)
    output_tokens = models.PositiveBigIntegerField(default=0)
    # When the chunk last stored verdicts: what the dashboards' data version reads instead of
    # aggregating every verdict of the project (dashboards/snapshots.py).
    verdicts_stored_at = models.DateTimeField(null=True, blank=True)
    # When its message went to the broker; none: waiting for a worker (core/outbox.py).
    enqueued_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [
            models.UniqueConstraint(fields=["run", "index"], name="judge_run_chunk_unique"),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} chunk {self.index}"


class CachedReply(models.Model):
    """A judge API's answer to one request, kept so that the identical request is never paid
    twice, across runs, judges and projects (judging/response_cache.py). `key` is the SHA-256
    of what identifies the request: the connection's URL and backend, the model, the sampling
    as sent, the template's text and format, the order, the sample, and the content (texts,
    and images by their hash and the size they were sent at)."""

    key = models.CharField(max_length=64, primary_key=True)
    text = models.TextField()
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.key[:12]


class PromptTemplateAnswerFormat(models.TextChoices):
    JSON = "json", _('JSON with "better_response" (MMRB2)')
    MJBENCH = "mjbench", _("BETTER IMAGE: 0|1|2 (MJ-Bench)")
    LIKERT_5 = "likert-5", _("SCORE: 1-5, each response alone (pointwise)")
    LIKERT_10 = "likert-10", _("SCORE: 1-10, each response alone (pointwise)")
    SCORE_100 = "score-100", _("SCORE: 0-100, each response alone (pointwise)")


# The answer formats of pointwise templates and the range of their scores (inclusive).
# Keyed by str: a template's answer_format is read back as a plain string.
POINTWISE_SCALES: dict[str, tuple[int, int]] = {
    PromptTemplateAnswerFormat.LIKERT_5: (1, 5),
    PromptTemplateAnswerFormat.LIKERT_10: (1, 10),
    PromptTemplateAnswerFormat.SCORE_100: (0, 100),
}
# The scale of scores imported from files (MJ-Bench's scoring models: CLIP, HPS, ...).
IMPORTED_SCALE = "imported"


class PromptTemplate(models.Model):
    """A judge prompt. Editing makes a new version; verdicts point at the version they used.
    A template without a project is a built-in (read-only, its text lives in
    judging/prompts.py); a lead's edit makes a versioned copy in their project, which that
    project's runs use in place of the built-in of the same name.

    The body is text with three markers, `{prompt}`, `{first}` and `{second}`, replaced by the
    interleaved content (text and images) of the prompt and of the responses in the order
    shown; `answer_format` says how the reply is parsed. A pointwise template (a format of
    POINTWISE_SCALES) has `{prompt}` and `{response}` instead: each response is sent alone."""

    AnswerFormat = PromptTemplateAnswerFormat

    project = models.ForeignKey(
        "projects.Project",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="prompt_templates",
    )
    name = models.SlugField(max_length=64)
    version = models.PositiveIntegerField()
    answer_format = models.CharField(max_length=16, choices=AnswerFormat.choices)
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "name", "version"],
                condition=Q(project__isnull=False),
                name="prompt_template_version_in_project",
            ),
            models.UniqueConstraint(
                fields=["name", "version"],
                condition=Q(project__isnull=True),
                name="prompt_template_version_built_in",
            ),
            models.CheckConstraint(
                condition=Q(answer_format__in=PromptTemplateAnswerFormat.values),
                name="prompt_template_format_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class TaskEnsemble(models.Model):
    """The judges whose agreement removes a task's easy pairs before annotation."""

    task = models.OneToOneField("projects.Task", on_delete=models.CASCADE, related_name="ensemble")
    judges = models.ManyToManyField(Judge, related_name="ensembles")
    # Share of verdicts agreeing with the majority at or above which a pair is easy;
    # empty: the project's ensemble_threshold (default 0.9).
    threshold = models.FloatField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(threshold__isnull=True) | Q(threshold__gt=0.5, threshold__lte=1),
                name="task_ensemble_threshold_range",
            ),
        ]

    def __str__(self) -> str:
        return f"ensemble of {self.task}"
