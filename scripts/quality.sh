#!/usr/bin/env bash
# The quality suite's full run (tests/e2e/quality_test.cc, DSL.md version 4):
# every relaxed program at default flags on 2, 4 and 8 workers, 3 runs each,
# against its serial run, with the cases on real data (../shared/data). CI
# runs the suite on 2 and 4 workers, once each; this is the nightly-style run
# docs/benchmarks.md names. Takes 20-30 minutes on a 2-core machine.
#
#   scripts/quality.sh [TABLE]   build/ must be built; TABLE (default
#                                build/quality.txt) gets one line per run:
#                                quality CASE WORKERS RUN VALUE SERIAL DIFF ok|MISSED
#
# Exits non-zero if any run missed the promise (the table says which).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
table=${1:-build/quality.txt}
[[ -x build/bin/e2e_test ]] || { echo "quality.sh: build/bin/e2e_test is not built (scripts/test.sh builds it)" >&2; exit 2; }
: > "$table"
RIGEL_QUALITY_FULL=1 RIGEL_QUALITY_TABLE="$table" \
  build/bin/e2e_test --gtest_filter='Quality/*' >/dev/null 2>&1
rc=$?
missed=$(grep -c ' MISSED$' "$table" || true)
runs=$(grep -c '^quality ' "$table" || true)
echo "quality.sh: $runs runs, $missed missed the promise; the table is $table"
grep ' MISSED$' "$table" || true
exit $rc
