#!/usr/bin/env bash
# The test command (`make check`): unit tests, end-to-end runs on a real
# ephemeral PostgreSQL started with the project's own script, and one
# end-to-end run under ThreadSanitizer.  Prints "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d /tmp/qchaos-test.XXXXXX)
chmod 755 "$work"
cleanup() {
  scripts/pg-ephemeral.sh destroy "$work/pg" >/dev/null 2>&1 || true
  scripts/mariadb-ephemeral.sh destroy "$work/mdb" >/dev/null 2>&1 || true
}
trap cleanup EXIT

echo "== starting an ephemeral PostgreSQL for the tests"
if ! dsn=$(scripts/pg-ephemeral.sh start "$work/pg" | tail -n1) || [ -z "$dsn" ]; then
  echo "tests/run.sh: could not start PostgreSQL (see $work/pg/log)" >&2
  exit 3
fi
export QC_TEST_DSN="$dsn"
echo "   $dsn"

echo "== starting an ephemeral MariaDB for the ODBC tests"
if ! odbc=$(scripts/mariadb-ephemeral.sh start "$work/mdb" | tail -n1) || [ -z "$odbc" ]; then
  echo "tests/run.sh: could not start MariaDB (see $work/mdb/log)" >&2
  exit 3
fi
export QC_TEST_ODBC="$odbc"
echo "   ${odbc//Pwd=*;/Pwd=***;}"

passed=0
failed=0
failures=()
step() { # name command...
  local name=$1; shift
  echo "== $name"
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$name"); fi
}

for t in tests/check_*; do
  case "$t" in *.c) continue ;; esac
  [ -x "$t" ] || continue
  step "$(basename "$t")" "./$t"
done

tsan_run() {
  make -s qchaos-tsan || return 1
  TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
    ./qchaos-tsan run scenarios/default.ini --dsn "$dsn" --jobs 2000 --workers 8 --seed 3 \
      --out "$work/tsan" --no-progress
}
step "e2e under ThreadSanitizer (default scenario, 2000 jobs, 8 workers)" tsan_run

tsan_chaos() {
  TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
    ./qchaos-tsan run scenarios/chaos.ini --dsn "$dsn" --jobs 1500 --seed 3 \
      --out "$work/tsan-chaos" --no-progress
}
step "e2e under ThreadSanitizer (chaos scenario: every fault, nemesis)" tsan_chaos

# Fuzzing: the three loaders' libFuzzer targets, FUZZ_SECONDS each (CI: 3 x
# 25 s), after the regression inputs and seeds under ASan+UBSan.
fuzz_run() {
  make -s fuzz || return 1
  ./build/fuzz/check_fuzz-san || return 1
  make -s fuzz-run FUZZ_SECONDS="${FUZZ_SECONDS:-25}"
}
step "fuzz targets (scenario, protocol, ledger; ${FUZZ_SECONDS:-25} s each)" fuzz_run

# The end-to-end scenarios once more on the ASan+UBSan build, halting on the
# first finding (check_scenarios runs $QC_QCHAOS_BIN).  The whole suite took
# 400 s here under ASan, so CI runs the subset "correct": every fault
# scenario on the correct protocol once, PostgreSQL and MariaDB.
asan_scenarios() {
  make -s qchaos-asan || return 1
  QC_QCHAOS_BIN=./qchaos-asan QC_SCENARIOS_SUBSET=correct \
    ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ./tests/check_scenarios
}
step "e2e fault scenarios under ASan+UBSan (check_scenarios subset on ./qchaos-asan)" asan_scenarios

# Detection power: every mutant must be caught in every seed and the correct
# protocol must raise nothing (a small K here; `make mutation K=10` for more).
step "mutation matrix (2 seeds)" ./qchaos mutation --seeds 2 --dsn "$dsn" --out "$work/mutation"

echo
for f in "${failures[@]}"; do echo "FAILED: $f"; done
echo "$passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then
  cleanup
  rm -rf "$work"   # run folders and ledgers are big; kept only when something failed
else
  echo "tests/run.sh: run folders kept in $work"
fi
[ "$failed" -eq 0 ]
