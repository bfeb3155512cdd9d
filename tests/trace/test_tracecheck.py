#!/usr/bin/env python3
"""test_tracecheck.py: tests of tracecheck.py, the checker of stepprof's
Chrome-trace JSON. The valid case is the minimal trace of trace-format.md
§10.1 (data/minimal.json); every other case edits that text in one place, so
a rejection can only come from the edit, and checks that the messages name
the problem. Run as `python3 tests/trace/test_tracecheck.py`; the last line
is "N passed, N failed". Standard library only.
"""
import gzip
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tracecheck  # noqa: E402

MINIMAL_PATH = os.path.join(HERE, "data", "minimal.json")
with open(MINIMAL_PATH, encoding="utf-8") as f:
    MINIMAL = f.read()

MATMUL = '{"ph":"X","cat":"cpu_op","name":"matmul","pid":4321,"tid":4321,"ts":1060.000'
FLOW_START = '{"ph":"s","cat":"ac2g","name":"ac2g","id":77001,"pid":4321,"tid":4321,"ts":1100.250},\n'
STEP = '{"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":4321,"tid":4321,' \
       '"ts":1000.000,"dur":800.000,"args":{"External id":1}},\n'
DIST = '"distributedInfo":{"rank": 0, "world_size": 1},\n'


def mutated(old, new):
    """MINIMAL with the one occurrence of old replaced by new."""
    assert MINIMAL.count(old) == 1, f"{old!r} occurs {MINIMAL.count(old)} times"
    return MINIMAL.replace(old, new)


def counters_text(keys):
    body = ",".join(f'"{k}":0' for k in keys)
    return mutated(DIST, DIST + f' "stepprof_counters":{{{body}}},\n')


def errors_for(text):
    return tracecheck.check_trace(text, tracecheck.parse_trace_text(text))


def run_cli(*args):
    out = io.StringIO()
    with redirect_stdout(out):
        try:
            code = tracecheck.main(list(args))
        except SystemExit as e:
            code = e.code
    return code, out.getvalue()


class TraceCheckTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, data):
        path = os.path.join(self.tmp.name, name)
        with open(path, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        return path

    def assertRejected(self, text, *words):
        errors = errors_for(text)
        self.assertTrue(errors, "expected the trace to be rejected")
        joined = "\n".join(errors)
        for word in words:
            self.assertIn(word, joined)
        return errors

    # valid input

    def test_minimal_trace_passes(self):
        raw, obj = tracecheck.load_trace(MINIMAL_PATH)
        self.assertEqual([], tracecheck.check_trace(raw, obj))

    def test_gzip_variant_passes(self):
        path = self.write("t.pt.trace.json.gz", gzip.compress(MINIMAL.encode()))
        raw, obj = tracecheck.load_trace(path)
        self.assertEqual(MINIMAL, raw)
        self.assertEqual([], tracecheck.check_trace(raw, obj))

    def test_counters_in_order_pass(self):
        text = counters_text(tracecheck.COUNTER_KEYS + ["extra_key"])
        self.assertEqual([], errors_for(text))

    def test_leading_whitespace_passes(self):
        self.assertEqual([], errors_for("\n  " + MINIMAL))

    def test_touching_and_equal_slices_pass(self):
        text = mutated('"ts":1002.125,"dur":50.000', '"ts":1010.000,"dur":50.000')
        self.assertEqual([], errors_for(text))
        twin = MATMUL.replace("matmul", "twin") + ',"dur":120.500,"args":{"External id":9}},\n'
        self.assertEqual([], errors_for(mutated(FLOW_START, FLOW_START + twin)))

    # rejected input, in the brief's order

    def test_x_without_cat_rejected(self):
        text = mutated(MATMUL, MATMUL.replace('"cat":"cpu_op",', ""))
        self.assertRejected(text, "event 6", 'missing "cat"')

    def test_string_tid_on_cpu_op_rejected(self):
        text = mutated(MATMUL, MATMUL.replace('"tid":4321', '"tid":"main"'))
        self.assertRejected(text, "event 6", "tid must be an integer", "'main'")

    def test_partial_overlap_rejected(self):
        text = mutated('"ts":1002.125,"dur":50.000', '"ts":1002.125,"dur":70.000')
        self.assertRejected(text, "events 5 and 6 partially overlap", "pid 4321 tid 4321")

    def test_integer_us_ts_rejected(self):
        text = mutated('"ts":1000.000,"dur":800.000', '"ts":1000,"dur":800.000')
        self.assertRejected(text, 'event 4 (X user_annotation "ProfilerStep#3"): "ts" '
                            "written as 1000", "3 decimals")

    def test_dur_with_six_decimals_rejected(self):
        text = mutated('"dur":120.500', '"dur":120.500001')
        self.assertRejected(text, 'event 6 (X cpu_op "matmul"): "dur" written as 120.500001')

    def test_rank_without_space_rejected(self):
        text = mutated('"rank": 0', '"rank":0')
        self.assertRejected(text, '"rank" must be followed by a colon and a space',
                            "HTA falls back to rank 0")

    def test_nan_rejected(self):
        text = mutated('"blocks per SM":1.25', '"blocks per SM":NaN')
        with self.assertRaisesRegex(tracecheck.TraceError, "NaN"):
            tracecheck.load_trace(self.write("nan.json", text))

    def test_infinity_overflow_rejected(self):
        text = mutated('"blocks per SM":1.25', '"blocks per SM":1e999')
        with self.assertRaisesRegex(tracecheck.TraceError, "finite"):
            tracecheck.parse_trace_text(text)

    def test_duplicate_flow_start_rejected(self):
        text = mutated(FLOW_START, FLOW_START * 2)
        self.assertRejected(text, "flow id 77001 has 2 starts", "flow_duplicate_id")

    def test_step_with_duration_suffix_rejected(self):
        text = mutated('"ProfilerStep#3"', '"ProfilerStep#3 [1.2 ms]"')
        self.assertRejected(text, "event 4", "ProfilerStep#<digits>")

    def test_step_num_samples(self):
        ok = mutated('"name":"ProfilerStep#3","pid":4321,"tid":4321,"ts":1000.000,"dur":800.000,'
                     '"args":{"External id":1', '"name":"ProfilerStep#3","pid":4321,"tid":4321,'
                     '"ts":1000.000,"dur":800.000,"args":{"External id":1,"num_samples":32')
        self.assertEqual([], errors_for(ok))
        self.assertRejected(ok.replace('"num_samples":32', '"num_samples":-1'), "event 4",
                            "num_samples must be an integer")
        self.assertRejected(ok.replace('"num_samples":32', '"num_samples":2.5'), "num_samples")

    def test_counters_out_of_order_rejected(self):
        keys = list(tracecheck.COUNTER_KEYS)
        keys[2], keys[3] = keys[3], keys[2]
        self.assertRejected(counters_text(keys), 'key #3 must be "discarded_records"')

    def test_counters_missing_key_rejected(self):
        self.assertRejected(counters_text(tracecheck.COUNTER_KEYS[:-1]),
                            'key #12 must be "misuse", got None')

    def test_bom_prefix_rejected(self):
        self.assertRejected("\ufeff" + MINIMAL, "BOM")
        raw, obj = tracecheck.load_trace(self.write("bom.json", "\ufeff" + MINIMAL))
        self.assertIn("BOM", "".join(tracecheck.check_trace(raw, obj)))

    def test_invalid_utf8_rejected(self):
        data = MINIMAL.replace('"matmul"', '"mat\x00mul"').encode().replace(b"\x00", b"\xff")
        with self.assertRaisesRegex(tracecheck.TraceError, "invalid UTF-8"):
            tracecheck.load_trace(self.write("bad.json", data))

    # further rules of trace-format.md

    def test_array_form_rejected(self):
        self.assertRejected("[]", "does not begin with", "must be an object")

    def test_key_order_rejected(self):
        text = mutated('"displayTimeUnit":"ms",', "").replace(
            '"traceName"', '"displayTimeUnit":"ms","traceName"')
        self.assertRejected(text, "top-level keys out of order")

    def test_missing_trace_name_rejected(self):
        text = mutated(',\n "traceName":"host_4321.1727743123000000000.pt.trace.json"', "")
        self.assertRejected(text, "missing top-level key(s): traceName")

    def test_wrongly_typed_values_reported_not_raised(self):
        text = mutated(MATMUL, '{"ph":["X"],"cat":{},"name":[1],"pid":[],"tid":{},"ts":1060.000')
        self.assertRejected(text, "event 6", "ph must be a string", "cat must be a string")

    def test_paddle_schema_version_rejected(self):
        text = mutated('"schemaVersion":1', '"schemaVersion":"1.0.2"')
        self.assertRejected(text, "schemaVersion must be the integer 1, got '1.0.2'")

    def test_device_properties_out_of_id_order_rejected(self):
        self.assertRejected(mutated('[{"id":0,', '[{"id":1,'),
                            "deviceProperties[0] must be an object with id 0")

    def test_gpu_device_mismatch_rejected(self):
        self.assertRejected(mutated('"device":0,', '"device":1,'),
                            "args.device must equal pid 0")

    def test_gpu_pid_64_rejected(self):
        text = mutated('"name":"gemm_f32_128x64_kernel","pid":0',
                       '"name":"gemm_f32_128x64_kernel","pid":64')
        self.assertRejected(text, "pid must be an integer in 0..63")

    def test_negative_ts_rejected(self):
        text = mutated('"ts":1201.500', '"ts":-1.500')
        self.assertRejected(text, "event 11", "ts must be a number >= 0")

    def test_overlapping_steps_rejected(self):
        step4 = STEP.replace("#3", "#4").replace("1000.000", "1700.000").replace(
            '"External id":1', '"External id":10')
        self.assertRejected(mutated(STEP, STEP + step4), "steps overlap")

    def test_duplicate_external_id_rejected(self):
        text = mutated('"External id":2}', '"External id":1}')
        self.assertRejected(text, "External id 1 already used by event 4")

    def test_missing_external_id_rejected_where_records_link(self):
        # minimal.json holds CUDA calls and kernels: every host range needs its id.
        text = mutated('"External id":2}', '"Event Type":"Operator"}')
        self.assertRejected(text, 'host range needs a positive integer "External id"')

    def test_cpu_only_ranges_without_args_pass(self):
        text = ('{"schemaVersion":1,"deviceProperties":[],\n' + DIST +
                '"displayTimeUnit":"ms","baseTimeNanoseconds":1700000000000000000,\n"traceEvents":[\n'
                '{"ph":"M","name":"process_name","pid":4321,"tid":0,"ts":0.000,"args":{"name":"p"}},\n'
                '{"ph":"M","name":"thread_name","pid":4321,"tid":4321,"ts":0.000,"args":{"name":"t"}},\n'
                '{"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":4321,"tid":4321,'
                '"ts":1000.000,"dur":800.000},\n' + MATMUL + ',"dur":10.000}\n'
                '],\n"traceName":"x.json"}\n')
        self.assertEqual(errors_for(text), [])
        bad = text.replace(',"dur":10.000}', ',"dur":10.000,"args":{"External id":0}}')
        self.assertRejected(bad, 'host range needs a positive integer "External id"')

    def test_flow_end_without_start_rejected(self):
        self.assertRejected(mutated(FLOW_START, ""), "flow id 77001: end (event 9) has no start")

    def test_bp_on_flow_start_rejected(self):
        text = mutated(FLOW_START, FLOW_START.replace('"ts":1100.250}', '"ts":1100.250,"bp":"e"}'))
        self.assertRejected(text, 'only flow ends (ph "f") may carry "bp":"e"')

    def test_missing_thread_name_rejected(self):
        text = mutated('"name":"thread_name","pid":4321', '"name":"thread_label","pid":4321')
        self.assertRejected(text, "thread pid 4321 tid 4321", "no thread_name")

    def test_missing_process_name_rejected(self):
        text = mutated('"name":"process_name","pid":0', '"name":"process_label","pid":0')
        self.assertRejected(text, "pid 0 (first: event 2) has no process_name")

    # summary and command line

    def test_summarize_counts_events(self):
        s = tracecheck.summarize(json.loads(MINIMAL))
        self.assertEqual(14, s["events"])
        self.assertEqual({"M": 4, "X": 6, "s": 1, "f": 1, "i": 2}, s["ph"])
        self.assertEqual(2, s["cat"]["cpu_op"])
        self.assertEqual(7, s["tracks"][(4321, 4321)])
        self.assertEqual(2, s["threads"])
        self.assertIn("ProfilerStep#3", s["names"])

    def test_cli_valid_file_exits_0(self):
        code, out = run_cli(MINIMAL_PATH, "--min-events", "14",
                            "--expect-name", "matmul")
        self.assertEqual(0, code)
        self.assertEqual(f"ok {MINIMAL_PATH}: 14 events on 2 threads\n", out)

    def test_cli_invalid_file_exits_1(self):
        bad = self.write("bad.json", mutated('"rank": 0', '"rank":0'))
        code, out = run_cli(MINIMAL_PATH, bad)
        self.assertEqual(1, code)
        self.assertIn(f"ok {MINIMAL_PATH}", out)
        self.assertIn(f"FAIL {bad}", out)

    def test_cli_unmet_expectations_exit_1(self):
        code, out = run_cli(MINIMAL_PATH, "--min-events", "15",
                            "--expect-name", "conv2d", "--expect-counter", "misuse=0")
        self.assertEqual(1, code)
        for word in ("expected at least 15", "no event named 'conv2d'", "'misuse'"):
            self.assertIn(word, out)

    def test_cli_expect_counter_passes(self):
        path = self.write("c.json", counters_text(tracecheck.COUNTER_KEYS))
        self.assertEqual(0, run_cli(path, "--expect-counter", "overlap=0")[0])

    def test_cli_usage_error_exits_2(self):
        with redirect_stderr(io.StringIO()):
            self.assertEqual(2, run_cli(MINIMAL_PATH, "--expect-counter", "overlap")[0])
            self.assertEqual(2, run_cli()[0])

    def test_cli_runs_as_a_command(self):
        script = os.path.join(HERE, "tracecheck.py")
        proc = subprocess.run([sys.executable, "-B", script, MINIMAL_PATH],
                              capture_output=True, text=True)
        self.assertEqual(0, proc.returncode, proc.stdout + proc.stderr)


def main():
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(TraceCheckTest)
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    passed = result.testsRun - failed - len(result.skipped)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
