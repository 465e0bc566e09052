"""Gold checks and qualification, apart from the rest of the expert work: the models
(`models.py`), when a check is due (`schedule.py`, `due.py`), the reads (`selectors.py`), and the
writes (`services.py`: setting checks, serving and reviewing them, pausing; `qualification.py`).
They use only their app's models; the claim and the rating services call them
(pyproject.toml's import contracts)."""
