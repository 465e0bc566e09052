"""The operator's view of the whole trail in the admin: read-only, every project's entries
and the sign-ins. auditlog's own admin (registered when the admin discovers the apps' admin
modules) is replaced by this one, which may add, change or delete nothing: `admin_register`,
called from AuditConfig.ready, after the discovery (`audit` is listed before `auditlog`, so
registering here at import would make auditlog's own registration fail)."""

from typing import TYPE_CHECKING

from django.contrib import admin
from django.http import HttpRequest

from audit.models import AuditEntry

if TYPE_CHECKING:  # generic in the stubs only
    EntryAdmin = admin.ModelAdmin[AuditEntry]
else:
    EntryAdmin = admin.ModelAdmin


class AuditEntryAdmin(EntryAdmin):
    date_hierarchy = "timestamp"
    list_display = ["timestamp", "kind", "action", "object_repr", "project_id", "actor_name",
                    "remote_addr"]  # fmt: skip
    list_filter = ["kind", "action"]
    search_fields = ["object_repr", "actor_name", "remote_addr"]
    ordering = ["-timestamp", "-id"]

    def get_readonly_fields(self, request: HttpRequest, obj: AuditEntry | None = None) -> list[str]:
        return [field.name for field in self.model._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: AuditEntry | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: AuditEntry | None = None) -> bool:
        return False


def admin_register() -> None:
    if admin.site.is_registered(AuditEntry):
        admin.site.unregister(AuditEntry)
    admin.site.register(AuditEntry, AuditEntryAdmin)
