"""What every pair file format is read into (formats.py, parquet.py, mjbench_bias.py): one
`PairRecord` per pair, whatever the file looked like."""

from dataclasses import dataclass, field

from content.importing.native import RatingRecord


@dataclass
class ResponseRecord:
    model_name: str
    content: list  # [["text", str] | ["image", file name], ...]
    grades: list = field(default_factory=list)
    groups: dict = field(default_factory=dict)  # group attributes, {"age": "old", ...}


@dataclass(frozen=True)
class GoldMark:
    """A record's `gold` field: the pair is imported as a gold check with this expected side
    in the task's queue or its qualification set."""

    side: str  # "A" | "B"
    explanation: str = ""
    qualification: bool = False


@dataclass
class PairRecord:
    number: int
    external_id: str
    prompt_source: str
    prompt_metadata: dict
    prompt_content: list | None
    response_a: ResponseRecord
    response_b: ResponseRecord
    chosen: str  # "A", "B", "tie" or ""
    scores: list[int]  # canonical pairwise scores on 1..scale
    scale: int | None  # the scale of `scores`; None when the format carries none
    metadata: dict = field(default_factory=dict)
    # Where the record came from in its file (MJ-Bench: image names, row), kept in the pair's
    # metadata under "origin" to match result files later; not part of its content: the same
    # record at another row of another file is the same pair.
    origin: dict = field(default_factory=dict)
    # Arbiter's own fields (native rows of an export); None when the row has none.
    ratings: list[RatingRecord] | None = None  # else `scores` belong to placeholders 1, 2, ...
    reference_label: str | None = None  # else `chosen` is the label the pair is imported with
    adjudication: tuple[str, str] | None = None  # (decision, note)
    gold: GoldMark | None = None  # imported as a gold check with this expected side

    @property
    def reference(self) -> str:
        return self.chosen if self.reference_label is None else self.reference_label

    def arbiter_fields(self) -> dict:
        """The Arbiter fields present, for the fingerprint (absent ones leave it as it was)."""
        fields: dict[str, object] = {}
        if self.ratings is not None:
            fields["ratings"] = [vars(rating) for rating in self.ratings]
        if self.reference_label is not None:
            fields["reference_label"] = self.reference_label
        if self.adjudication is not None:
            fields["adjudication"] = list(self.adjudication)
        return fields
