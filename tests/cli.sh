#!/usr/bin/env bash
# The command line as a user meets it (needs ./qchaos and QC_TEST_DSN): each
# command's own --help, -V, a bad option as one line with a hint, a malformed
# connection string as an input error (exit 2) and an unreachable server as
# exit 3, an output folder holding a run refused without --force, the
# repeat command (typed order, empty words quoted) repeating the run,
# stdout and stderr lines of --repeat in order in one log file; -P progress
# lines in a log (not a terminal), --duration keeping the queue busy and
# jobs/s over the work, samples.csv; --repeat's summary, qchaos summary
# and qchaos diff (exit 1 when B is worse on a judged checker).
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

for c in run audit report mutation gate shrink summary diff; do
  run 0 "$c --help" ./qchaos "$c" --help
  has "$c --help is $c's own" "^usage: qchaos $c "
done
run 0 "run --help" ./qchaos run --help; has "run --help lists --force" "--force"
run 0 "audit --help" ./qchaos audit --help; has "audit --help lists -o, --out" "-o, --out DIR"
run 0 "-V" ./qchaos -V; has "-V prints the version" "^qchaos [0-9]"
run 0 "--version" ./qchaos --version; has "--version prints the version" "^qchaos [0-9]"

run 2 "run --frob" ./qchaos run --frob
has "one line with a hint" "^qchaos: unknown option '--frob' for 'run' (see 'qchaos run --help')$"; lines "one line" 1
for c in audit report mutation gate shrink summary diff; do
  run 2 "$c --frob" ./qchaos "$c" --frob; lines "$c: one line" 1; has "$c: named qchaos" "^qchaos: unknown option '--frob' for '$c'"
done
run 2 "run --dsn (no value)" ./qchaos run --dsn; lines "one line" 1; has "says the value is missing" "^qchaos: option '--dsn' of 'run' needs a value"
run 2 "unknown command" ./qchaos frob; lines "one line" 1
for v in 0 abc 2x -1; do
  run 2 "QC_AUDIT_THREADS=$v is refused" env QC_AUDIT_THREADS="$v" ./qchaos audit /dev/null
  lines "one line" 1; has "names the variable" "^qchaos: QC_AUDIT_THREADS='$v' is not a thread count (1..9999)$"
done

for d in 'host=x bogus' 'postgres://[bad' 'postgresql://u:s3cret@[bad'; do
  run 2 "--dsn '$d' is an input error" ./qchaos run scenarios/default.ini --dsn "$d" --jobs 10 --out "$tmp/bad"
  has "says so" "invalid connection string"
  if grep -q s3cret "$tmp/out"; then bad "the password is printed: $(cat "$tmp/out")"; fi
done
run 3 "unreachable server stays exit 3" ./qchaos run scenarios/default.ini --dsn 'host=127.0.0.1 port=1 connect_timeout=5' --jobs 10 --out "$tmp/unreach"
has "and says what to do about it" "Without --dsn .* qchaos starts a throwaway server"
[ ! -e "$tmp/unreach" ] && ok "and leaves no empty results folder behind" ||
  bad "the unreachable run left $tmp/unreach: $(ls -A "$tmp/unreach" | head -3)"
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

# The --repeat summary: a table of both seeds and OUT/summary.json.
grep -q "^$tmp/seq/seed-100 .* PASS" "$tmp/out" && grep -q "^$tmp/seq/seed-101 .* PASS" "$tmp/out" &&
  ok "--repeat 2 prints a line per seed" || bad "--repeat 2: no summary table: $(tail -n 25 "$tmp/out")"
grep -q '^qchaos: summary: 2 runs (2 PASS, 0 FAIL, 0 INCONCLUSIVE)' "$tmp/out" &&
  ok "--repeat 2 prints the aggregate line, all passing" || bad "--repeat 2: no aggregate line"
grep -q '"runs": 2' "$tmp/seq/summary.json" 2>/dev/null && ok "--repeat 2 writes OUT/summary.json" ||
  bad "no $tmp/seq/summary.json with \"runs\": 2"
run 0 "qchaos summary DIR (a folder of runs)" ./qchaos summary --json "$tmp/sum.json" "$tmp/seq"
has "one line per run" "^$tmp/seq/seed-101 "
grep -q '"exit_code": 0' "$tmp/sum.json" && ok "summary --json written" || bad "no $tmp/sum.json"
run 2 "qchaos summary of a folder without runs" ./qchaos summary "$tmp/r"
has "names it" "'$tmp/r' holds no results.json"
run 0 "qchaos diff of two passing seeds" ./qchaos diff "$tmp/seq/seed-100" "$tmp/seq/seed-101"
has "says B is not worse" "^qchaos: diff: B is not worse than A on any judged checker"
has "shows the throughput shift" "jobs/s over the work"
run 1 "a run of the select-then-update mutant (B)" ./qchaos run scenarios/default.ini \
  --protocol backends/postgres/mutants/select_then_update.sql --dsn "$dsn" --jobs 1000 --seed 100 \
  --out "$tmp/mut" --no-progress
run 1 "qchaos diff correct -> mutant is exit 1" ./qchaos diff "$tmp/seq/seed-100" "$tmp/mut"
has "exclusive_claim is worse and judged" "^exclusive_claim .*PASS .*FAIL .*WORSE (judged)"
has "the new violations are named" "^  new exclusive_claim job "
run 0 "qchaos diff mutant -> correct is exit 0" ./qchaos diff "$tmp/mut" "$tmp/seq/seed-100"
run 2 "qchaos diff needs two runs" ./qchaos diff "$tmp/mut"

# -P 0.5 into a log file (stderr is no terminal) with --duration 3 on 50
# jobs: progress lines all along, whole and in order; the queue is kept
# busy for the whole chaos phase (more jobs than the 50, work over at least
# 2.5 s), and jobs/s is over the work.  The password given never shows.
./qchaos run scenarios/default.ini --dsn "$dsn password=Pw9Secret" --jobs 50 --duration 3 -P 0.5 \
  --seed 5 --out "$tmp/dur" >"$tmp/out" 2>&1
rc=$?
[ "$rc" -eq 0 ] && ok "--duration 3 -P 0.5 run (exit 0)" || { bad "--duration 3 -P 0.5: exit $rc"; tail -n 5 "$tmp/out"; }
host=$(sed -n 's/.*host=\([^ ]*\).*/\1/p' <<<"$dsn"); port=$(sed -n 's/.*port=\([^ ]*\).*/\1/p' <<<"$dsn")
db=$(sed -n 's/.*dbname=\([^ ]*\).*/\1/p' <<<"$dsn")
np=$(grep -c '^qchaos: progress ' "$tmp/out")
nwhole=$(grep -cE "^qchaos: progress [0-9]+\.[0-9] s, (setup|enqueue|chaos|heal|drain|audit), $host:$port/$db: .*, ETA ([0-9]+ (s|min)|unknown)\$" "$tmp/out")
[ "$np" -ge 5 ] && [ "$np" -eq "$nwhole" ] && ok "$np progress lines, each whole (phase, target, ETA)" ||
  bad "progress lines: $np, whole: $nwhole: $(grep -m3 progress "$tmp/out")"
nchaos=$(grep -c '^qchaos: progress [0-9.]* s, chaos, ' "$tmp/out")
[ "$nchaos" -ge 4 ] && ok "$nchaos lines in the chaos phase" || bad "only $nchaos progress lines in the chaos phase"
grep '^qchaos: progress ' "$tmp/out" | awk '{ t = $3 + 0; if (t < last) exit 1; last = t }' &&
  ok "progress lines in time order" || bad "progress lines out of order"
grep -q 're-deliveries deduplicated by op key' "$tmp/out" && ! grep -qE 'repeated effects|errors [0-9]' "$tmp/out" &&
  ok "counts named as what they are" || bad "progress counts: $(grep -m1 progress "$tmp/out")"
grep -q Pw9Secret "$tmp/out" && bad "the password is printed" || ok "no password in the output"
jobs=$(jq -r '.figures.work.completes // 0' "$tmp/dur/results.json")
work=$(grep -o '"work_s": [0-9.]*' "$tmp/dur/results.json" | grep -o '[0-9.]*$')
awk -v j="${jobs:-0}" -v w="${work:-0}" 'BEGIN { exit !(j > 50 && w >= 2.5) }' &&
  ok "--duration 3: $jobs jobs done over $work s of work (the backlog kept the queue busy)" ||
  bad "--duration 3: jobs '$jobs', work_s '$work' (want > 50 jobs, >= 2.5 s)"
has "the summary line says jobs/s is over the work" "jobs/s over [0-9.]* s of work (first claim to last complete)"
nrows=$(grep -c '^[0-9]' "$tmp/dur/samples.csv" 2>/dev/null)
[ "${nrows:-0}" -ge 3 ] && ok "samples.csv: $nrows one-second rows" || bad "samples.csv: ${nrows:-no} rows"
grep -qE '[0-9]\.[0-9]{4,}' "$tmp/dur/results.json" && bad "results.json has unrounded floats: $(grep -m2 -E '[0-9]\.[0-9]{4,}' "$tmp/dur/results.json")" ||
  ok "results.json floats rounded"
# One run at a time on a database: a session holding qchaos's run lock
# (advisory lock 1903326323, 1, as a running qchaos's control session does)
# makes another run exit 3 naming that session, before any table is
# touched; a shard (the lock's shared form) is refused too.
psql "$dsn" -Atq -c "SELECT pg_advisory_lock(1903326323, 1)" -c "SELECT pg_sleep(60)" \
  >/dev/null 2>&1 &
holder=$!
for _ in $(seq 1 100); do # until the lock is held
  [ "$(psql "$dsn" -Atc "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1903326323 AND granted" 2>/dev/null)" = 1 ] && break
  sleep 0.1
done
run 3 "a run on a database another run is using is refused" ./qchaos run scenarios/default.ini --dsn "$dsn" --jobs 10 --out "$tmp/busy" --no-progress
has "it names the session that holds the run lock" "another qchaos run is using this database: server process [0-9]* (application_name psql"
[ -f "$tmp/busy/ledger.jsonl" ] && bad "the refused run wrote a ledger" || ok "the refused run wrote no ledger"
run 3 "a shard of a run is refused too" ./qchaos run scenarios/default.ini --dsn "$dsn" --jobs 10 --shard 0/2 --out "$tmp/busy2" --no-progress
psql "$dsn" -Atq -c "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1903326323" >/dev/null 2>&1
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
run 0 "once the other session is gone the run goes ahead" ./qchaos run scenarios/default.ini --dsn "$dsn" --jobs 10 --out "$tmp/busy" --no-progress --force
exit "$failed"
