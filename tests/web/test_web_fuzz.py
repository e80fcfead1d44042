"""The web API fuzzed briefly on every run: a few requests per operation of the app's
OpenAPI schema (schemathesis) and per form (hypothesis), against the real server. No answer
may be a 5xx and no traceback may be logged. ``bench/fuzz_web.py`` runs thousands."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("schemathesis")

from tests.web.web_fuzz import fuzz


def test_fuzzed_requests_get_no_server_error_and_log_no_traceback(tmp_path: Path) -> None:
    tally = fuzz(tmp_path / "runs", per_operation=3)
    assert tally.cases >= 60
    assert tally.server_errors == []
    assert tally.tracebacks == []
    assert not tally.transport_errors
