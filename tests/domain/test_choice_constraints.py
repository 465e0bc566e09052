"""Every field with choices is checked by the database against exactly those choices (plus
the blank or null the field allows), so adding a choice cannot forget the constraint."""

import pytest
from django.apps import apps
from django.db import models


def _choice_fields():
    for model in apps.get_models():
        if model._meta.app_label not in {"annotation", "imports", "judging", "exports"}:
            continue
        for field in model._meta.concrete_fields:
            if field.choices and isinstance(field, models.CharField):
                yield pytest.param(model, field, id=f"{model.__name__}.{field.name}")


def _allowed_by_constraint(model, field) -> set | None:
    for constraint in model._meta.constraints:
        if not isinstance(constraint, models.CheckConstraint):
            continue
        found = _lookup(constraint.condition, f"{field.name}__in")
        if found is not None:
            return set(found)
    return None


def _lookup(condition, key):
    for child in condition.children:
        if isinstance(child, tuple) and child[0] == key:
            return child[1]
        if hasattr(child, "children") and (found := _lookup(child, key)) is not None:
            return found
    return None


@pytest.mark.parametrize(("model", "field"), list(_choice_fields()))
def test_the_database_checks_exactly_the_fields_choices(model, field):
    allowed = _allowed_by_constraint(model, field)
    assert allowed is not None, f"{model.__name__}.{field.name} has no check constraint"
    expected = {value for value, _ in field.choices}
    if field.blank and not field.null:
        expected.add("")
    extra = allowed - expected
    assert expected <= allowed and extra <= {"tie"}, (model.__name__, field.name, extra)
