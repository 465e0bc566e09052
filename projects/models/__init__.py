from projects.models.api_token import ApiToken
from projects.models.identity import ExternalIdentity
from projects.models.invitation import Invitation
from projects.models.placeholder import PlaceholderAccount
from projects.models.project import Membership, Project, Task

__all__ = [
    "ApiToken",
    "ExternalIdentity",
    "Invitation",
    "Membership",
    "PlaceholderAccount",
    "Project",
    "Task",
]
