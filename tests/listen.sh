#!/usr/bin/env bash
# LISTEN/NOTIFY wake-ups (issue 17, shared/cases.md C28) end to end, on the
# PostgreSQL of QC_TEST_DSN (needs ./qchaos, or QC_QCHAOS_BIN): the correct
# LISTEN protocol passes scenarios/listen.ini while listen sessions are
# terminated and dropped every few hundred ms (and the ledger shows the
# kills, the re-LISTENs and wake-ups by notification); the hot-loop policy
# mutant (on_listen_lost = ignore) and the wrong-channel protocol mutant
# fail bounded_idle_polling; a MariaDB protocol with a listen step is
# refused at load (exit 2, file:line).  One line per check; exit 0 when all
# pass.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
: "${QC_TEST_DSN:?tests/listen.sh needs QC_TEST_DSN (a libpq conninfo)}"
dsn=$QC_TEST_DSN
bin=${QC_QCHAOS_BIN:-./qchaos}
tmp=$(mktemp -d /tmp/qchaos-listen.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failed=0
ok() { echo "   ok: $*"; }
bad() { echo "   FAILED: $*"; failed=1; }
verdict() { # run-folder checker -> its verdict in results.json
  jq -r --arg c "$2" '.checkers[] | select(.name == $c) | .verdict' "$1/results.json" 2>/dev/null
}
count() { # run-folder grep-pattern -> matching ledger lines
  grep -c -- "$2" "$1/ledger.jsonl" 2>/dev/null || echo 0
}

# --- the correct protocol under listen kills ------------------------------
"$bin" run scenarios/listen.ini --dsn "$dsn" --seed 3 --out "$tmp/ok" --no-progress \
  >"$tmp/ok.log" 2>&1
rc=$?
if [ $rc -eq 0 ]; then ok "skip_locked_listen passes listen.ini (exit 0)"; else
  bad "skip_locked_listen on listen.ini: exit $rc, want 0"
  tail -n 8 "$tmp/ok.log" | sed 's/^/      /'
fi
[ "$(verdict "$tmp/ok" bounded_idle_polling)" = PASS ] && ok "bounded_idle_polling PASS" ||
  bad "bounded_idle_polling is $(verdict "$tmp/ok" bounded_idle_polling), want PASS"
kills=$(count "$tmp/ok" '"fault":"listen_terminate"')
drops=$(count "$tmp/ok" '"fault":"listen_close"')
reopen=$(count "$tmp/ok" '"reopen":true')
notified=$(count "$tmp/ok" '"wake":"notify"')
early=$(count "$tmp/ok" '"fault":"notify_early"')
echo "   listen.ini: $kills listen sessions terminated, $drops dropped by qchaos, $reopen re-LISTENs, $notified claims woken by a notification, $early early notifications"
[ "$kills" -ge 3 ] && [ "$drops" -ge 2 ] && ok "listen connections were killed and dropped" ||
  bad "too few listen faults ($kills terminated, $drops dropped)"
[ "$reopen" -ge $((kills + drops - 2)) ] && ok "workers LISTENed again after losing it" ||
  bad "$reopen re-LISTENs after $kills + $drops lost listen connections"
[ "$notified" -ge 10 ] && ok "workers were woken by notifications" ||
  bad "only $notified claims woken by a notification"

# --- the hot loop on a dead listen connection (policy mutant) -------------
"$bin" run scenarios/mutants/listen_hot_loop.ini --dsn "$dsn" --seed 3 --out "$tmp/hot" \
  --no-progress >"$tmp/hot.log" 2>&1
rc=$?
v=$(verdict "$tmp/hot" bounded_idle_polling)
if [ $rc -eq 1 ] && [ "$v" = FAIL ] && grep -q 'empty claims in' "$tmp/hot/results.json"; then
  ok "on_listen_lost = ignore fails bounded_idle_polling on the rate (exit 1)"
else
  bad "listen_hot_loop: exit $rc, bounded_idle_polling $v (want 1, FAIL on the rate)"
fi

# --- notifications that never reach the listeners (protocol mutant) -------
"$bin" run scenarios/listen_slow_poll.ini \
  --protocol backends/postgres/mutants/notify_wrong_channel.sql --dsn "$dsn" --seed 3 \
  --out "$tmp/wrong" --no-progress >"$tmp/wrong.log" 2>&1
rc=$?
v=$(verdict "$tmp/wrong" bounded_idle_polling)
if [ $rc -eq 1 ] && [ "$v" = FAIL ] && grep -q 'with no notification' "$tmp/wrong/results.json"; then
  ok "notify_wrong_channel fails bounded_idle_polling's wake-up rule (exit 1)"
else
  bad "notify_wrong_channel: exit $rc, bounded_idle_polling $v (want 1, FAIL: no notification)"
fi

# --- engines without LISTEN -------------------------------------------------
mkdir -p "$tmp/maria"
printf -- '-- engine: mariadb\n-- base: %s/backends/mariadb/skip_locked.sql\n\n-- name: listen\nLISTEN qchaos_jobs;\n' \
  "$PWD" >"$tmp/maria/listen.sql"
"$bin" run scenarios/listen.ini --protocol "$tmp/maria/listen.sql" --dsn "$dsn" \
  --out "$tmp/maria/run" --no-progress >"$tmp/maria.log" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "listen.sql:4: step 'listen' needs LISTEN/NOTIFY, which engine mariadb" \
  "$tmp/maria.log"; then
  ok "a MariaDB protocol with a listen step is refused at load (exit 2, file:line)"
else
  bad "MariaDB listen step: exit $rc, want 2 with file:line: $(head -c 300 "$tmp/maria.log")"
fi
exit $failed
