"""The text a lead searches a pair by (the pair browser): its prompt's and responses' text
parts, its source and its external id, in one row of `PairSearch` written when the pair is
made. Prompts and responses are never edited after an import, so the text never goes stale;
PostgreSQL indexes it for full-text search (content migration 0005)."""

# PostgreSQL refuses a tsvector over 1 MB; the start of a very long trace is enough to find it.
MAX_SEARCH_CHARS = 200_000


def content_text(content) -> str:
    """The text parts of a prompt or response part list ([["text", str] | ["image", sha],
    ...]), one per line; images and malformed parts are skipped."""
    return "\n".join(
        part[1]
        for part in content or []
        if isinstance(part, list | tuple)
        and len(part) == 2
        and part[0] == "text"
        and isinstance(part[1], str)
    )


def pair_search_text(*, external_id: str, source: str, prompt, response_a, response_b) -> str:
    """The searchable text of a pair from its parts' contents (None for a prompt the source
    did not ship)."""
    pieces = [external_id, source, *(content_text(c) for c in (prompt, response_a, response_b))]
    text = "\n".join(piece for piece in pieces if piece).replace("\x00", "")
    return text[:MAX_SEARCH_CHARS]
