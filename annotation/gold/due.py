"""Which gold check the next claim serves, read without claiming it: the claim
(annotation/services/assignments.py) serves it, the preloading guess
(annotation/selectors/upcoming.py) preloads its images. One rule for both, so that a gold
check is preloaded exactly like a real pair: nothing on the page sets it apart."""

from django.contrib.auth.models import User

from annotation.gold.schedule import gold_draw, gold_is_due
from annotation.gold.selectors import gold_history
from content.models import Pair
from projects.models import Task

GOLD_DRAWN_FROM = 1000  # a gold check is drawn among this many left to the annotator


def gold_pair_due(user: User, task: Task) -> int | None:
    """The gold check to hand the user next, when one is due and one is left for them (no
    query at a gold rate of 0, one when the task has no gold check left for them, three
    otherwise). The same answer as long as the user is handed no other pair: their history
    counts every pair handed to them, a leased one as a rated one, so the guess made while
    they rate the current pair sees what the claim after its submission will see."""
    if task.gold_rate <= 0:
        return None
    left = list(
        Pair.objects.filter(task=task, status=Pair.Status.GOLD, gold__qualification=False)
        .exclude(assignments__annotator=user)
        .order_by("pk")
        .values_list("pk", flat=True)[:GOLD_DRAWN_FROM]
    )
    if not left:
        return None
    position, golds_so_far, since_last = gold_history(user, task)
    if not gold_is_due(user.pk, task, position + 1, golds_so_far, since_last):
        return None
    return gold_draw(user.pk, task.pk, golds_so_far, left)  # in a different order for each
