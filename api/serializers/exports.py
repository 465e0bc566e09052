"""Dataset export jobs (leads only)."""

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from exports.models import ExportJob
from exports.writer import FILE_FORMATS
from projects.models import Task


class ExportStartSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=FILE_FORMATS, default="jsonl")
    task = serializers.SlugField(
        max_length=64, required=False, help_text="Only this task (slug); all when absent."
    )
    include_dropped = serializers.BooleanField(default=False)
    with_verdicts = serializers.BooleanField(default=False)
    include_archived = serializers.BooleanField(
        default=True, help_text="Archived tasks too (a task named in `task` always is)."
    )


class ExportJobSerializer(serializers.ModelSerializer):
    """An export job; `download` is set once it is done."""

    format = serializers.CharField(source="file_format", read_only=True)
    task: "serializers.SlugRelatedField[Task]" = serializers.SlugRelatedField(
        slug_field="slug", read_only=True, allow_null=True
    )
    requested_by = serializers.CharField(source="requested_by.username", read_only=True)
    summary = serializers.DictField(
        child=serializers.IntegerField(),
        read_only=True,
        help_text="pairs, ratings, images (once done)",
    )
    url = serializers.SerializerMethodField()
    download = serializers.SerializerMethodField()

    class Meta:
        model = ExportJob
        fields = [
            "id", "status", "format", "task", "include_dropped", "with_verdicts",
            "include_archived", "size_bytes", "summary", "error", "requested_by", "created_at",
            "started_at", "finished_at", "url", "download",
        ]  # fmt: skip
        read_only_fields = fields

    def _url(self, name: str, job: ExportJob) -> str:
        path = reverse(name, kwargs={"project": job.project_id, "id": job.pk})
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request else path

    def get_url(self, job: ExportJob) -> str:
        return self._url("api-export-job", job)

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_download(self, job: ExportJob) -> str | None:
        if job.status != ExportJob.Status.DONE:
            return None
        return self._url("api-export-download", job)
