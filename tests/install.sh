#!/usr/bin/env bash
# `make install PREFIX=DIR` after the normal build, then, from another
# folder, the installed qchaos finds its data (DIR/share/qchaos) and runs a
# bundled scenario by name: on QC_TEST_DSN, and on an ephemeral PostgreSQL
# started from the installed scripts.  QCHAOS_HOME overrides the data folder.
# Prints one line per check; exit 0 when all pass.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
: "${QC_TEST_DSN:?tests/install.sh needs QC_TEST_DSN (a libpq conninfo)}"
src=$PWD
tmp=$(mktemp -d /tmp/qchaos-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failed=0
ok() { echo "   ok: $*"; }
bad() { echo "   FAILED: $*"; failed=1; }
expect() { # exit-code description command...
  local want=$1 what=$2; shift 2
  "$@" >"$tmp/out" 2>&1
  local got=$?
  if [ "$got" -eq "$want" ]; then ok "$what (exit $got)"; else bad "$what: exit $got, want $want"; sed 's/^/      /' "$tmp/out" | tail -n 5; fi
}

if ! make -s install PREFIX="$tmp/qc" >"$tmp/make.log" 2>&1; then
  bad "make install PREFIX=$tmp/qc"; cat "$tmp/make.log"; exit 1
fi
ok "make install PREFIX=$tmp/qc"
q=$tmp/qc/bin/qchaos
cd "$tmp" || exit 1
expect 0 "installed: run default --dsn" \
  "$q" run default --dsn "$QC_TEST_DSN" --jobs 300 --out "$tmp/o" --no-progress
expect 0 "installed: run scenarios/default.ini --dsn" \
  "$q" run scenarios/default.ini --dsn "$QC_TEST_DSN" --jobs 300 --out "$tmp/o2" --no-progress
expect 0 "installed: run default (ephemeral server from the installed scripts)" \
  "$q" run default --jobs 300 --out "$tmp/o3" --no-progress
expect 2 "QCHAOS_HOME=$tmp/none: default not found" \
  env QCHAOS_HOME="$tmp/none" "$q" run default --dsn "$QC_TEST_DSN" --out "$tmp/o4"
grep -q "scenario 'default' not found.*$tmp/none/scenarios" "$tmp/out" && ok "the message names QCHAOS_HOME's folder" ||
  bad "message: $(cat "$tmp/out")"
"$q" run --help >"$tmp/out" 2>&1
grep -q "$tmp/qc/share/qchaos/scenarios" "$tmp/out" && ok "run --help names the data folder" ||
  bad "run --help: $(sed -n 4,5p "$tmp/out")"
QCHAOS_HOME=$src "$q" run --help >"$tmp/out" 2>&1
grep -q "$src/scenarios" "$tmp/out" && ok "QCHAOS_HOME overrides the data folder" ||
  bad "QCHAOS_HOME=$src: $(sed -n 4,5p "$tmp/out")"
exit "$failed"
