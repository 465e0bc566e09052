from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from annotation.models import Adjudication, AnnotatorRequest, Assignment, Flag, Rating
from content.models import Asset, Generator, Pair, Prompt, Response
from projects.models import Membership, Project, Task
from projects.models.placeholder import username_not_reserved


class OperatorAdmin(admin.ModelAdmin):
    """The admin is the operator's alone (config/admin.py): it sees every project's rows.
    Leads work in Arbiter's own pages, which are scoped by project."""


class RecordAdmin(OperatorAdmin):
    """View-only: rows that services write together with what is derived from them (a
    rating with its pair's count, consensus and the day's tallies; a verdict with its run's
    counts and the figures' data version). An edit or a delete here would bypass all of it,
    and lose an expert's work without a trace."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class TaskInline(admin.TabularInline):
    model = Task
    extra = 0
    fields = ["slug", "name", "kind"]


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]
    filter_horizontal = ["tasks"]


@admin.register(Project)
class ProjectAdmin(OperatorAdmin):
    list_display = ["slug", "name", "scale_points", "annotators_per_pair", "max_span"]
    search_fields = ["slug", "name"]
    inlines = [TaskInline, MembershipInline]


@admin.register(Task)
class TaskAdmin(OperatorAdmin):
    list_display = ["slug", "project", "kind"]
    list_filter = ["kind", "project"]


def _thumbnail(asset: Asset, size: int = 96):
    url = reverse("asset-file", args=[asset.sha256])
    return format_html(
        '<a href="{}" target="_blank"><img src="{}" alt="" style="max-width:{}px;max-height:{}px">'
        "</a>",
        url,
        url,
        size,
        size,
    )


@admin.register(Asset)
class AssetAdmin(OperatorAdmin):
    list_display = ["thumbnail", "sha256", "format", "width", "height", "size_bytes"]
    search_fields = ["sha256"]
    readonly_fields = ["thumbnail", "sha256", "format", "width", "height", "size_bytes", "file"]

    @admin.display(description="image")
    def thumbnail(self, asset):
        return _thumbnail(asset)

    def has_add_permission(self, request):
        return False  # images come in with their pairs (imports check them)

    def has_delete_permission(self, request, obj=None):
        return False  # prompts and responses refer to assets by hash


def _content_html(parts):
    """Render a part list for the admin: text escaped, images as thumbnails."""
    if parts is None:
        return "(prompt not available in the source)"
    hashes = [value for kind, value in parts if kind == "image"]
    assets = {a.sha256: a for a in Asset.objects.filter(sha256__in=hashes)}
    chunks = []
    for kind, value in parts:
        if kind == "image" and value in assets:
            chunks.append(_thumbnail(assets[value], 160))
        else:
            chunks.append(format_html("<p>{}</p>", value[:2000]))
    return format_html_join("", "{}", ((chunk,) for chunk in chunks))


@admin.register(Pair)
class PairAdmin(OperatorAdmin):
    list_display = [
        "external_id",
        "project",
        "task",
        "status",
        "label",
        "decided_by",
        "rating_count",
    ]
    list_filter = ["project", "task__kind", "status", "decided_by", "same_model"]
    search_fields = ["external_id"]
    list_select_related = ["project", "task"]
    raw_id_fields = ["prompt", "response_a", "response_b"]
    # The decision columns are derived by the consensus service: read-only here.
    readonly_fields = [
        "project",  # its ratings, assignments and verdicts stay where they were made
        "task",
        "prompt_view",
        "response_a_view",
        "response_b_view",
        "fingerprint",
        "label",
        "decided_by",
        "reference_label",
        "rating_count",
        "extra_annotators",
        "consensus_mean",
        "consensus_span",
    ]
    fieldsets = [
        (None, {"fields": ["external_id", "project", "task", "status", "source", "metadata"]}),
        ("Content", {"fields": ["prompt_view", "response_a_view", "response_b_view"]}),
        (
            "Decision",
            {
                "fields": [
                    "label",
                    "decided_by",
                    "reference_label",
                    "rating_count",
                    "extra_annotators",
                    "consensus_mean",
                    "consensus_span",
                ]
            },
        ),
        (
            "Records",
            {
                "classes": ["collapse"],
                "fields": ["prompt", "response_a", "response_b", "same_model", "fingerprint"],
            },
        ),
    ]

    def has_add_permission(self, request):
        return False  # pairs come in with their content through imports, which check it

    @admin.display(description="prompt")
    def prompt_view(self, pair):
        return _content_html(pair.prompt.content)

    @admin.display(description="response A")
    def response_a_view(self, pair):
        return _content_html(pair.response_a.content)

    @admin.display(description="response B")
    def response_b_view(self, pair):
        return _content_html(pair.response_b.content)


@admin.register(Prompt)
class PromptAdmin(OperatorAdmin):
    list_display = ["id", "project", "source"]
    list_filter = ["project"]
    readonly_fields = ["content_view"]

    @admin.display(description="content")
    def content_view(self, prompt):
        return _content_html(prompt.content)


@admin.register(Response)
class ResponseAdmin(OperatorAdmin):
    list_display = ["id", "generator"]
    readonly_fields = ["content_view"]
    list_select_related = ["generator"]

    @admin.display(description="content")
    def content_view(self, response):
        return _content_html(response.content)


@admin.register(Generator)
class GeneratorAdmin(OperatorAdmin):
    search_fields = ["name"]


@admin.register(Assignment)
class AssignmentAdmin(RecordAdmin):
    list_display = ["pair", "annotator", "status", "swapped", "lease_expires_at"]
    list_filter = ["status"]
    raw_id_fields = ["pair", "annotator"]


@admin.register(Rating)
class RatingAdmin(RecordAdmin):
    list_display = ["pair", "annotator", "overall", "scale", "imported", "created_at"]
    list_filter = ["imported"]
    raw_id_fields = ["assignment", "pair", "annotator"]


@admin.register(Adjudication)
class AdjudicationAdmin(RecordAdmin):
    """Decisions are made on the pair page, whose service also re-decides the pair and
    resolves its flags."""

    list_display = ["pair", "decision", "lead", "created_at"]
    raw_id_fields = ["pair"]


@admin.register(AnnotatorRequest)
class AnnotatorRequestAdmin(RecordAdmin):
    """Requests are made through `pair_request_annotator`, which also raises the pair's
    `extra_annotators`."""

    list_display = ["pair", "lead", "created_at"]
    raw_id_fields = ["pair"]


@admin.register(Flag)
class FlagAdmin(OperatorAdmin):
    list_display = ["pair", "reason", "reported_by", "created_at", "resolved_at"]
    list_filter = ["reason", ("resolved_at", admin.EmptyFieldListFilter)]
    raw_id_fields = ["pair", "assignment", "reported_by", "resolved_by"]


class PersonCreationForm(AdminUserCreationForm):
    """The operator's new accounts refuse a placeholder's kind of name, as every form that
    names an account does (projects.models.placeholder.username_not_reserved)."""

    def clean_username(self):
        username = super().clean_username()
        username_not_reserved(username)
        return username


class PersonChangeForm(UserChangeForm):
    def clean_username(self):  # a rename into the placeholders' names, likewise
        username = self.cleaned_data["username"]
        if username != self.instance.username:
            username_not_reserved(username)
        return username


admin.site.unregister(User)


@admin.register(User)
class PersonAdmin(UserAdmin):
    add_form = PersonCreationForm
    form = PersonChangeForm
