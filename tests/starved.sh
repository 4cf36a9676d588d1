#!/usr/bin/env bash
# The starved-client run (issue 11): the correct protocols over the fault
# scenarios while one busy loop per core competes with the harness for the
# CPU, so that answers, sleeps and the reaper's passes run late, as on a
# loaded CI runner.  A correct protocol must raise no violation: exit 1 of
# any run fails this script.  Exit 4 (a judged checker without an
# opportunity) is reported but allowed: starvation may take opportunities
# away, never add violations.
#
#   tests/starved.sh DSN OUTDIR [SCENARIO...]
#
# QC_QCHAOS_BIN picks the binary (default ./qchaos-asan, the ASan+UBSan
# build, which is slower still); QC_STARVE_HOGS the number of busy loops
# (default: the number of online CPUs).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

dsn=${1:?usage: tests/starved.sh DSN OUTDIR [SCENARIO...]}
out=${2:?usage: tests/starved.sh DSN OUTDIR [SCENARIO...]}
shift 2
bin=${QC_QCHAOS_BIN:-./qchaos-asan}
hogs_n=${QC_STARVE_HOGS:-$(nproc)}
scenarios=("$@")
if ((${#scenarios[@]} == 0)); then
    scenarios=(kill_after_claim kill_after_effect stall_beyond_lease stall_then_fail lost_ack
               lost_request poison slow_work idle chaos cases/c06_lost_ack_fail
               cases/c12_poison_crash)
fi
mkdir -p "$out"

hogs=()
stop_hogs() { ((${#hogs[@]})) && kill "${hogs[@]}" 2>/dev/null; wait 2>/dev/null; }
trap stop_hogs EXIT
for ((i = 0; i < hogs_n; i++)); do
    (while :; do :; done) &
    hogs+=($!)
done

export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=0:exitcode=66}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:exitcode=66}
false_alarms=0
failed=0
start=$(date +%s)
seed=${QC_STARVE_SEED:-31}
for s in "${scenarios[@]}"; do
    name=${s//\//_}
    t0=$(date +%s)
    "$bin" run "scenarios/$s.ini" --dsn "$dsn" --seed "$seed" --out "$out/$name" --no-progress \
        >"$out/$name.log" 2>&1
    rc=$?
    verdicts=$(grep -E ' (FAIL|INCONCLUSIVE) ' "$out/$name.log" | grep -v '(info)' |
               awk '{print $1 ":" $2}' | tr '\n' ' ')
    printf '   %-28s exit %d  %3ds  %s\n' "$s" "$rc" $(($(date +%s) - t0)) "$verdicts"
    case $rc in
    0 | 4) ;;
    1) false_alarms=$((false_alarms + 1))
       grep -E ' FAIL ' "$out/$name.log" | head -5 | sed 's/^/      /' ;;
    66) failed=$((failed + 1))
        grep -m1 -E 'runtime error|ERROR: AddressSanitizer' "$out/$name.log" | sed 's/^/      sanitizer: /' ;;
    *) failed=$((failed + 1)); tail -5 "$out/$name.log" | sed 's/^/      /' ;;
    esac
    seed=$((seed + 1))
done
echo "starved run: ${#scenarios[@]} scenarios, $hogs_n busy loops, $(($(date +%s) - start)) s;" \
     "$false_alarms false alarms, $failed runs that failed otherwise (sanitizer, error)"
[ "$false_alarms" -eq 0 ] && [ "$failed" -eq 0 ]
