"""Which sampling parameters each API takes, and how a judge's are sent (one home for both).

- OpenAI chat completions: `temperature`, `top_p`, `max_tokens`, `max_completion_tokens`,
  `seed`. Its reasoning models (o1, o3, o4-mini, gpt-5, ...) refuse `max_tokens` (they take
  `max_completion_tokens`, to which it is mapped) and any `temperature` or `top_p`.
- Anthropic Messages: `temperature`, `top_p`, `top_k`, `max_tokens` (required: 1024 unless
  set). No `seed`; newer Claude models refuse `temperature` and `top_p` together.
A judge's settings are checked against these rules when it is saved, so a run never meets a
400 for them; the request maps them (`request_sampling`). Offline baselines read `seed` only.
"""

import re

from judging.models import SAMPLING_RANGES

ACCEPTED = {
    "openai": {"temperature", "top_p", "max_tokens", "max_completion_tokens", "seed"},
    "anthropic": {"temperature", "top_p", "top_k", "max_tokens"},
}
ANTHROPIC_DEFAULT_MAX_TOKENS = 1024
_OPENAI_REASONING = re.compile(r"^(?:[\w.-]+/)?(?:o\d|gpt-5)", re.IGNORECASE)


def is_openai_reasoning_model(model: str) -> bool:
    return bool(_OPENAI_REASONING.match(model or ""))


def sampling_problem(backend: str, model: str, sampling: dict) -> str | None:
    """Why this API would refuse these settings, in words for the lead; None when fine."""
    accepted = ACCEPTED.get(backend)
    if accepted is None:
        return None  # baselines and imported judges make no call
    names = {"openai": "OpenAI's chat completions", "anthropic": "Anthropic's Messages API"}
    refused = sorted(set(sampling) - accepted)
    if refused:
        return f"{', '.join(refused)}: not a parameter of {names[backend]}"
    if backend == "openai" and is_openai_reasoning_model(model):
        fixed = sorted({"temperature", "top_p"} & set(sampling))
        if fixed:
            return (
                f"{model} is a reasoning model: it refuses {' and '.join(fixed)}; remove "
                "them (max_tokens is sent as max_completion_tokens)"
            )
    if backend == "anthropic" and {"temperature", "top_p"} <= set(sampling):
        return "Anthropic's newer models refuse temperature and top_p together: set one"
    if "max_tokens" in sampling and "max_completion_tokens" in sampling:
        return "set max_tokens or max_completion_tokens, not both"
    return None


def request_sampling(backend: str, model: str, sampling: dict, sample: int) -> dict:
    """The sampling fields of one request. Only known numeric parameters (a row saved before
    they were checked cannot put anything else into the request); the seed is offset by the
    sample (K samples must not be K copies of one answer)."""
    params = {
        key: value
        for key, value in (sampling or {}).items()
        if key in SAMPLING_RANGES and isinstance(value, int | float) and not isinstance(value, bool)
    }
    if isinstance(params.get("seed"), int):
        params["seed"] += sample
    if backend == "anthropic":
        params.pop("seed", None)
        params.pop("max_completion_tokens", None)
        params.setdefault("max_tokens", ANTHROPIC_DEFAULT_MAX_TOKENS)
    elif backend == "openai" and is_openai_reasoning_model(model):
        if "max_tokens" in params:
            params["max_completion_tokens"] = params.pop("max_tokens")
        params.pop("temperature", None)
        params.pop("top_p", None)
    return params
