from projects.models.identity import ExternalIdentity
from projects.models.invitation import Invitation
from projects.models.placeholder import PlaceholderAccount
from projects.models.project import Membership, Project, Task

__all__ = ["ExternalIdentity", "Invitation", "Membership", "PlaceholderAccount", "Project", "Task"]
