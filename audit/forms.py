from django import forms
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from audit.models import AuditKind


class TrailFilterForm(forms.Form):
    kind = forms.ChoiceField(
        label=_("Kind"), required=False, choices=[("", _("Any"))] + AuditKind.choices
    )
    who = forms.CharField(label=_("Who (user name)"), required=False, max_length=150)
    since = forms.DateField(
        label=pgettext_lazy("date range", "From"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    until = forms.DateField(
        label=pgettext_lazy("date range", "To"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
    )
