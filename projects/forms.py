"""The forms of the members and invitation pages and of the account's API tokens. They check
the shape of the input; the services (projects/services/members.py, invitations.py,
api_tokens.py) hold the rules and write."""

from typing import Any

from django import forms
from django.contrib.auth.password_validation import password_validators_help_texts
from django.core.validators import MaxValueValidator
from django.utils.text import format_lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from projects.access import member_projects
from projects.models import ApiToken, Membership, Project, Task
from projects.services.api_tokens import default_days as api_token_default_days
from projects.services.api_tokens import max_days as api_token_max_days
from projects.services.invitations import DEFAULT_DAYS, MAX_DAYS


class _ProjectTasksField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: Task) -> str:
        return obj.name


def _tasks_field(project: Project, *, archived: bool = False) -> _ProjectTasksField:
    """The project's tasks as checkboxes; archived ones only with `archived` (a membership
    limited to an archived task keeps it ticked, so saving its role never widens it)."""
    tasks = Task.objects.filter(project=project)
    return _ProjectTasksField(
        queryset=(tasks if archived else tasks.active()).order_by("slug"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label=_("Tasks"),
        help_text=_("None ticked: every task of the project, including tasks added later."),
    )


class InvitationForm(forms.Form):
    role = forms.ChoiceField(
        label=gettext_lazy("Role"),
        choices=Membership.Role.choices,
        initial=Membership.Role.ANNOTATOR,
    )
    days = forms.IntegerField(
        label=gettext_lazy("Valid for (days)"),
        min_value=1,
        max_value=MAX_DAYS,
        initial=DEFAULT_DAYS,
        help_text=format_lazy(
            gettext_lazy("1 to {days} days; the link works once."), days=MAX_DAYS
        ),
    )
    email = forms.EmailField(
        label=gettext_lazy("Email"),
        required=False,
        help_text=gettext_lazy("Optional: the link is mailed there when this server sends mail."),
    )
    note = forms.CharField(
        label=gettext_lazy("Note"),
        required=False,
        max_length=200,
        help_text=gettext_lazy("Optional, for the leads: who it is for."),
    )

    def __init__(self, project: Project, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["tasks"] = _tasks_field(project)


def _quota_field(label) -> forms.IntegerField:
    return forms.IntegerField(label=label, min_value=1, max_value=10_000_000, required=False)


class MembershipForm(forms.Form):
    role = forms.ChoiceField(label=gettext_lazy("Role"), choices=Membership.Role.choices)
    project_quota = _quota_field(gettext_lazy("Pairs at most in the project"))
    task_quota = _quota_field(gettext_lazy("Pairs at most in each task"))

    def __init__(self, project: Project, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["tasks"] = _tasks_field(project, archived=True)


class MemberAddForm(forms.Form):
    """An existing account added by its username or e-mail (no link to send). Prefixed: it
    shares its page with the invitation form."""

    prefix = "add"

    identifier = forms.CharField(
        label=gettext_lazy("Username or e-mail"),
        max_length=254,
        help_text=gettext_lazy("The exact username, or the e-mail address of exactly one account."),
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )
    role = forms.ChoiceField(
        label=gettext_lazy("Role"),
        choices=Membership.Role.choices,
        initial=Membership.Role.ANNOTATOR,
    )

    def __init__(self, project: Project, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["tasks"] = _tasks_field(project)


class AcceptForm(forms.Form):
    """A new account on an invitation link (the password validators run in the service)."""

    username = forms.CharField(
        label=gettext_lazy("Username"),
        max_length=150,
        help_text=gettext_lazy("Letters, digits and @ . + - _ only; how you sign in."),
        widget=forms.TextInput(attrs={"autocomplete": "username", "autofocus": True}),
    )
    password1 = forms.CharField(
        label=gettext_lazy("Password"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )
    password2 = forms.CharField(
        label=gettext_lazy("Password (again)"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["password1"].help_text = " ".join(password_validators_help_texts())

    def clean(self):
        data = super().clean()
        if data.get("password1") and data.get("password1") != data.get("password2"):
            self.add_error("password2", _("The two passwords differ."))
        return data


class ApiTokenForm(forms.Form):
    """A new API token on the account page (projects/services/api_tokens.py holds the rules)."""

    name = forms.CharField(
        label=gettext_lazy("Name"),
        max_length=100,
        help_text=gettext_lazy("What it is for, e.g. “nightly export”."),
    )
    days = forms.IntegerField(label=gettext_lazy("Expires after (days)"), min_value=1)
    access = forms.ChoiceField(
        label=gettext_lazy("Access"),
        choices=[
            (ApiToken.Access.READ, gettext_lazy("Read-only")),
            (ApiToken.Access.WRITE, gettext_lazy("Read and write")),
        ],
        initial=ApiToken.Access.READ,
        widget=forms.RadioSelect,
    )
    project = forms.TypedChoiceField(
        label=gettext_lazy("Projects"), coerce=int, empty_value=None, required=False
    )

    def __init__(self, user: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        most = api_token_max_days()
        days = self.fields["days"]
        assert isinstance(days, forms.IntegerField)
        days.max_value = most
        days.validators.append(MaxValueValidator(most))
        days.widget.attrs["max"] = most
        days.initial = api_token_default_days()
        days.help_text = _("1 to %(days)s days.") % {"days": most}
        choices: list[tuple[Any, str]] = [("", _("All my projects"))]
        choices += [(p.pk, p.name) for p in member_projects(user).order_by("name", "pk")]
        project = self.fields["project"]
        assert isinstance(project, forms.TypedChoiceField)
        project.choices = choices
        project.help_text = _("One project: the token reaches nothing else.")
