"""`CoveringIndex`: an index that carries extra columns (INCLUDE) where the database has
covering indexes, and is a plain index where it has none.

A few hot reads (a project's data version, the verdicts of a project's pairs) are answered
from an index alone on PostgreSQL when the index also holds the columns they read. Django's
`Index(include=...)` says so, but on SQLite (the embedded mode, `make demo`) it makes every
`migrate` warn `models.W040` "SQLite does not support indexes with non-key columns": true,
and nothing to do about it, as SQLite's plain index is the one wanted there. This index says
what is meant instead: its `covering` columns are an optimisation for the databases that have
them, so the system check has nothing to warn of, and the SQL is the same as `include`'s on
both databases (a migration switching to it changes no table).
"""

import copy
from collections.abc import Sequence

from django.db import models


class CoveringIndex(models.Index):
    def __init__(self, *, covering: Sequence[str], **kwargs):
        if kwargs.get("include"):
            raise ValueError("CoveringIndex takes its extra columns as `covering`")
        if covering and not kwargs.get("name"):
            raise ValueError("A covering index must be named (as one with `include`).")
        super().__init__(**kwargs)
        self.covering = tuple(covering)

    def create_sql(self, model, schema_editor, using="", **kwargs):
        if not schema_editor.connection.features.supports_covering_indexes:
            return super().create_sql(model, schema_editor, using=using, **kwargs)
        with_columns = copy.copy(self)
        with_columns.include = self.covering
        return models.Index.create_sql(with_columns, model, schema_editor, using=using, **kwargs)

    def deconstruct(self):
        path, args, kwargs = super().deconstruct()
        kwargs["covering"] = self.covering
        return path, args, kwargs
