"""The operator's admin of webhooks: destinations (URL, the variable holding the signing
secret, which projects may use it), and the subscriptions and deliveries, to read."""

from django import forms
from django.contrib import admin

from annotation.admin import OperatorAdmin, RecordAdmin
from core.errors import Invalid
from webhooks.models import Delivery, Destination, Subscription
from webhooks.services import destination_secret_env_check, destination_url_check


class DestinationForm(forms.ModelForm):
    url = forms.URLField(max_length=500, assume_scheme="https")

    class Meta:
        model = Destination
        fields = ["name", "url", "secret_env", "all_projects", "projects"]
        help_texts = {
            "secret_env": "The NAME of the server's environment variable holding the signing "
            "secret (HMAC-SHA256), never the secret itself.",
            "all_projects": "Or choose the projects below.",
        }

    def clean_url(self):
        return _field(destination_url_check, self.cleaned_data["url"])

    def clean_secret_env(self):
        return _field(destination_secret_env_check, self.cleaned_data["secret_env"].strip())


def _field(check, value):
    try:
        return check(value)
    except Invalid as invalid:
        raise forms.ValidationError(invalid.message) from None


@admin.register(Destination)
class DestinationAdmin(OperatorAdmin):
    form = DestinationForm
    list_display = ["name", "url", "secret_env", "all_projects"]
    filter_horizontal = ["projects"]


@admin.register(Subscription)
class SubscriptionAdmin(OperatorAdmin):
    list_display = ["project", "destination", "kinds", "updated_at"]
    list_filter = ["destination", "project"]


@admin.register(Delivery)
class DeliveryAdmin(RecordAdmin):
    list_display = ["id", "subscription", "kind", "status", "attempts", "last_status_code"]
    list_filter = ["status", "kind"]
