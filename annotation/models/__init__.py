# Gold checks and qualification keep their models beside their code (annotation/gold/).
from annotation.gold.models import AnnotatorPause, GoldAnswer, Qualification
from annotation.models.adjudication import Adjudication, AnnotatorRequest
from annotation.models.flag import Flag
from annotation.models.pair_thread import PairMessage, PairThread
from annotation.models.rating import AnnotatorDay, AspectScore, Assignment, Rating

__all__ = [
    "Adjudication",
    "AnnotatorDay",
    "AnnotatorPause",
    "AnnotatorRequest",
    "AspectScore",
    "Assignment",
    "Flag",
    "GoldAnswer",
    "PairMessage",
    "PairThread",
    "Qualification",
    "Rating",
]
