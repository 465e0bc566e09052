from annotation.models.content import Asset, Generator, Prompt, Response
from annotation.models.flag import Flag
from annotation.models.gold import AnnotatorPause, GoldAnswer, Qualification
from annotation.models.import_job import ImportJob
from annotation.models.invitation import Invitation
from annotation.models.pair import Adjudication, AnnotatorRequest, Pair, Side
from annotation.models.placeholder import PlaceholderAccount
from annotation.models.project import Membership, Project, Task
from annotation.models.rating import AnnotatorDay, AspectScore, Assignment, Rating

__all__ = [
    "Adjudication",
    "AnnotatorDay",
    "AnnotatorPause",
    "AnnotatorRequest",
    "AspectScore",
    "Asset",
    "Assignment",
    "Flag",
    "Generator",
    "GoldAnswer",
    "ImportJob",
    "Invitation",
    "Membership",
    "Pair",
    "PlaceholderAccount",
    "Project",
    "Prompt",
    "Qualification",
    "Rating",
    "Response",
    "Side",
    "Task",
]
