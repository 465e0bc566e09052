"""Projects to export, built through the import, rating and adjudication services.

`rated`: project "exp" (K = 7), task t2i with four pairs rated by three annotators (aspects,
rationales, active times), one dropped as ambiguous, one adjudicated, verdicts of two judges;
task edit with two imported labelled pairs that share images.
`imported`: project "imp" (MMRB2 file, K = 6) with imported ratings and reasoning grades."""

from dataclasses import dataclass

import pytest

from annotation.services.adjudication import pair_adjudicate
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from imports.services.pair_import import pairs_import
from judging.models import Judge, Verdict
from projects.models import Membership, Project, Task
from projects.scale import to_form
from tests.factories import member, mmrb2_pair, queued_pairs, write_image, write_jsonl, write_mmrb2
from tests.judging.conftest import _tasks_in_process  # noqa: F401 (export jobs in-process)

ANNOTATORS = ("alice", "bob", "carol")
# Canonical overall scores (7 = A much better) of pairs 0..3 by alice, bob, carol.
PLAN = [(7, 6, 7), (1, 2, 1), (3, 4, 5), (7, 1, 4)]
ADJUDICATION_NOTE = "B follows the prompt; the 7 was a misclick"


@dataclass
class Rated:
    project: Project
    task: Task
    pairs: list[Pair]  # t2i, by id
    lead: object
    annotators: list


def _rate_all(task: Task, users: list, pairs: list[Pair]) -> None:
    # Pairs beyond the first four (query-count tests) get the scores of pair 0.
    scores = [*PLAN, *[PLAN[0]] * (len(pairs) - len(PLAN))]
    plan = {pair.id: row for pair, row in zip(pairs, scores, strict=True)}
    for position, user in enumerate(users):
        while (assignment := assignment_claim(user, task)) is not None:
            canonical = plan[assignment.pair_id][position]
            aspect = max(1, canonical - 1)

            def form(score, swapped=assignment.swapped):
                return to_form(score, 7, swapped)

            rating_submit(
                assignment.pk,
                user,
                RatingInput(
                    overall=form(canonical),
                    aspects={"faithfulness": form(aspect), "quality": form(canonical)},
                    rationale=f"reason {position} on pair {assignment.pair_id}",
                    active_seconds=10 + position,
                ),
            )


def _edit_task(folder) -> None:
    images = folder / "edit-images"
    write_image(images / "source.png", (10, 10, 10), size=(32, 32))
    write_image(images / "shared.png", (200, 200, 0), size=(20, 10))
    write_image(images / "other1.png", (0, 200, 200))
    write_image(images / "other2.png", (200, 0, 200))
    prompt = [["text", "Make it yellow"], ["image", "source.png"]]
    records = [
        {
            "id": f"edit-{i}",
            "prompt_source": "unit",
            "prompt_content": prompt,
            "response_a": {"model_name": "gen-x", "response_content": [["image", "shared.png"]]},
            "response_b": {
                "model_name": "gen-y",
                "response_content": [["text", "Here it is"], ["image", f"other{i}.png"]],
            },
            "chosen": chosen,
        }
        for i, chosen in ((1, "A"), (2, "B"))
    ]
    source = write_jsonl(folder / "edit.jsonl", records)
    pairs_import(source, project_slug="exp", task_slug="edit", images_dir=images)


def _verdicts(pairs: list[Pair]) -> None:
    zeta = Judge.objects.create(name="zeta", backend="random")
    alpha = Judge.objects.create(name="alpha", backend="always-a")
    for order in ("reverse", "forward"):
        Verdict.objects.create(judge=zeta, pair=pairs[0], order=order, sample=1, choice="B")
        Verdict.objects.create(judge=zeta, pair=pairs[0], order=order, sample=0, choice="tie")
        Verdict.objects.create(judge=alpha, pair=pairs[0], order=order, choice="A")
    Verdict.objects.create(judge=alpha, pair=pairs[1], order="forward", error="HTTP 500")


def build_rated(folder, count_extra: int = 0) -> Rated:
    task = queued_pairs(folder, project_slug="exp", task_slug="t2i", count=4 + count_extra)
    Task.objects.filter(pk=task.pk).update(
        aspects=[
            {"key": "faithfulness", "label": "Faithfulness", "help": ""},
            {"key": "quality", "label": "Quality", "help": ""},
        ]
    )
    task.refresh_from_db()
    project = task.project
    pairs = list(Pair.objects.filter(task=task).order_by("id"))
    users = [member(name, project) for name in ANNOTATORS]
    _rate_all(task, users, pairs)
    lead = member("boss", project, role=Membership.Role.LEAD)
    pair_adjudicate(pairs[3].pk, lead, "keep_b", ADJUDICATION_NOTE)
    _edit_task(folder)
    _verdicts(pairs)
    return Rated(project, task, [Pair.objects.get(pk=p.pk) for p in pairs], lead, users)


@pytest.fixture
def rated(tmp_path) -> Rated:
    return build_rated(tmp_path)


@pytest.fixture
def imported(tmp_path) -> Project:
    images = tmp_path / "imp-images"
    for name, color in (("a.png", (200, 40, 40)), ("b.png", (40, 40, 200))):
        write_image(images / name, color)
    pairs = [
        mmrb2_pair("imp-1", scores=(5, 6, 5), chosen="A"),
        mmrb2_pair("imp-2", scores=(1, 2, 2), chosen="B"),
    ]
    reasoning = mmrb2_pair("imp-3", chosen="A")
    reasoning["human_annotations"] = {
        "response_a_ratings": ["A", "B"],
        "response_b_ratings": ["C", "C"],
    }
    source = write_mmrb2(tmp_path / "imp.json", [*pairs, reasoning])
    pairs_import(
        source, project_slug="imp", task_slug="mix", file_format="mmrb2", images_dir=images
    )
    return Project.objects.get(slug="imp")
