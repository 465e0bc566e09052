"""Figures a deployment test records (`record_property("figures", {...})`), printed in the
terminal summary: pytest-xdist shows nothing a worker prints, and CI runs on every core."""

import json


def pytest_terminal_summary(terminalreporter):
    for status in ("passed", "failed"):
        for report in terminalreporter.stats.get(status, []):
            for name, value in getattr(report, "user_properties", []):
                if name == "figures":
                    terminalreporter.write_line(f"{report.nodeid} ({status}): {json.dumps(value)}")
