"""docker-compose.yml as an operator reads it for several nodes (no Docker engine here: the
file itself): the object store is optional, every app service gets the S3_* settings, the
scalable services hold no state of their own, and there is one beat."""

from pathlib import Path

import pytest
import yaml

COMPOSE = Path(__file__).resolve().parents[2] / "docker-compose.yml"
S3_SETTINGS = (
    "S3_BUCKET",
    "S3_ENDPOINT_URL",
    "S3_REGION",
    "S3_ACCESS_KEY_ID",
    "S3_SECRET_ACCESS_KEY",
    "S3_PREFIX",
)


@pytest.fixture(scope="module")
def services():
    return yaml.safe_load(COMPOSE.read_text())["services"]


def test_the_object_store_starts_only_with_its_profile(services):
    default = {name for name, service in services.items() if not service.get("profiles")}
    assert {"objectstore", "objectstore-bucket"}.isdisjoint(default)
    assert services["objectstore"]["profiles"] == services["objectstore-bucket"]["profiles"]
    assert "ports" not in services["objectstore"]  # reached by web and worker only


@pytest.mark.parametrize("name", ["migrate", "web", "worker", "beat"])
def test_every_app_service_passes_the_object_store_settings_through(services, name):
    environment = services[name]["environment"]
    for setting in S3_SETTINGS:
        # No value in the file: taken from the shell or .env when set there, else unset (an
        # empty S3_BUCKET would not mean "local disk" to an operator reading it).
        assert setting in environment and environment[setting] is None, setting


def test_web_and_worker_scale_and_beat_stays_one(services):
    for name in ("web", "worker"):
        assert "container_name" not in services[name]  # --scale needs generated names
        assert "ports" not in services[name]  # replicas would fight over a host port
    beat = services["beat"]
    assert "container_name" not in beat and beat.get("deploy", {}).get("replicas", 1) == 1
    text = COMPOSE.read_text()
    assert "--scale web=" in text and "--scale worker=" in text and "ONE `beat`" in text
