"""The faults a scenario (``faults:``) or a test can script for the offline model.

The vocabulary lives here, below the scenario and model stages, so a scenario file is checked
without loading the model backend (:class:`~pytest_ctxeval.llm.offline.ReferenceModel` plays them).
"""

from __future__ import annotations

__all__ = ["FAULTS"]

#: Every fault the offline reference model can play, per task, in order.
FAULTS = (
    "ok", "overloaded", "rate_limit", "server_error", "connection_reset", "timeout", "ptl",
    "ptl_no_gap", "empty", "no_summary_tags", "sections_out_of_order", "malformed_json", "prose_json",
)
