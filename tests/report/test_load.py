"""report/ptdp_report/load.py, the one reader of ptdp's JSON in Python: strict parsing as
core/config/json_read.cpp parses (a key twice, NaN, overflow, bad JSON refused with the file
and the field's JSON pointer), fields checked by pointer, and no import of matplotlib or numpy.

Run with any Python 3.10+ (standard library only):
  python3 -m unittest discover -s tests/report -p "test_*.py"
"""
import gzip
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPORT = Path(__file__).resolve().parents[2] / "report"
sys.path.insert(0, str(REPORT))

from ptdp_report.load import (Refused, field, parse_json, read_benchmarks, read_document, read_json,  # noqa: E402
                              read_or_none, read_result, read_sweep_results, require)


class Parsing(unittest.TestCase):
    def refusal(self, text, **kwargs):
        with self.assertRaises(Refused) as caught:
            parse_json(text, "f.json", **kwargs)
        return str(caught.exception)

    def test_a_key_twice_is_refused_at_its_object(self):
        self.assertEqual(self.refusal('{"a": [{"b": 1}, {"c": 1, "c": 2}]}'),
                         'f.json: /a/1: the key "c" appears twice in one object')

    def test_a_key_twice_at_the_top(self):
        self.assertEqual(self.refusal('{"x": 1, "x": 1}'), 'f.json: the key "x" appears twice in one object')

    def test_non_finite_numbers_are_refused(self):
        self.assertIn("NaN is not JSON", self.refusal('{"a": NaN}'))
        self.assertIn("-Infinity is not JSON", self.refusal('[-Infinity]'))
        self.assertIn("1e400 overflows a double", self.refusal('{"a": 1e400}'))

    def test_nan_as_null_for_google_benchmark(self):
        self.assertEqual(parse_json('{"cv": NaN, "x": 1.5}', "f.json", nan_as_null=True), {"cv": None, "x": 1.5})
        self.assertIn("overflows", self.refusal('{"a": 1e400}', nan_as_null=True))

    def test_syntax_and_depth(self):
        self.assertIn("f.json: not valid JSON", self.refusal('{"a": 1'))
        self.assertIn("f.json: not valid JSON", self.refusal('{"a": 1} x'))
        self.assertEqual(self.refusal("[" * 100000 + "]" * 100000), "f.json: nests too deep")

    def test_plain_documents_read_as_json_reads_them(self):
        text = '{"a": [1, 2.5, "x", null, true], "b": {"c": -3e-5}}'
        self.assertEqual(parse_json(text, "f.json"), json.loads(text))


class Files(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, value):
        path = self.dir / name
        path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
        return path

    def test_missing_and_gzip(self):
        with self.assertRaisesRegex(Refused, "nowhere.json: no such file"):
            read_json(self.dir / "nowhere.json")
        with gzip.open(self.dir / "t.json.gz", "wt") as f:
            f.write('{"traceEvents": []}')
        self.assertEqual(read_json(self.dir / "t.json.gz"), {"traceEvents": []})

    def test_read_or_none(self):
        self.assertIsNone(read_or_none(self.dir / "nowhere.json"))
        self.assertIsNone(read_or_none(self.write("cut.json", '{"metrics": ')))
        self.assertEqual(read_or_none(self.write("ok.json", {"a": 1})), {"a": 1})

    def test_schema(self):
        path = self.write("h.json", {"schema": "ptdp.compare/2"})
        with self.assertRaisesRegex(Refused, "h.json: /schema: 'ptdp.compare/2' is not 'ptdp.history/1'"):
            read_document(path, "ptdp.history/1")
        with self.assertRaisesRegex(Refused, "l.json: must be a JSON object"):
            read_document(self.write("l.json", [1]), "ptdp.history/1")

    def test_result_needs_metrics(self):
        with self.assertRaisesRegex(Refused, "r.json: /metrics: missing"):
            read_result(self.write("r.json", {"schema": "ptdp.result/2"}))
        with self.assertRaisesRegex(Refused, "r.json: /metrics: must be an object"):
            read_result(self.write("r.json", {"metrics": []}))

    def test_sweep_results(self):
        doc = {"schema": "ptdp.sweep-results/1", "sweep": {"name": "s"}, "points": [{"result": None}, {}]}
        self.assertEqual(read_sweep_results(self.write("s.json", doc)), doc)
        for broken, why in (({"sweep": {"name": 3}}, "/sweep/name: must be a string"),
                            ({"points": {}}, "/points: must be an array"),
                            ({"points": [{}, {"result": 1}]}, "/points/1/result: must be an object or null")):
            with self.subTest(why), self.assertRaisesRegex(Refused, "s.json: " + why):
                read_sweep_results(self.write("s.json", dict(doc, **broken)))

    def test_benchmarks_named_and_nan_read_as_null(self):
        path = self.write("k.json", '{"benchmarks": [{"name": "gemm/q_fwd", "cv": NaN}]}')
        self.assertIsNone(read_benchmarks(path)["benchmarks"][0]["cv"])
        with self.assertRaisesRegex(Refused, "k.json: /benchmarks/0/name: missing"):
            read_benchmarks(self.write("k.json", {"benchmarks": [{}]}))


class Fields(unittest.TestCase):
    DOC = {"a": {"b/c": [1, {"d": True}]}, "n": [{"x": 1}, {"x": "2"}], "m": {"p": {"x": 1.5}}}

    def test_field_by_pointer(self):
        self.assertEqual(field(self.DOC, "/a/b~1c/1/d", "f.json", "bool"), True)
        self.assertEqual(field(self.DOC, "/a/b~1c/0", "f.json", "number"), 1)
        with self.assertRaisesRegex(Refused, "f.json: /a/b~1c/2: missing"):
            field(self.DOC, "/a/b~1c/2", "f.json")
        with self.assertRaisesRegex(Refused, "f.json: /a: must be an array"):
            field(self.DOC, "/a", "f.json", "array")
        with self.assertRaisesRegex(Refused, "f.json: /a/b~1c/1/d: must be a number"):
            field(self.DOC, "/a/b~1c/1/d", "f.json", "number")   # a bool is not a number

    def test_require_every_element_and_member(self):
        self.assertIs(require(self.DOC, "f.json", {"/m/*/x": "number", "/n/0/x": "number"}), self.DOC)
        with self.assertRaisesRegex(Refused, "f.json: /n/1/x: must be a number"):
            require(self.DOC, "f.json", {"/n/*/x": "number"})
        with self.assertRaisesRegex(Refused, "f.json: /n/0/y: missing"):
            require(self.DOC, "f.json", {"/n/*/y": None})
        self.assertEqual(require({"n": []}, "f.json", {"/n/*/y": "number"}), {"n": []})  # no element, no rule


class GetForShellScripts(unittest.TestCase):
    """`load.py get FILE POINTER [DEFAULT]`, how the shell scripts read a field."""

    def get(self, *args):
        proc = subprocess.run([sys.executable, str(REPORT / "ptdp_report" / "load.py"), "get", *args],
                              capture_output=True, text=True, timeout=60)
        return proc.returncode, proc.stdout.strip(), proc.stderr

    def test_strings_as_they_are_the_rest_as_json_missing_refused_or_the_default(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "c.json"
            path.write_text('{"machine": "cpu-host", "plan": {"tp": 2}, "m": {"name": "x"}}')
            self.assertEqual(self.get(str(path), "/machine")[:2], (0, "cpu-host"))
            self.assertEqual(self.get(str(path), "/plan/tp")[:2], (0, "2"))
            self.assertEqual(self.get(str(path), "/m")[:2], (0, '{"name": "x"}'))
            self.assertEqual(self.get(str(path), "/plan/pp", "1")[:2], (0, "1"))
            rc, _, err = self.get(str(path), "/plan/pp")
            self.assertEqual(rc, 2)
            self.assertIn("/plan/pp: missing", err)
            path.write_text('{"a": 1, "a": 2}')
            rc, _, err = self.get(str(path), "/a", "0")  # a refused file is refused, default or not
            self.assertEqual(rc, 2)
            self.assertIn("appears twice", err)


class Imports(unittest.TestCase):
    def test_the_loader_needs_neither_matplotlib_nor_numpy(self):
        code = ("import sys; sys.modules['matplotlib'] = sys.modules['numpy'] = None; "
                f"sys.path.insert(0, {str(REPORT)!r}); import ptdp_report.load")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)


if __name__ == "__main__":
    unittest.main()
