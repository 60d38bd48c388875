"""Extract the expressions of the CEL spec's conformance tests into spec_expressions.json.

    python tests/validate/data/cel_rewrite/extract_spec.py CEL_SPEC_CHECKOUT > spec_expressions.json

CEL_SPEC_CHECKOUT is a checkout of github.com/google/cel-spec; the cases are those
benchmarks/cel_libraries.py reads from ``tests/simple/testdata`` (the files a rule over
JSON-like objects exercises, whose outcome is a scalar or an error, with no bindings, type
environment or message).  tests/validate/test_cel_rewrite.py checks that each expression,
parsed and written back by kzgit.validate.celsyntax, evaluates as the expression itself does.
"""
from __future__ import annotations

import json
import os
import runpy
import sys

if __name__ == "__main__":
    # benchmarks/cel_libraries.py's reader of the spec's cases, run from its file (it is a
    # script, not a distribution the tests declare)
    cases = runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "benchmarks",
                                        "cel_libraries.py"))["cases"]
    out = [{"name": label, "expr": expr}
           for label, expr, _ in cases(os.path.join(sys.argv[1], "tests/simple/testdata"))]
    json.dump(out, sys.stdout, indent=0, ensure_ascii=False)
    sys.stdout.write("\n")
