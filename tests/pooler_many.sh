#!/usr/bin/env bash
# Many workers through PgBouncer in transaction mode (issue 16): the correct
# protocol over scenarios/pgbouncer_1000.ini cut to 250 workers and 3000
# jobs (kills after claim and effect, stalls past the lease, lost answers
# and requests, poison), on an ephemeral PostgreSQL with PgBouncer in front
# that qchaos starts itself ([topology] pooler = pgbouncer, pool_size 8).
# It asserts the verdict, never a time:
#   - exit 0 and verdict PASS, every judged checker PASS with opportunities;
#   - all 250 workers sent claims, through a PgBouncer told to accept them
#     (the ledger header says pooler pgbouncer, pool_size 8);
#   - with a soft open-files limit (256) below what 250 workers need, qchaos
#     raises it itself (the run above runs under it);
#   - a hard limit below the need is refused before anything starts (exit
#     2, both numbers named, no ledger), and so is [nemesis]
#     terminate_every_ms behind a pooler;
#   - results.json carries metrics.harness (the harness's CPU and peak RSS:
#     numbers for tests/bench_pool1000.sh, not judged here).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

work=$(mktemp -d /tmp/qchaos-pooler.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
fail() { echo "tests/pooler_many.sh: FAIL: $*" >&2; exit 1; }
# qchaos starts its own server for a pooler scenario: no PG* variable may
# point it elsewhere
run_q() {
  env -u PGHOST -u PGHOSTADDR -u PGPORT -u PGDATABASE -u PGUSER -u PGPASSWORD -u PGSERVICE \
    -u PGSERVICEFILE ./qchaos "$@"
}

workers=250
out=$work/p$workers
(
  ulimit -Sn 256 || exit 99
  run_q run scenarios/pgbouncer_1000.ini --workers "$workers" --jobs 3000 --seed 7 \
    --out "$out" --no-progress
) >"$work/run.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
  cat "$work/run.log" >&2
  fail "$workers workers through PgBouncer exited $rc (expected 0)"
fi
r=$out/results.json
[ "$(jq -r .verdict "$r")" = PASS ] || fail "verdict $(jq -r .verdict "$r"), expected PASS"
[ "$(jq -r .metrics.workers "$r")" = "$workers" ] || fail "metrics.workers is not $workers"
bad=$(jq -r '.judged as $j | .checkers[] | select(.name as $n | $j | index($n))
  | select(.verdict != "PASS" or .opportunities <= 0) | "\(.name) \(.verdict) \(.opportunities)"' "$r")
[ -z "$bad" ] || fail "judged checkers without a PASS with opportunities: $bad"
njudged=$(jq '.judged | length' "$r")
[ "$njudged" -ge 10 ] || fail "only $njudged judged checkers (the scenario judges 10)"
head -n1 "$out/ledger.jsonl" | jq -e '.pooler == "pgbouncer" and .pool_size == 8' >/dev/null ||
  fail "the ledger header does not say pooler pgbouncer, pool_size 8"
claimers=$(jq -r 'select(.type == "invoke" and .op == "claim") | .worker' "$out/ledger.jsonl" |
  sort -u | wc -l)
[ "$claimers" -eq "$workers" ] || fail "$claimers workers sent a claim, expected $workers"
grep -q "transaction pooling on 127.0.0.1:[0-9]* -> .* ($((workers + 64)) clients, 8 server connections" \
  "$work/run.log" || fail "PgBouncer was not started for $((workers + 64)) clients over 8 server connections"
jq -e '.metrics.harness | (.cpu_s > 0) and (.peak_rss_mb > 0) and (.cpu_ms_per_1000_jobs > 0)' \
  "$r" >/dev/null || fail "results.json has no metrics.harness with numbers"
echo "ok: $workers workers through PgBouncer (8 server connections): PASS, $njudged judged" \
  "checkers with opportunities, $claimers workers claimed; harness" \
  "$(jq -r '.metrics.harness | "\(.cpu_s) s CPU, \(.cores) cores, \(.peak_rss_mb) MB peak RSS"' "$r")"

# a hard limit below the need: refused before anything starts
(
  ulimit -n 200 || exit 99
  run_q run scenarios/pgbouncer_1000.ini --workers "$workers" --jobs 3000 --seed 7 \
    --out "$work/fd" --no-progress
) >"$work/fd.log" 2>&1
rc=$?
[ $rc -eq 2 ] || { cat "$work/fd.log" >&2; fail "a hard limit of 200 open files exited $rc, expected 2"; }
grep -q "qchaos: 314 open files needed (a connection per worker and more), the hard limit is 200" \
  "$work/fd.log" || { cat "$work/fd.log" >&2; fail "the refusal does not name 314 and 200"; }
[ ! -e "$work/fd/ledger.jsonl" ] || fail "a ledger was written although the run was refused"
! grep -q 'starting an ephemeral' "$work/fd.log" || fail "a server was started before the refusal"
echo "ok: a hard open-files limit below the need refused with exit 2 before anything started"

# the nemesis' session kills behind a pooler
sed -n '/^\[checks\]/q;p' scenarios/pgbouncer_1000.ini |
  sed "s#^protocol = \.\./#protocol = $PWD/#" >"$work/term.ini"
printf '[nemesis]\nterminate_every_ms = 500\n' >>"$work/term.ini"
run_q run "$work/term.ini" --out "$work/term" --no-progress >"$work/term.log" 2>&1
rc=$?
[ $rc -eq 2 ] || { cat "$work/term.log" >&2; fail "terminate_every_ms behind a pooler exited $rc, expected 2"; }
grep -q "terminate_every_ms cannot run behind \[topology\] pooler" "$work/term.log" ||
  { cat "$work/term.log" >&2; fail "the refusal does not say why"; }
echo "ok: [nemesis] terminate_every_ms behind a pooler refused with exit 2"
