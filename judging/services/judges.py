from judging.models import Judge


def judge_get_or_create_external(name: str) -> Judge:
    """A judge known only by the predictions imported for it."""
    judge, _ = Judge.objects.get_or_create(name=name, defaults={"backend": Judge.Backend.EXTERNAL})
    return judge
