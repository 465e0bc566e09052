"""When an annotator meets a gold check, and which one, in one place for the claim
(annotation/gold/services.py), the progress counter (annotation/selectors/progress.py) and the
preloading guess (annotation/selectors/upcoming.py), so that "Pair 8 of 40" never moves when a
gold check is served and the guess preloads a gold check exactly when the claim will serve it.

The k-th gold check of an annotator falls at a position drawn inside the k-th window of
P = round(1/rate) pairs (the first window at most 10 wide), keyed with the server's secret so
the source code does not tell where. One behind schedule (gold pairs added mid-task, a rate
raised) is caught up at most every P/2 pairs: never a burst of gold checks in a row.
"""

import hashlib
import hmac

from django.conf import settings

from projects.models import Task

FIRST_GOLD_WITHIN = 10  # every annotator meets a gold check within their first 10 pairs


def gold_period(rate: float) -> int:
    return max(1, round(1 / rate))


def gold_window_offset(user_id: int, task_id: int, window: int, width: int) -> int:
    """Where (1..width) inside its window the annotator's window-th gold check falls."""
    return 1 + _keyed(f"gold:{user_id}:{task_id}:{window}") % width


def gold_draw(user_id: int, task_id: int, drawn: int, left: list[int]) -> int:
    """Which of the gold pairs `left` (non-empty, in a fixed order) is the annotator's next
    gold check, after `drawn` of them: a keyed hash, not random.choice, so the same question
    always has the same answer (the guess that preloads the next pair's images must name the
    gold check the claim will serve, or an unpreloaded pair would give a gold check away)
    while annotators still meet the gold checks in different orders."""
    return left[_keyed(f"gold-draw:{user_id}:{task_id}:{drawn}") % len(left)]


def _keyed(message: str) -> int:
    digest = hmac.new(settings.SECRET_KEY.encode(), message.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


def golds_due(user_id: int, task: Task, position: int) -> int:
    """How many gold checks an annotator should have met by their position-th pair."""
    if task.gold_rate <= 0 or position <= 0:
        return 0
    period = gold_period(task.gold_rate)
    window = (position - 1) // period  # 0-based window of this position
    width = min(period, FIRST_GOLD_WITHIN) if window == 0 else period
    offset = gold_window_offset(user_id, task.pk, window, width)
    return window + (1 if position - window * period >= offset else 0)


def gold_is_due(
    user_id: int, task: Task, position: int, golds_so_far: int, since_last: int | None
) -> bool:
    """Whether the position-th pair should be a gold check: behind schedule, and at least P/2
    pairs after the previous one (`since_last`: pairs since it; None before the first). On
    schedule this never delays a check out of its window."""
    if golds_so_far >= golds_due(user_id, task, position):
        return False
    return since_last is None or since_last >= max(1, gold_period(task.gold_rate) // 2)


def golds_ahead(
    user_id: int,
    task: Task,
    position: int,
    golds_so_far: int,
    since_last: int | None,
    real_left: int,
    gold_left: int,
) -> int:
    """How many gold checks the annotator will still meet, `position` pairs in, with
    `real_left` real pairs and `gold_left` gold checks left to them (gold comes only while
    real work remains, as the claim does)."""
    ahead = 0
    while real_left > 0:
        if gold_left > 0 and gold_is_due(user_id, task, position + 1, golds_so_far, since_last):
            golds_so_far, gold_left, ahead, since_last = (
                golds_so_far + 1,
                gold_left - 1,
                ahead + 1,
                0,
            )
        else:
            real_left -= 1
            since_last = None if since_last is None else since_last + 1
        position += 1
    return ahead
