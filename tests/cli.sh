#!/usr/bin/env bash
# The command line as a user meets it (needs ./qchaos and QC_TEST_DSN): each
# command's own --help, -V, a bad option as one line with a hint, a malformed
# connection string as an input error (exit 2) and an unreachable server as
# exit 3, an output folder holding a run refused without --force, the
# repeat command (typed order, empty words quoted) repeating the run, and
# stdout and stderr lines of --repeat in order in one log file.
# Prints one line per check; exit 0 when all pass.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
: "${QC_TEST_DSN:?tests/cli.sh needs QC_TEST_DSN (a libpq conninfo)}"
dsn=$QC_TEST_DSN
tmp=$(mktemp -d /tmp/qchaos-cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failed=0
ok() { echo "   ok: $*"; }
bad() { echo "   FAILED: $*"; failed=1; }
# run: exit-code description command...  (output in $tmp/out)
run() {
  local want=$1 what=$2; shift 2
  "$@" >"$tmp/out" 2>&1
  local got=$?
  if [ "$got" -eq "$want" ]; then ok "$what (exit $got)"; else bad "$what: exit $got, want $want"; sed 's/^/      /' "$tmp/out" | tail -n 5; fi
}
has() { # description grep-pattern: $tmp/out must match
  if grep -q -- "$2" "$tmp/out"; then ok "$1"; else bad "$1: no '$2' in: $(head -c 300 "$tmp/out")"; fi
}
lines() { # description n: $tmp/out has n lines
  local n; n=$(wc -l <"$tmp/out")
  if [ "$n" -eq "$2" ]; then ok "$1"; else bad "$1: $n lines: $(head -c 300 "$tmp/out")"; fi
}

for c in run audit report mutation gate shrink; do
  run 0 "$c --help" ./qchaos "$c" --help
  has "$c --help is $c's own" "^usage: qchaos $c "
done
run 0 "run --help" ./qchaos run --help; has "run --help lists --force" "--force"
run 0 "audit --help" ./qchaos audit --help; has "audit --help lists -o, --out" "-o, --out DIR"
run 0 "-V" ./qchaos -V; has "-V prints the version" "^qchaos [0-9]"
run 0 "--version" ./qchaos --version; has "--version prints the version" "^qchaos [0-9]"

run 2 "run --frob" ./qchaos run --frob
has "one line with a hint" "^qchaos: unknown option '--frob' for 'run' (see 'qchaos run --help')$"; lines "one line" 1
for c in audit report mutation gate shrink; do
  run 2 "$c --frob" ./qchaos "$c" --frob; lines "$c: one line" 1; has "$c: named qchaos" "^qchaos: unknown option '--frob' for '$c'"
done
run 2 "run --dsn (no value)" ./qchaos run --dsn; lines "one line" 1; has "says the value is missing" "^qchaos: option '--dsn' of 'run' needs a value"
run 2 "unknown command" ./qchaos frob; lines "one line" 1

for d in 'host=x bogus' 'postgres://[bad' 'postgresql://u:s3cret@[bad'; do
  run 2 "--dsn '$d' is an input error" ./qchaos run scenarios/default.ini --dsn "$d" --jobs 10 --out "$tmp/bad"
  has "says so" "invalid connection string"
  if grep -q s3cret "$tmp/out"; then bad "the password is printed: $(cat "$tmp/out")"; fi
done
run 3 "unreachable server stays exit 3" ./qchaos run scenarios/default.ini --dsn 'host=127.0.0.1 port=1 connect_timeout=5' --jobs 10 --out "$tmp/unreach"
run 2 "--worker-dsn 'a=b c' is an input error" ./qchaos run scenarios/default.ini --dsn "$dsn" --worker-dsn 'a=b c' --jobs 10 --out "$tmp/badw"

# An output folder that holds a run: refused, unless --force.
run 0 "a run into $tmp/o" ./qchaos run scenarios/default.ini --dsn "$dsn" --jobs 100 --out "$tmp/o" --no-progress
run 2 "the same --out again is refused" ./qchaos run scenarios/default.ini --dsn "$dsn" --jobs 100 --out "$tmp/o" --no-progress
has "says why" "^qchaos: output folder '$tmp/o' already holds a run (ledger.jsonl); remove it or pass --force$"
run 0 "--force overwrites" ./qchaos run scenarios/default.ini --dsn "$dsn" --jobs 100 --out "$tmp/o" --no-progress --force
mkdir -p "$tmp/r/seed-6" && : >"$tmp/r/seed-6/ledger.jsonl"
run 2 "--repeat 2 refuses when one seed's folder holds a run" ./qchaos run scenarios/default.ini --dsn "$dsn" --jobs 100 --seed 5 --repeat 2 --out "$tmp/r" --no-progress
has "names that folder" "'$tmp/r/seed-6' already holds a run"
[ ! -e "$tmp/r/seed-5" ] && ok "and runs nothing" || bad "seed 5 ran before the refusal"

# The repeat command: typed order, '' for an empty word (--dsn '': libpq's
# defaults, here the PG* variables), quotes, --seed/--out in place.
pgenv=(env PGHOST="$(sed -n 's/.*host=\([^ ]*\).*/\1/p' <<<"$dsn")"
       PGPORT="$(sed -n 's/.*port=\([^ ]*\).*/\1/p' <<<"$dsn")"
       PGUSER="$(sed -n 's/.*user=\([^ ]*\).*/\1/p' <<<"$dsn")"
       PGDATABASE="$(sed -n 's/.*dbname=\([^ ]*\).*/\1/p' <<<"$dsn")")
run 0 "a run with --dsn '' and its options in an unusual order" \
  "${pgenv[@]}" ./qchaos run --jobs 80 --seed 3 scenarios/default.ini --dsn '' --out "$tmp/rep dir" --no-progress
want="./qchaos run --jobs 80 --seed 3 scenarios/default.ini --dsn '' --out '$tmp/rep dir' --no-progress"
cmd=$(sed -n 's/^  "command": "\(.*\)",\{0,1\}$/\1/p' "$tmp/rep dir/results.json")
[ "$cmd" = "$want" ] && ok "results.json command is as typed" || bad "command: $cmd; want: $want"
mv "$tmp/rep dir" "$tmp/rep.first"
run 0 "the command repeats the run" "${pgenv[@]}" sh -c "$cmd"
grep -q '"seed": 3' "$tmp/rep dir/results.json" 2>/dev/null && ok "with the same seed, into the same folder" ||
  bad "no results.json with seed 3 in '$tmp/rep dir'"

# stdout and stderr of --repeat, both into one file, in the order written.
./qchaos run scenarios/default.ini --dsn "$dsn" --jobs 100 --seed 100 --repeat 2 --out "$tmp/seq" --no-progress >"$tmp/out" 2>&1
r100=$(grep -n "results in $tmp/seq/seed-100/" "$tmp/out" | cut -d: -f1)
s101=$(grep -n "^qchaos: seed 101, scenario" "$tmp/out" | cut -d: -f1)
all=$(grep -n "seeds 100..101 all passed" "$tmp/out" | cut -d: -f1)
if [ -n "$r100" ] && [ -n "$s101" ] && [ -n "$all" ] && [ "$r100" -lt "$s101" ] && [ "$s101" -lt "$all" ]; then
  ok "--repeat 2 2>&1: seed 100's results (line $r100) before seed 101's start (line $s101), summary last (line $all)"
else
  bad "--repeat 2 2>&1 out of order: results 100 at '$r100', start 101 at '$s101', summary at '$all'"; grep -n '^qchaos' "$tmp/out"
fi
exit "$failed"
