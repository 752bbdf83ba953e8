"""Reading ``xctrace export`` output. The fixtures were written by hand from Apple's documentation of the export
format (each says so in its header); no KForge test has recorded a trace on a Mac."""

from __future__ import annotations

from pathlib import Path

import pytest
from metal_testing import FIXTURES

from kforge_metal.metal_trace import gpu_intervals, signposted_work, summarize_trace, union_runs
from kforge_metal.xctrace import record_command, table_xpath
from kforge_metal.xctrace_xml import ExportError, parse_table, parse_toc


def fixture(name: str) -> str:
    text = (FIXTURES / name).read_text()
    assert "NOT recorded on a Mac" in text  # the fixture says where it came from
    return text


def test_the_table_of_contents_names_the_launched_process_and_its_tables():
    toc = parse_toc(fixture("xctrace_toc.xml"))
    assert (toc.launched_pid, toc.launched_name) == (4242, "python3.12")
    assert "metal-gpu-intervals" in toc.schemas and "os-signpost-interval" in toc.schemas
    assert (toc.template, toc.end_reason) == ("Metal System Trace", "Target app exited")


def test_rows_resolve_references_and_keep_only_the_traced_process():
    table = parse_table(fixture("xctrace_metal_gpu_intervals.xml"))
    assert table.schema == "metal-gpu-intervals"
    assert table.columns[:3] == ("start", "duration", "channel-name") and "process" in table.columns
    assert len(table.rows) == 34  # 3 per forward for 10 forwards, and 4 of WindowServer
    ours = gpu_intervals(table, 4242)
    assert len(ours) == 30 and ours[0].start_ns == 0 and {i.channel for i in ours} == {"Compute"}
    assert {i.label for i in ours} == {"Command Buffer 0", "Compute Command 0", "Blit Command 0"}
    assert len(gpu_intervals(table, 151)) == 4


def test_the_summary_counts_nested_work_once_and_finds_the_gaps():
    summary = summarize_trace(parse_table(fixture("xctrace_metal_gpu_intervals.xml")), 4242,
                              parse_table(fixture("xctrace_signpost_intervals.xml")))
    # per forward: a kernel of 182-184 us (its encoder nested inside), 41 us idle, a 12 us blit, 70 us idle
    assert summary.busy_ns == 1_829_000 + 10 * 12_000
    assert summary.window_ns == 1_829_000 + 10 * (41_000 + 12_000 + 70_000) - 70_000
    assert summary.busy_fraction == pytest.approx(1_949_000 / 2_989_000)
    assert summary.longest_gaps_ns == (70_000,) * 5
    assert summary.intervals == 30 and summary.by_channel[0][0] == "Compute"
    (copy,) = summary.named
    assert copy.name == "BlitCopy: MPS:Float[4096, 4096] --> MPS:Float[4096, 4096]"
    assert (copy.calls, copy.total_ns) == (10, 120_000)


def test_signposts_of_other_subsystems_and_processes_are_left_out():
    signposts = parse_table(fixture("xctrace_signpost_intervals.xml"))
    assert len(signposts.rows) == 11
    assert [w.calls for w in signposted_work(signposts, 4242)] == [10]
    assert signposted_work(signposts, 151) == []  # WindowServer's signpost is not PyTorch's


def test_union_of_overlapping_intervals():
    from kforge_metal.metal_trace import GpuInterval

    runs = union_runs([GpuInterval(0, 10, "Compute"), GpuInterval(5, 10, "Compute"), GpuInterval(30, 5, "Blit")])
    assert runs == [(0, 15), (30, 35)]


def test_what_is_not_an_export_is_refused():
    with pytest.raises(ExportError, match="not XML"):
        parse_table("<trace-query-result><node>")
    with pytest.raises(ExportError, match="no <schema>"):
        parse_table("<trace-query-result><node/></trace-query-result>")
    with pytest.raises(ExportError, match="expected <trace-toc>"):
        parse_toc("<trace-query-result/>")
    with pytest.raises(ValueError, match="no GPU interval of process 9"):
        summarize_trace(parse_table(fixture("xctrace_metal_gpu_intervals.xml")), 9)


def test_the_commands_record_the_metal_template_with_signposts_and_export_by_xpath():
    command = record_command("/usr/bin/xcrun", Path("/w/metal.trace"), ["python", "-m", "x"], 120)
    assert command[:3] == ["/usr/bin/xcrun", "xctrace", "record"]
    assert command[command.index("--template") + 1] == "Metal System Trace"
    assert command[command.index("--instrument") + 1] == "os_signpost"
    assert command[command.index("--time-limit") + 1] == "120s"
    assert command[command.index("--launch"):] == ["--launch", "--", "python", "-m", "x"]
    assert table_xpath("metal-gpu-intervals") == '/trace-toc/run[@number="1"]/data/table[@schema="metal-gpu-intervals"]'
