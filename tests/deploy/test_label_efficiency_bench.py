"""bench/label_efficiency.py in a small configuration (few replays, two budgets): the shape of
its JSON and the sanity of its figures. Skips when ../shared/datasets is absent."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SHARED_MMRB2

REPO_ROOT = Path(__file__).resolve().parents[2]
MJBENCH_RESULTS = SHARED_MMRB2.parent / "mjbench" / "personal" / "result"
MJBENCH_MODELS = [
    "aesthetics",
    "blipscore",
    "clipscore_v2",
    "hps_v2.1",
    "ImageReward",
    "pickscore_v1",
]

pytestmark = [
    pytest.mark.mmrb2,
    pytest.mark.skipif(not MJBENCH_RESULTS.is_dir(), reason="MJ-Bench files not in ../shared"),
]


def run_bench(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "bench.label_efficiency", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def output():
    stdout = run_bench(
        "--replays", "12", "--budgets", "50", "100", "--sweep", "2", "--stress-replays", "8",
        "--json",
    )  # fmt: skip
    return json.loads(stdout)


def mjbench_image0_shares() -> dict[str, float]:
    """Each model's share of pairs where it prefers image 0: its accuracy, every label being 0."""
    shares = {}
    for model in MJBENCH_MODELS:
        rows = [row for path in (MJBENCH_RESULTS / model).glob("*.json")
                for row in json.loads(path.read_text())]  # fmt: skip
        assert {row["label"] for row in rows} == {"0"}
        shares[model] = sum(row["pred"] == "0" for row in rows) / len(rows)
    return shares


def test_the_json_holds_both_replays_per_task_judge_and_budget(output):
    assert output["budgets"] == [50, 100] and output["replays"] == 12
    mmrb2 = output["mmrb2"]["tasks"]
    assert set(mmrb2) == {"t2i", "edit", "interleaved", "reasoning"}
    for task in mmrb2.values():
        assert task["pairs"] == 1000
        assert len(task["judges"]) >= 10
    mjbench = output["mjbench"]["tasks"]
    assert output["mjbench"]["machinery_check"] is True
    (pool,) = mjbench.values()
    assert sorted(pool["judges"]) == sorted(MJBENCH_MODELS)
    for dataset in ("mmrb2", "mjbench"):
        assert set(output[dataset]["summary"]) == {"50", "100"}
        for task in output[dataset]["tasks"].values():
            for judge in task["judges"].values():
                assert set(judge["budgets"]) == {"50", "100"}


def test_ppi_from_50_rated_pairs_and_active_from_100(output):
    for dataset in ("mmrb2", "mjbench"):
        for task in output[dataset]["tasks"].values():
            for judge in task["judges"].values():
                at_50, at_100 = judge["budgets"]["50"], judge["budgets"]["100"]
                assert at_50["ppi"] is not None and at_50["active"] is None
                assert at_100["ppi"] is not None and at_100["active"] is not None


def test_ppi_is_never_wider_than_classical_and_saves_a_share_of_ratings(output):
    for dataset in ("mmrb2", "mjbench"):
        for entry in output[dataset]["summary"].values():
            assert entry["ppi_wider_than_classical"] == 0
        for task in output[dataset]["tasks"].values():
            for judge in task["judges"].values():
                for figures in judge["budgets"].values():
                    classical, ppi = figures["classical"], figures["ppi"]
                    assert 0 < ppi["half_width"] <= classical["half_width"]
                    assert 0 <= ppi["saved"] < 1
                    for method in ("classical", "ppi", "active"):
                        if figures[method] is not None:
                            assert 0 <= figures[method]["coverage"] <= 1


def test_coverage_is_sane_and_the_summary_agrees_with_the_judges(output):
    for dataset in ("mmrb2", "mjbench"):
        tasks = output[dataset]["tasks"].values()
        for budget, entry in output[dataset]["summary"].items():
            for method in ("classical", "ppi"):
                rows = [
                    t["judges"][j]["budgets"][budget][method] for t in tasks for j in t["judges"]
                ]
                coverage = entry["coverage"][method]
                assert coverage["worst"] == min(row["coverage"] for row in rows)
                assert coverage["mean"] == pytest.approx(
                    sum(r["coverage"] for r in rows) / len(rows)
                )
                # 12 replays only: a loose floor that a broken interval (or truth) would miss
                assert coverage["mean"] >= 0.8
            saved = entry["saved"]["ppi"]
            assert saved["worst"] <= saved["median"] and saved["worst"] <= saved["best"]


def test_mjbench_accuracies_are_the_models_real_image0_shares(output):
    (pool,) = output["mjbench"]["tasks"].values()
    assert pool["pairs"] == 1331
    for model, share in mjbench_image0_shares().items():
        assert pool["judges"][model]["accuracy"] == pytest.approx(share, abs=1e-12)


def test_the_roles_follow_the_accuracies(output):
    for dataset in ("mmrb2", "mjbench"):
        for task in output[dataset]["tasks"].values():
            judges = task["judges"]
            best = max(judges, key=lambda j: judges[j]["accuracy"])
            assert task["roles"]["best"] == [best]
            weak = {j for j, f in judges.items() if f["accuracy"] < task["consensus_accuracy"]}
            assert set(task["roles"]["weak"]) == weak
            assert all(judges[j]["weaker_than_consensus"] == (j in weak) for j in judges)


def test_simulated_judges_reach_their_skill(output):
    for task in output["mmrb2"]["tasks"].values():
        for judge in task["judges"].values():
            assert judge["accuracy"] == pytest.approx(judge["skill"], abs=0.05)


def test_the_sweep_replays_the_first_budget_from_100(output):
    (row,) = output["mmrb2_sweep"]
    assert row["difficulty_sd"] == 2.0 and row["rated"] == 100
    assert 0.5 < row["consensus_accuracy"] < 1
    assert set(row["coverage"]) == {"classical", "ppi", "active"}


def test_the_stress_settings_replay_old_and_new_on_both_datasets(output):
    assert output["stress"] == {"replays": 8, "target": 0.03}
    for dataset in ("mmrb2", "mjbench"):
        stress = output[f"{dataset}_stress"]
        looked = stress["continuous_looks"]["summary"]
        for method in ("old", "new"):
            assert 0 <= looked["any_look_missed"][method]["mean"] <= 1
            dropped = stress["dropped_pairs"]["summary"][method]
            assert 0 <= dropped["coverage"]["worst"] <= dropped["coverage"]["mean"] <= 1
        assert 0.2 <= stress["dropped_pairs"]["summary"]["dropped"]["low"] <= 0.35
        assert set(stress["validity_cost"]) == {"50", "100"}
        for row in stress["validity_cost"].values():
            median = row["median"]
            # the monitored design's critical value (2.24 > 1.96) needs more pairs than fixed n
            assert median["monitored_ppi"] > median["fixed_ppi"]
            assert median["cost_of_validity"] > 0
    assert "import_order" not in output["mmrb2_stress"]


def test_mjbench_in_file_order_misses_as_the_old_review_found(output):
    """Deterministic: the first 200 pairs imported are all blur pairs, where every model is
    near-perfect; the old interval misses every model's accuracy on the whole pool."""
    at_200 = output["mjbench_stress"]["import_order"]["200"]
    file_order = at_200["file_order"]
    assert file_order["old_missed"] == 6
    hps = file_order["judges"]["hps_v2.1"]
    assert hps["truth"] == pytest.approx(0.795, abs=5e-4)
    assert hps["old"]["estimate"] == pytest.approx(0.955, abs=5e-4)
    assert set(at_200["random_order"]) == {"old", "new"}


def test_near_perfect_judges_had_zero_width_intervals_and_no_longer_do(output):
    rows = {row["judge"]: row for row in output["near_perfect"]}
    assert set(rows) == {
        "simulated 95%", "simulated 97%", "simulated 99%", "hps_v2.1, MJ-Bench blur",
    }  # fmt: skip
    assert rows["simulated 99%"]["old_zero_width"] > 0
    for row in rows.values():
        assert row["half_width"]["new"] > 0


def test_the_table_says_mjbench_is_a_machinery_check():
    stdout = run_bench(
        "--only", "mjbench", "--replays", "3", "--budgets", "100", "--stress-replays", "4"
    )  # fmt: skip
    assert "MACHINERY CHECK" in stdout
    assert "quality+safety: 1331 pairs" in stdout
    assert "Import order, MJ-Bench" in stdout and "The cost of validity" in stdout
