"""Logs in one format, one line per record: Django's own text handlers do not print a second
copy, and a 403 is one line without its traceback."""

import logging

import pytest
from django.conf import settings
from django.core.exceptions import PermissionDenied

from crashdesk.logging import JsonFormatter, RefusalsOnOneLine


def test_django_and_its_development_server_log_only_through_the_json_handler():
    for name in ("django", "django.server"):
        assert settings.LOGGING["loggers"][name]["handlers"] == ["stderr"]
        assert settings.LOGGING["loggers"][name]["propagate"] is False
    for name in ("django", "django.server", "django.request"):
        handlers = {type(handler.formatter) for handler in _handlers(logging.getLogger(name))}
        assert handlers == {JsonFormatter}, name


def _handlers(logger):
    # pytest adds its own capturing handlers; what matters is what the site configures.
    while logger is not None:
        yield from (h for h in logger.handlers if not type(h).__module__.startswith("_pytest"))
        logger = logger.parent if logger.propagate else None


def _record(status_code: int) -> logging.LogRecord:
    try:
        raise PermissionDenied
    except PermissionDenied:
        import sys

        record = logging.makeLogRecord(
            {"msg": "Forbidden (Permission denied): /x/", "exc_info": sys.exc_info()}
        )
    record.status_code = status_code
    return record


@pytest.mark.parametrize("status_code", [403, 500])
def test_a_refusal_is_one_line_and_a_fault_keeps_its_traceback(status_code):
    record = _record(status_code)
    assert RefusalsOnOneLine().filter(record)
    line = JsonFormatter().format(record)
    assert "\n" not in line
    assert ("Traceback" in line) is (status_code == 500)
