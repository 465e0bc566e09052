"""The consensus with and without competence weighting: which kept pairs a
Dawid–Skene-weighted vote labels otherwise, and which dropped pairs it would decide."""

from metrics.annotator_quality import competence_consensus
from metrics.competence import dawid_skene


def test_weighting_overrules_the_unreliable_majority_and_settles_a_spread():
    rows = []
    for item in range(40):  # two experts always right, two clickers always say B
        truth = "A" if item % 2 else "B"
        votes = {"r1": truth, "r2": truth, "j1": "B", "j2": "B"}
        rows += [(who, f"i{item}", label) for who, label in votes.items()]
    rows += [("r1", "x", "A"), ("j1", "x", "B"), ("j2", "x", "B")]  # the majority says B
    rows += [("r1", "y", "A"), ("r2", "y", "A"), ("j1", "y", "B"), ("j2", "y", "B")]
    result = dawid_skene(rows)
    assert result.competence["r1"] > 0.9 > 0.6 > result.competence["j1"]

    kept = {f"i{item}": ("A" if item % 2 else "B") for item in range(40)} | {"x": "B"}
    decided = {item: (f"p{item}", "kept") for item in kept} | {"y": ("py", "dropped")}
    found = competence_consensus(result, kept, decided, {pid for _a, pid, _l in rows})
    assert (found["kept_compared"], found["kept_changed"]) == (41, 1)
    assert (found["dropped_compared"], found["dropped_decided"]) == (1, 1)
    by_pair = {change["pair"]: change for change in found["changes"]}
    assert set(by_pair) == {"x", "y"}
    assert by_pair["x"]["decision"] == "kept B" and by_pair["x"]["weighted"] == "A"
    assert by_pair["y"]["decision"] == "dropped" and by_pair["y"]["external_id"] == "py"
    assert by_pair["y"]["posterior"] >= 0.95


def test_a_dropped_pair_the_weighting_cannot_settle_stays_undecided():
    rows = [
        (f"r{i}", f"i{item}", "A" if (item + i) % 3 else "B")
        for i in range(3)
        for item in range(30)
    ]
    rows += [("r0", "z", "A"), ("r1", "z", "B"), ("r2", "z", "tie")]
    result = dawid_skene(rows)
    found = competence_consensus(result, {}, {"z": ("pz", "dropped")}, {"z"})
    assert (found["dropped_compared"], found["dropped_decided"]) == (1, 0)
    assert found["changes"] == []
