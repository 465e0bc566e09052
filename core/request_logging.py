"""Filters of the `django.request` log.

A PermissionDenied is an expected answer (an annotator opening a lead's page, a lead touching
the operator's judge): Django logs it at WARNING with the exception attached, which printed a
full traceback for every 403. The filter keeps its one line ("Forbidden (Permission denied):
/path") and drops the traceback; errors that are bugs keep theirs.
"""

import logging

from django.core.exceptions import PermissionDenied


class DenialsOnOneLine(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], PermissionDenied):
            record.exc_info = None
            record.exc_text = None
        return True
