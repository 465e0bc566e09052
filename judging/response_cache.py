"""The response cache: a judge API's answer to a request is kept under the request's identity,
so that the identical request is never paid twice, across runs, judges and projects (a copy of
a dataset judged again costs nothing).

The identity is everything that makes the API's answer what it is: the connection's URL and
backend, the model, the sampling as sent (the sample's seed included), the template's text and
answer format, the order and the sample (K samples are K answers, never one answer K times),
and the content of the request: its texts, and its images by their SHA-256 and the side they
were fitted to. Only answers are kept, never failures. Baselines are not cached (they cost
nothing). Whoever has the identical content and judge gets the stored answer, which they could
have bought themselves; SECURITY.md says what that shares.
"""

import hashlib
import json

from judging.backends import Reply
from judging.models import CachedReply, Judge, PromptTemplate
from judging.sampling import request_sampling

_BATCH = 500


def request_identity(judge: Judge, template: PromptTemplate, order: str, sample: int) -> list:
    connection = judge.connection
    return [
        judge.backend,
        connection.base_url.rstrip("/") if connection else "",
        judge.model,
        request_sampling(judge.backend, judge.model, judge.sampling, sample),
        hashlib.sha256(template.body.encode()).hexdigest(),
        template.answer_format,
        order,
        sample,
    ]


def request_key(identity: list, content: list) -> str:
    """`content`: the request's parts as ("text", str) or ("image", sha256, max side)."""
    canonical = json.dumps([identity, content], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def cached_replies(keys) -> dict[str, Reply]:
    wanted = sorted(set(keys))
    found: dict[str, Reply] = {}
    for start in range(0, len(wanted), _BATCH):
        rows = CachedReply.objects.filter(key__in=wanted[start : start + _BATCH])
        for key, text, tokens_in, tokens_out in rows.values_list(
            "key", "text", "input_tokens", "output_tokens"
        ):
            found[key] = Reply(text, tokens_in, tokens_out)
    return found


def replies_store(entries: list[tuple[str, Reply]]) -> None:
    """Keep answers (a key stored meanwhile by another worker keeps its first answer)."""
    CachedReply.objects.bulk_create(
        [
            CachedReply(
                key=key, text=r.text, input_tokens=r.input_tokens, output_tokens=r.output_tokens
            )
            for key, r in entries
        ],
        batch_size=_BATCH,
        ignore_conflicts=True,
    )
