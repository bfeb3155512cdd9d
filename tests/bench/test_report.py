#!/usr/bin/env python3
"""test_report.py: the verdict logic of bench/report.py (what `make bench`
publishes in docs/performance.md), on synthetic figures only: nothing is
timed and no benchmark runs. An impossible figure (negative, cheaper than
its own floor, a negative minimum) is "invalid", never "met"; a benchmark
whose control figures show contention is measured again a bounded number of
times, and a run still contended gives its timing targets "unreliable"
while sizes keep their verdicts. Run as `python3 tests/bench/test_report.py`
(ctest bench_report_verdicts). Standard library only.
"""
import os
import sys
import unittest

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import report  # noqa: E402


def fig(value, lo=None, hi=None, unit="ns"):
    return (value, unit, lo, hi)


# A clean bench_record and bench_scaling: tight floors, control at 1.0x.
CLEAN_RECORD = {"empty_loop_ns": fig(1.00, 0.98, 1.10), "tsc2_loop_ns": fig(12.0, 11.9, 12.5),
                "record_pair_over_tsc2": fig(1.10, unit="x"),
                "closed_minus_empty_ns": fig(0.20)}
CLEAN_SCALING = {"control_ratio_2t": fig(1.02, unit="x"), "amortized_ns_per_range": fig(1.5),
                 "scaling_ratio_2t": fig(1.05, unit="x")}


def target(name):
    for t in report.TARGETS:
        if t[0] == name:
            return t
    raise KeyError(name)


def verdict(name, metrics, contended=False):
    _, op, limit, _, _ = target(name)
    return report.verdict(name, op, limit, metrics, contended)[0]


class Verdicts(unittest.TestCase):
    def test_report_negative_figure_is_invalid_never_met(self):
        # The issue's "amortized ... -4.32 ns (-2.16x the limit) | met".
        self.assertEqual("invalid", verdict("amortized_ns_per_range", {"amortized_ns_per_range": fig(-4.32)}))
        self.assertEqual("invalid", verdict("closed_minus_empty_ns", {"closed_minus_empty_ns": fig(-0.01)}))

    def test_report_negative_minimum_is_invalid(self):
        # The issue's Python RecordEvent with a minimum of -29.6 ns.
        m = {"python_record_event_ns": fig(180.0, -29.6, 400.0)}
        self.assertEqual("invalid", verdict("python_record_event_ns", m))

    def test_report_implausible_figures_are_invalid(self):
        self.assertEqual("invalid", verdict("record_pair_over_tsc2", {"record_pair_over_tsc2": fig(0.3, unit="x")}))
        self.assertEqual("invalid", verdict("json_events_per_s", {"json_events_per_s": fig(5e12, unit="events/s")}))
        self.assertEqual("invalid", verdict("bytes_per_range_event", {"bytes_per_range_event": fig(0.0, unit="B")}))
        self.assertEqual("invalid", verdict("python_record_event_ns", {"python_record_event_ns": fig(float("nan"))}))
        self.assertEqual("invalid", verdict("stop_events_per_s", {"stop_events_per_s": fig(float("inf"))}))

    def test_report_plausible_figures_get_met_or_missed(self):
        self.assertEqual("met", verdict("amortized_ns_per_range", {"amortized_ns_per_range": fig(1.5)}))
        self.assertEqual("missed", verdict("amortized_ns_per_range", {"amortized_ns_per_range": fig(2.5)}))
        self.assertEqual("met", verdict("closed_minus_empty_ns", {"closed_minus_empty_ns": fig(0.0)}))
        self.assertEqual("met", verdict("json_events_per_s", {"json_events_per_s": fig(6e6)}))
        self.assertEqual("missed", verdict("json_events_per_s", {"json_events_per_s": fig(4e6)}))
        self.assertEqual("n/a", verdict("json_events_per_s", {}))

    def test_report_contended_run_gives_timing_targets_no_verdict(self):
        m = {"amortized_ns_per_range": fig(1.5), "bytes_per_range_event": fig(16.0, unit="B"),
             "json_events_per_s": fig(1e6, unit="events/s")}
        self.assertEqual("unreliable", verdict("amortized_ns_per_range", m, contended=True))
        self.assertEqual("unreliable", verdict("json_events_per_s", m, contended=True))
        self.assertEqual("met", verdict("bytes_per_range_event", m, contended=True))  # a size
        # Invalid stays invalid, contended or not.
        self.assertEqual("invalid", verdict("amortized_ns_per_range",
                                            {"amortized_ns_per_range": fig(-1.0)}, contended=True))

    def test_report_every_target_has_plausible_bounds(self):
        for name, *_ in report.TARGETS:
            self.assertIn(name, report.PLAUSIBLE, name)


class Contention(unittest.TestCase):
    def test_report_clean_controls_show_no_contention(self):
        self.assertEqual([], report.contention("bench_record", CLEAN_RECORD))
        self.assertEqual([], report.contention("bench_scaling", CLEAN_SCALING))
        self.assertEqual([], report.contention("bench_summary", {}))  # no control

    def test_report_control_off_its_expected_ratio_is_contention(self):
        # The issue's contended machine: its 2-thread control at 1.93x.
        found = report.contention("bench_scaling", dict(CLEAN_SCALING, control_ratio_2t=fig(1.93, unit="x")))
        self.assertEqual(1, len(found))
        self.assertIn("1.93x", found[0])
        self.assertTrue(report.contention("bench_scaling", dict(CLEAN_SCALING, control_ratio_2t=fig(0.6))))

    def test_report_slowed_or_impossible_floor_is_contention(self):
        slowed = dict(CLEAN_RECORD, tsc2_loop_ns=fig(20.0, 11.9, 40.0))  # median far above fastest
        self.assertTrue(report.contention("bench_record", slowed))
        below = dict(CLEAN_RECORD, tsc2_loop_ns=fig(0.9, 0.9, 0.95))  # floor under the empty loop
        self.assertTrue(any("above the empty loop" in c for c in report.contention("bench_record", below)))
        missing = {k: v for k, v in CLEAN_RECORD.items() if k != "empty_loop_ns"}
        self.assertTrue(report.contention("bench_record", missing))

    def test_report_paddle_bench_control_is_its_unprofiled_spread(self):
        self.assertEqual([], report.contention("bench_paddle",
                                               {"paddle_mlp_none_spread": fig(1.08, unit="x")}))
        found = report.contention("bench_paddle", {"paddle_mlp_none_spread": fig(2.04, unit="x")})
        self.assertEqual(1, len(found))
        self.assertIn("2.04x", found[0])
        # A bench_paddle that skipped (no paddle) measured nothing: nothing vouches for it.
        self.assertTrue(report.contention("bench_paddle", {}))


class PaddleTargets(unittest.TestCase):
    def test_report_paddle_targets_read_the_issue_limits(self):
        self.assertEqual("met", verdict("paddle_stop_speedup", {"paddle_stop_speedup": fig(25.0, unit="x")}))
        self.assertEqual("missed", verdict("paddle_stop_speedup", {"paddle_stop_speedup": fig(15.0, unit="x")}))
        self.assertEqual("met", verdict("paddle_mlp_step_ratio", {"paddle_mlp_step_ratio": fig(1.01, unit="x")}))
        self.assertEqual("missed", verdict("paddle_mlp_step_ratio", {"paddle_mlp_step_ratio": fig(1.10, unit="x")}))
        self.assertEqual("met", verdict("paddle_op_step_over_paddle",
                                        {"paddle_op_step_over_paddle": fig(1.03, unit="x")}))
        self.assertEqual("missed", verdict("paddle_op_step_over_paddle",
                                           {"paddle_op_step_over_paddle": fig(1.2, unit="x")}))
        self.assertEqual("unreliable", verdict("paddle_stop_speedup",
                                               {"paddle_stop_speedup": fig(25.0, unit="x")}, contended=True))
        self.assertEqual("invalid", verdict("paddle_stop_speedup", {"paddle_stop_speedup": fig(-1.0, unit="x")}))

    def test_report_reads_the_paddle_bench_metric_lines(self):
        line = "metric paddle_stop_speedup 21.5 x (min 18.2 max 24.9)"
        m = report.METRIC.match(line)
        self.assertEqual(("paddle_stop_speedup", "21.5", "x", "18.2", "24.9"), m.groups())


class TorchTargets(unittest.TestCase):
    def test_report_torch_targets_read_the_limits(self):
        self.assertEqual("met", verdict("torch_capture_over_floor_ns",
                                        {"torch_capture_over_floor_ns": fig(25.0, 12.0, 40.0)}))
        self.assertEqual("missed", verdict("torch_capture_over_floor_ns",
                                           {"torch_capture_over_floor_ns": fig(69.0, 50.0, 150.0)}))
        self.assertEqual("met", verdict("torch_whole_over_torch",
                                        {"torch_whole_over_torch": fig(0.10, unit="x")}))
        self.assertEqual("missed", verdict("torch_whole_over_torch",
                                           {"torch_whole_over_torch": fig(0.20, unit="x")}))
        self.assertEqual("met", verdict("torch_mlp_step_ratio",
                                        {"torch_mlp_step_ratio": fig(1.02, unit="x")}))
        self.assertEqual("missed", verdict("torch_mlp_step_ratio",
                                           {"torch_mlp_step_ratio": fig(1.09, unit="x")}))
        self.assertEqual("unreliable", verdict("torch_mlp_step_ratio",
                                               {"torch_mlp_step_ratio": fig(1.02, unit="x")},
                                               contended=True))

    def test_report_torch_capture_far_below_its_floor_is_invalid(self):
        # Capture does everything the empty callback does: a round 80 ns
        # under it is noise as large as the effect, not a fast capture.
        self.assertEqual("invalid", verdict("torch_capture_over_floor_ns",
                                            {"torch_capture_over_floor_ns": fig(10.0, -80.0, 40.0)}))
        self.assertEqual("invalid", verdict("torch_capture_over_floor_ns",
                                            {"torch_capture_over_floor_ns": fig(-60.0)}))
        self.assertEqual("invalid", verdict("torch_whole_over_torch",
                                            {"torch_whole_over_torch": fig(0.0, unit="x")}))

    def test_report_torch_bench_controls_are_its_unprofiled_spreads(self):
        clean = {"torch_loop_none_spread": fig(1.02, unit="x"),
                 "torch_mlp_none_spread": fig(1.12, unit="x")}
        self.assertEqual([], report.contention("bench_torch", clean))
        found = report.contention("bench_torch", dict(clean, torch_loop_none_spread=fig(1.3)))
        self.assertEqual(1, len(found))
        self.assertIn("op-heavy loop", found[0])
        self.assertTrue(report.contention("bench_torch", dict(clean, torch_mlp_none_spread=fig(1.6))))
        # A bench_torch that skipped (no torch) measured nothing: nothing vouches for it.
        self.assertTrue(report.contention("bench_torch", {}))


class Remeasure(unittest.TestCase):
    def runner(self, attempts):
        """A fake benchmark run: each call gives the next figures."""
        calls = []

        def run(cmd, metrics, notes):
            metrics.update(attempts[min(len(calls), len(attempts) - 1)])
            calls.append(cmd)
        return run, calls

    def test_report_contended_benchmark_is_measured_again_then_clean(self):
        contended = dict(CLEAN_SCALING, control_ratio_2t=fig(1.93), amortized_ns_per_range=fig(-4.32))
        run, calls = self.runner([contended, CLEAN_SCALING])
        metrics, notes = {}, []
        self.assertEqual([], report.measure("bench_scaling", ["x"], metrics, notes, runner=run))
        self.assertEqual(2, len(calls))
        self.assertEqual(1.5, metrics["amortized_ns_per_range"][0])  # the clean attempt's figures
        self.assertTrue(any("clean on attempt 2" in n for n in notes))

    def test_report_contended_every_time_is_bounded_and_unreliable(self):
        contended = dict(CLEAN_SCALING, control_ratio_2t=fig(1.93))
        run, calls = self.runner([contended])
        metrics, notes = {}, []
        found = report.measure("bench_scaling", ["x"], metrics, notes, runner=run, retries=2)
        self.assertEqual(3, len(calls))  # the first run and 2 more, never more
        self.assertTrue(found)
        block = report.render(metrics, notes, 1.0, [f"bench_scaling: {c}" for c in found], where="test")
        self.assertIn("This run is unreliable", block)
        rows = [line for line in block.splitlines() if line.startswith("| amortized")]
        self.assertEqual(1, len(rows))
        self.assertIn("unreliable", rows[0])
        self.assertNotIn("| met |", rows[0])

    def test_report_render_never_prints_met_for_an_invalid_figure(self):
        metrics = {"amortized_ns_per_range": fig(-4.32), "python_record_event_ns": fig(100.0, -29.6, 300.0)}
        block = report.render(metrics, [], 1.0, [], where="test")
        for line in block.splitlines():
            if line.startswith("| amortized") or line.startswith("| Python RecordEvent"):
                self.assertIn("**invalid**", line)
                self.assertNotIn("| met |", line)


if __name__ == "__main__":
    unittest.main(verbosity=2)
