"""What an import of a pair file did (`import_pairs --json`, the Data page, the API)."""

from dataclasses import dataclass, field


@dataclass
class ImportSummary:
    project: str
    task: str
    format: str
    records: int = 0
    pairs: int = 0
    unchanged: int = 0
    in_other_tasks: int = 0  # of `unchanged`: the same record already in another task
    derived_ids: int = 0  # records without an id (MJ-Bench's captions files, its HF card)
    prompts_new: int = 0
    prompts_reused: int = 0
    responses: int = 0
    images_new: int = 0
    images_reused: int = 0
    ratings: int = 0
    adjudications: int = 0
    graded_responses: int = 0
    seconds: float = 0.0
    statuses: dict = field(default_factory=dict)
    gold: int = 0  # pairs made gold checks by the file's `gold` field

    def as_dict(self) -> dict:
        return {
            "project": self.project,
            "task": self.task,
            "format": self.format,
            "records": self.records,
            "pairs": self.pairs,
            "unchanged": self.unchanged,
            "in_other_tasks": self.in_other_tasks,
            "derived_ids": self.derived_ids,
            "prompts": {"new": self.prompts_new, "reused": self.prompts_reused},
            "responses": self.responses,
            "images": {"new": self.images_new, "reused": self.images_reused},
            "ratings": self.ratings,
            "adjudications": self.adjudications,
            "graded_responses": self.graded_responses,
            "statuses": self.statuses,
            "gold": self.gold,
            "seconds": round(self.seconds, 2),
        }
