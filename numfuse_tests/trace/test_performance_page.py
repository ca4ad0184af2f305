"""docs/performance.md is what `python -m benchmarks.report` builds from the workloads' plans
and the committed GPU results."""

from benchmarks import report


def test_performance_page_is_current():
    assert report.PAGE.read_text() == report.page(), (
        "docs/performance.md is stale: run python -m benchmarks.report"
    )


def test_every_workload_has_a_row():
    from benchmarks.workloads import WORKLOADS

    rows = report.plan_table()[2:]
    assert [row.split(" | ")[0].strip("| ") for row in rows] == [w.name for w in WORKLOADS]
