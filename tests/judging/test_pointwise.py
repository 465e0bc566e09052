"""Pointwise judges: a template that scores one response alone; each response of a
pair in its own request, K samples each; the pair's verdict per sample is the higher score, a
tie when equal, invalid when a score cannot be read."""

import pytest
from django.db import IntegrityError, transaction

from core.outbound import RetryPolicy
from devtools.fake_llm import FakeLLMServer, status
from judging import runner
from judging.models import JudgeRun, Verdict
from judging.parsing import parse_score
from judging.prompts import TemplateInvalid, template_check, template_save
from judging.selectors import run_progress
from judging.services.judges import judge_save
from judging.services.runs import RunRefused, judge_run_resume, judge_run_start
from tests.judging.conftest import openai_judge

pytestmark = pytest.mark.django_db(transaction=True)

# The fake judge's scores per pair number (response A, response B): equal, A higher, B
# higher, A out of the 1-10 scale (unreadable), then A slightly higher.
SCORES = {0: (7, 7), 1: (9, 2), 2: (2, 9), 3: (12, 4)}
EXPECTED = {0: "tie", 1: "A", 2: "B", 3: "invalid"}


def _texts(request) -> str:
    return "".join(p.get("text", "") for p in request["messages"][0]["content"])


def _score(request):
    text = _texts(request)
    for number in range(6):
        a, b = SCORES.get(number, (6, 5))
        if f"A says {number}" in text:
            return a
        if f"B says {number}" in text:
            return b
    raise AssertionError("the request holds no response")


@pytest.fixture(autouse=True)
def _quick_retries(monkeypatch):
    monkeypatch.setattr(runner, "RETRY_POLICY", RetryPolicy(max_attempts=2, base_seconds=0.01))


@pytest.fixture
def scoring_server():
    server = FakeLLMServer(score=_score)
    server.start()
    yield server
    server.stop()


def _number(pair) -> int:
    return int(pair.external_id.split("-")[1])


def test_each_response_is_scored_alone_and_the_pair_verdict_is_the_higher_score(
    scoring_server, pairs_task
):
    judge = openai_judge(scoring_server, templates={"t2i": "pointwise-1-10"})
    run = judge_run_start(judge, pairs_task.project, samples=2)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED
    assert run.pointwise_scale == "likert-10"
    assert run.trials == 6 * 2  # one trial per pair and sample, not two orders
    # 6 pairs × 2 responses × 2 samples, each request holding exactly one response.
    assert len(scoring_server.requests) == 24
    for request in scoring_server.requests:
        text = _texts(request)
        assert ("A says" in text) != ("B says" in text)
        assert "SCORE: a number from 1 (worst) to 10 (best)" in text
    images = [
        part
        for request in scoring_server.requests
        for part in request["messages"][0]["content"]
        if part["type"] == "image_url"
    ]
    assert len(images) == 24  # each response's own image, sent with it

    verdicts = list(Verdict.objects.filter(judge=judge).select_related("pair"))
    assert len(verdicts) == 12
    assert {v.order for v in verdicts} == {"pointwise"}
    for verdict in verdicts:
        number = _number(verdict.pair)
        assert verdict.choice == EXPECTED.get(number, "A")
        a, b = SCORES.get(number, (6, 5))
        assert verdict.score_a == (a if a <= 10 else None)
        assert verdict.score_b == b
        assert verdict.input_tokens == 200  # both requests counted
        assert "[response A]" in verdict.raw_output and "[response B]" in verdict.raw_output
    unreadable = [v for v in verdicts if _number(v.pair) == 3]
    assert all(v.score_a is None and v.choice == "invalid" for v in unreadable)
    progress = run_progress(run)
    assert (progress.done, progress.failed, progress.remaining) == (12, 0, 0)
    assert (progress.ties, progress.invalid) == (2, 2)


def test_a_failed_response_call_fails_the_trial_and_a_resume_asks_for_both_again(
    scoring_server, pairs_task
):
    judge = openai_judge(scoring_server, templates={"t2i": "pointwise-1-5"})
    scoring_server.queue(status(400))  # one request fails (not retried): its trial fails
    run = judge_run_start(judge, pairs_task.project)
    failed = list(Verdict.objects.filter(judge=judge, choice__isnull=True))
    assert len(failed) == 1
    assert failed[0].error.startswith("response ") and "HTTP 400" in failed[0].error
    assert failed[0].score_a is None and failed[0].score_b is None
    calls = len(scoring_server.requests)
    judge_run_resume(run)
    assert len(scoring_server.requests) == calls + 2  # both responses, once each
    assert not Verdict.objects.filter(judge=judge, choice__isnull=True).exists()
    # Scores above 5 are off the 1-5 scale: those responses read as no score.
    for verdict in Verdict.objects.filter(judge=judge).select_related("pair"):
        a, b = SCORES.get(_number(verdict.pair), (6, 5))
        assert verdict.score_a == (a if a <= 5 else None)
        assert verdict.score_b == (b if b <= 5 else None)


def test_the_random_baseline_scores_and_always_a_is_refused(pairs_task):
    coin, _ = judge_save(
        "coin", project=None, backend="random", sampling={"seed": 3},
        templates={"t2i": "pointwise-0-100"},
    )  # fmt: skip
    judge_run_start(coin, pairs_task.project, samples=3)
    verdicts = Verdict.objects.filter(judge=coin)
    assert verdicts.count() == 18
    scores = [s for row in verdicts.values_list("score_a", "score_b") for s in row]
    assert all(0 <= s <= 100 for s in scores) and len(set(scores)) > 5
    always_a, _ = judge_save(
        "always-a", project=None, backend="always-a", templates={"t2i": "pointwise-1-5"}
    )
    with pytest.raises(RunRefused, match="pairwise baseline"):
        judge_run_start(always_a, pairs_task.project)


def test_the_database_refuses_a_choice_its_scores_contradict(scoring_server, pairs_task):
    judge = openai_judge(scoring_server, templates={"t2i": "pointwise-1-10"})
    judge_run_start(judge, pairs_task.project)
    verdict = Verdict.objects.filter(judge=judge, choice="A").first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Verdict.objects.filter(pk=verdict.pk).update(choice="B")
    pairwise = Verdict.objects.filter(judge=judge).first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Verdict.objects.filter(pk=pairwise.pk).update(order="forward")  # scores stay


@pytest.mark.parametrize(
    ("text", "scale", "expected"),
    [
        ("Looks good.\nSCORE: 7", (1, 10), 7.0),
        ("SCORE: 12", (1, 10), None),  # off the scale, not its first digit
        ("score: 3 at first, then on reflection SCORE: **9**", (1, 10), 9.0),
        ('{"reason": "fine", "score": 85.5}', (0, 100), 85.5),
        ("RATING: 4/5", (1, 5), 4.0),
        ("SCORE: 0", (0, 100), 0.0),
        ("SCORE: 0", (1, 5), None),
        ("I cannot rate this.", (1, 10), None),
        ("SCORE: 1.2.3", (1, 10), None),
    ],
)
def test_scores_are_read_strictly(text, scale, expected):
    assert parse_score(text, *scale) == expected


def test_pointwise_templates_have_one_response_marker(pairs_task):
    template_check("{prompt} {response}", "likert-10")
    with pytest.raises(TemplateInvalid, match=r"\{response\}"):
        template_check("{prompt} {first} {second}", "likert-10")
    with pytest.raises(TemplateInvalid, match="no place"):
        template_check("{prompt} {response} {first}", "score-100")
    with pytest.raises(TemplateInvalid, match="no place"):
        template_check("{prompt} {first} {second} {response}", "json")
    saved = template_save("mine", "Rate {response} for {prompt}. SCORE: 1-5", "likert-5",
                          pairs_task.project)  # fmt: skip
    assert saved.version == 1
