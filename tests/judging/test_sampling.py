"""Sampling parameters per API: what each backend refuses is refused when the judge
is saved, with words a lead can act on; what is sent is mapped (OpenAI's reasoning models take
max_completion_tokens, Anthropic needs max_tokens and has no seed)."""

import pytest

from core.errors import Invalid
from judging.sampling import is_openai_reasoning_model, request_sampling, sampling_problem
from judging.services.judges import judge_save
from judging.services.runs import judge_run_start
from tests.judging.conftest import fake_connection


@pytest.mark.parametrize(
    ("backend", "model", "sampling", "problem"),
    [
        ("openai", "gpt-4o", {"temperature": 0, "max_tokens": 512, "seed": 1}, None),
        ("openai", "gpt-4o", {"top_k": 5}, "top_k: not a parameter of OpenAI"),
        ("openai", "o3-mini", {"max_tokens": 4000}, None),
        ("openai", "o3-mini", {"temperature": 0.2}, "o3-mini is a reasoning model"),
        ("openai", "gpt-5", {"top_p": 0.9, "temperature": 1}, "refuses temperature and top_p"),
        ("openai", "gpt-4o", {"max_tokens": 1, "max_completion_tokens": 1}, "not both"),
        ("anthropic", "claude-sonnet-4-5", {"temperature": 0, "top_k": 5}, None),
        ("anthropic", "claude-sonnet-4-5", {"seed": 3}, "seed: not a parameter of Anthropic"),
        ("anthropic", "claude-sonnet-4-5", {"temperature": 0, "top_p": 0.9}, "together"),
        ("random", "", {"seed": 3, "top_k": 2}, None),  # no call: nothing to refuse
    ],
)
def test_each_backend_refuses_what_its_api_refuses(backend, model, sampling, problem):
    found = sampling_problem(backend, model, sampling)
    assert (found is None) if problem is None else (problem in found)


def test_requests_map_the_common_keys():
    assert request_sampling("openai", "o4-mini", {"max_tokens": 800, "seed": 5}, 2) == {
        "max_completion_tokens": 800,
        "seed": 7,
    }
    assert request_sampling("openai", "gpt-4.1", {"max_tokens": 800}, 0) == {"max_tokens": 800}
    assert request_sampling("anthropic", "claude", {"temperature": 0, "seed": 1}, 0) == {
        "temperature": 0,
        "max_tokens": 1024,
    }
    assert is_openai_reasoning_model("openai/o1-preview") and not is_openai_reasoning_model(
        "gpt-4o"
    )


@pytest.mark.django_db
def test_a_judge_with_refused_settings_is_not_saved(fake_llm):
    connection = fake_connection(fake_llm, "fake-o", backend="openai")
    with pytest.raises(Invalid, match="reasoning model"):
        judge_save("o3", project=None, backend="openai", connection=connection, model="o3",
                   sampling={"temperature": 0})  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_a_reasoning_model_is_sent_max_completion_tokens(fake_llm, pairs_task):
    connection = fake_connection(fake_llm, "fake-o", backend="openai")
    judge, _ = judge_save(
        "o3",
        project=pairs_task.project,
        backend="openai",
        connection=connection,
        model="o3-mini",
        sampling={"max_tokens": 300},
    )
    judge_run_start(judge, pairs_task.project, pair_ids=[pairs_task.pairs.first().pk])
    assert {r.get("max_completion_tokens") for r in fake_llm.requests} == {300}
    assert not any("max_tokens" in r for r in fake_llm.requests)
