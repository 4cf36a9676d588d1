/*
 * check_scenario.c - scenario file loading: defaults, overrides, and every
 * error naming file:line and what was expected.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../harness/lint.h"
#include "../harness/scenario.h"
#include "../backends/driver.h"

static char path[256];

static void write_file(const char *text)
{
    snprintf(path, sizeof path, "/tmp/qc_scenario_%d.ini", (int)getpid());
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static int load(const char *text, qc_scenario *s, qc_err *err)
{
    write_file(text);
    qc_scenario_defaults(s);
    int rc = qc_scenario_load(s, path, err);
    unlink(path);
    return rc;
}

START_TEST(test_scenario_defaults_are_the_main_job)
{
    qc_scenario s;
    qc_scenario_defaults(&s);
    ck_assert_int_eq(s.workers, 16);
    ck_assert_int_eq(s.jobs, 20000);
    ck_assert_str_eq(s.protocol, "backends/postgres/skip_locked.sql");
}
END_TEST

START_TEST(test_scenario_valid_file_overrides_keys)
{
    qc_scenario s;
    qc_err err = {0};
    ck_assert_int_eq(load("[scenario]\nname = x\n[workload]\nworkers = 3\njobs = 7\nwork_ms = 2-9\n"
                          "[lease]\nlease_ms = 900\n[idle]\njitter = 0.5\n[run]\nseed = 77\n",
                          &s, &err),
                     0);
    ck_assert_str_eq(s.name, "x");
    ck_assert_int_eq(s.workers, 3);
    ck_assert_int_eq(s.jobs, 7);
    ck_assert_int_eq(s.work_ms_min, 2);
    ck_assert_int_eq(s.work_ms_max, 9);
    ck_assert_int_eq(s.lease_ms, 900);
    ck_assert(s.idle_jitter == 0.5);
    ck_assert(s.seed == 77 && s.seed_set);
    ck_assert_int_eq(s.batch, 1); /* untouched default */
}
END_TEST

START_TEST(test_scenario_unknown_key_error_names_line)
{
    qc_scenario s;
    qc_err err = {0};
    ck_assert_int_eq(load("[workload]\nworkers = 2\nwrokers = 3\n", &s, &err), QC_EINVAL);
    char want[300];
    snprintf(want, sizeof want, "%s:3: unknown key 'wrokers' in [workload]", path);
    ck_assert_msg(strstr(err.msg, want) == err.msg, "got '%s'", err.msg);
    ck_assert_ptr_nonnull(strstr(err.msg, "expected workers"));
}
END_TEST

START_TEST(test_scenario_bad_value_error_names_line_and_expectation)
{
    qc_scenario s;
    qc_err err = {0};
    ck_assert_int_eq(load("[workload]\n\njobs = many\n", &s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":3: jobs must be an integer >= 0, got 'many'"), "got '%s'",
                  err.msg);
    ck_assert_int_eq(load("[workload]\nworkers = 0\n", &s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":2: workers must be an integer >= 1"), "got '%s'", err.msg);
    ck_assert_int_eq(load("[idle]\njitter = 2\n", &s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":2: jitter must be a number from 0 to 1"), "got '%s'", err.msg);
    ck_assert_int_eq(load("[workload]\nwork_ms = 9-2\n", &s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":2: work_ms must be N or MIN-MAX"), "got '%s'", err.msg);
    /* decision 1129: a fault count or rate is digits, nothing strtod or
     * strtol would also take (nan, inf, a sign, hex, out of range; the INI
     * reader strips blanks) */
    const char *bad[] = {"nan%", "inf%", "-nan%", "+3", "99999999999999999999",
                         "1000000001", "0x10", "-0", "101%", "3 jobs"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[96];
        snprintf(text, sizeof text, "[faults]\nlost_ack_on_fail = %s\n", bad[i]);
        ck_assert_msg(load(text, &s, &err) == QC_EINVAL, "accepted '%s'", bad[i]);
        ck_assert_msg(strstr(err.msg, ":2: lost_ack_on_fail must be a count of jobs"),
                      "'%s': got '%s'", bad[i], err.msg);
    }
    const char *good[] = {"0", "3", "100%", "1.5%", "0%", ".5%", "1000000000"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char text[96];
        snprintf(text, sizeof text, "[faults]\nkill_after_claim = %s\n", good[i]);
        ck_assert_msg(load(text, &s, &err) == 0, "refused '%s': %s", good[i], err.msg);
    }
}
END_TEST

/* decision 1115: [policy] worker_name takes per_incarnation, kept or host
 * (threads share their host's name, hosts of them); anything else is an
 * error naming the line and the three choices. */
START_TEST(test_scenario_worker_name_host)
{
    qc_scenario s;
    qc_err err = {0};
    ck_assert_int_eq(load("[policy]\nworker_name = host\nhosts = 3\n", &s, &err), 0);
    ck_assert_int_eq(s.worker_name_kept, QC_WORKER_NAME_HOST);
    ck_assert_int_eq(s.hosts, 3);
    ck_assert_int_eq(load("[policy]\nworker_name = kept\n", &s, &err), 0);
    ck_assert_int_eq(s.worker_name_kept, QC_WORKER_NAME_KEPT);
    ck_assert_int_eq(s.hosts, 1);
    ck_assert_int_eq(load("[policy]\nworker_name = per_incarnation\n", &s, &err), 0);
    ck_assert_int_eq(s.worker_name_kept, QC_WORKER_NAME_INCARNATION);
    ck_assert_int_eq(load("[policy]\n\nworker_name = pod\n", &s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":3: worker_name must be per_incarnation, kept or host, got 'pod'"),
                  "got '%s'", err.msg);
    ck_assert_int_eq(load("[policy]\nhosts = 0\n", &s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":2: hosts must be an integer >= 1"), "got '%s'", err.msg);
}
END_TEST

/* decision 1120: [faults] session_time_zone takes an ISO 8601 offset only
 * (a name like Europe/Berlin needs MariaDB's time zone tables; PostgreSQL
 * reads '+05:30' as POSIX, west): the driver setting follows it. */
START_TEST(test_scenario_session_time_zone)
{
    qc_scenario s;
    qc_err err = {0};
    ck_assert_int_eq(load("[faults]\nsession_time_zone = +05:30\n", &s, &err), 0);
    ck_assert_str_eq(s.session_time_zone, "+05:30");
    ck_assert_int_eq(load("[faults]\nsession_time_zone = -07:00\n", &s, &err), 0);
    ck_assert_str_eq(s.session_time_zone, "-07:00");
    ck_assert_int_eq(load("[workload]\njobs = 1\n", &s, &err), 0);
    ck_assert_str_eq(s.session_time_zone, "");
    ck_assert_int_eq(load("[faults]\n\nsession_time_zone = Europe/Berlin\n", &s, &err),
                     QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":3: session_time_zone must be a UTC offset +HH:MM or -HH:MM"),
                  "got '%s'", err.msg);
    ck_assert_int_eq(load("[faults]\nsession_time_zone = +15:00\n", &s, &err), QC_EINVAL);
    ck_assert_int_eq(load("[faults]\nsession_time_zone = +5:30\n", &s, &err), QC_EINVAL);
    ck_assert_int_eq(qc_driver_set_session_time_zone("+05:30", &err), 0);
    ck_assert_str_eq(qc_driver_session_time_zone(), "+05:30");
    ck_assert_int_eq(qc_driver_set_session_time_zone("05:30", &err), QC_EINVAL);
    ck_assert_str_eq(qc_driver_session_time_zone(), "+05:30");
    ck_assert_int_eq(qc_driver_set_session_time_zone(NULL, &err), 0);
    ck_assert_str_eq(qc_driver_session_time_zone(), "");
}
END_TEST

/* issue 17: the LISTEN keys parse; the listen faults are the nemesis',
 * not per-job counts; the notify faults are decided per enqueued job
 * (never in the per-claim plan), deterministically from the seed. */
START_TEST(test_scenario_listen_keys_and_notify_faults)
{
    qc_scenario s;
    qc_err err = {0};
    ck_assert_int_eq(load("[idle]\nlisten_poll_ms = 0\n[policy]\non_listen_lost = ignore\n"
                          "[nemesis]\nlisten_terminate_every_ms = 700\nlisten_close_every_ms = "
                          "1100\n[faults]\nnotify_lost = 10%\nnotify_early = 4\n",
                          &s, &err),
                     0);
    ck_assert_int_eq(s.listen_poll_ms, 0);
    ck_assert_int_eq(s.listen_lost_ignore, 1);
    ck_assert_int_eq(s.listen_terminate_every_ms, 700);
    ck_assert_int_eq(s.listen_close_every_ms, 1100);
    ck_assert_int_eq(s.faults[QC_FAULT_NOTIFY_EARLY].count, 4);
    ck_assert_int_eq(load("[faults]\n\nlisten_close = 3\n", &s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":3: listen_close is timed, not planned per job: use [nemesis] "
                                  "listen_close_every_ms"),
                  "got '%s'", err.msg);
    ck_assert_int_eq(load("[policy]\non_listen_lost = spin\n", &s, &err), QC_EINVAL);

    qc_fault_spec spec[QC_FAULT_COUNT] = {{0, 0}};
    spec[QC_FAULT_NOTIFY_LOST] = (qc_fault_spec){-1, 0.25};
    spec[QC_FAULT_NOTIFY_EARLY] = (qc_fault_spec){100, 0};
    int64_t jobs[1000];
    for (int i = 0; i < 1000; i++)
        jobs[i] = i + 1;
    qc_fault_plan *plan = qc_fault_plan_create(5, spec, jobs, 1000);
    ck_assert_ptr_nonnull(plan);
    ck_assert_int_eq(qc_fault_plan_count(plan, QC_FAULT_NOTIFY_LOST), 0);
    ck_assert_int_eq(qc_fault_plan_count(plan, QC_FAULT_NOTIFY_EARLY), 0);
    qc_fault_plan_destroy(plan);
    long lost = 0, early = 0;
    for (long i = 0; i < 1000; i++) {
        qc_fault_kind k = qc_fault_notify_pick(5, spec, i, 1000);
        ck_assert(k == qc_fault_notify_pick(5, spec, i, 1000)); /* same seed, same choice */
        lost += k == QC_FAULT_NOTIFY_LOST;
        early += k == QC_FAULT_NOTIFY_EARLY;
    }
    /* 25% of 1000, then 100 / 1000 of the rest: wide margins, not exact */
    ck_assert_msg(lost > 180 && lost < 320, "lost %ld", lost);
    ck_assert_msg(early > 40 && early < 130, "early %ld", early);
    spec[QC_FAULT_NOTIFY_LOST] = (qc_fault_spec){0, 0};
    spec[QC_FAULT_NOTIFY_EARLY] = (qc_fault_spec){0, 0};
    for (long i = 0; i < 100; i++)
        ck_assert(qc_fault_notify_pick(5, spec, i, 100) == QC_FAULT_NONE);
    ck_assert_int_eq(qc_fault_is_per_claim(QC_FAULT_KILL_AFTER_CLAIM), 1);
    ck_assert_int_eq(qc_fault_is_per_claim(QC_FAULT_LISTEN_CLOSE), 0);
    ck_assert_str_eq(qc_fault_name(QC_FAULT_LISTEN_TERMINATE), "listen_terminate");
}
END_TEST

/* shared/cases.md C07: [faults] graceful_stop is a per-claim fault (a
 * count or a rate), [policy] stop_heartbeat_first a yes/no (default no);
 * bad values are refused with their line and what was expected. */
START_TEST(test_scenario_graceful_stop_keys)
{
    qc_scenario s;
    qc_err err = {0};
    qc_scenario_defaults(&s);
    ck_assert_int_eq(s.stop_heartbeat_first, 0);
    ck_assert_int_eq(s.faults[QC_FAULT_GRACEFUL_STOP].count, 0);
    ck_assert_int_eq(
        load("[faults]\ngraceful_stop = 2\n[policy]\nstop_heartbeat_first = yes\n", &s, &err), 0);
    ck_assert_int_eq(s.faults[QC_FAULT_GRACEFUL_STOP].count, 2);
    ck_assert_int_eq(s.stop_heartbeat_first, 1);
    ck_assert_int_eq(
        load("[faults]\ngraceful_stop = 12.5%\n[policy]\nstop_heartbeat_first = no\n", &s, &err),
        0);
    ck_assert_int_eq(s.faults[QC_FAULT_GRACEFUL_STOP].count, -1);
    ck_assert(s.faults[QC_FAULT_GRACEFUL_STOP].rate > 0.124 &&
              s.faults[QC_FAULT_GRACEFUL_STOP].rate < 0.126);
    ck_assert_int_eq(s.stop_heartbeat_first, 0);
    ck_assert_int_eq(load("[workload]\njobs = 4\n[faults]\ngraceful_stop = some\n", &s, &err),
                     QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":4: graceful_stop must be a count of jobs (e.g. 20) or a rate "
                                  "(e.g. 1.5%), got 'some'"),
                  "got '%s'", err.msg);
    ck_assert_int_eq(load("[policy]\nheartbeat = yes\nstop_heartbeat_first = later\n", &s, &err),
                     QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":3: stop_heartbeat_first must be yes or no, got 'later'"),
                  "got '%s'", err.msg);
    ck_assert_int_eq(load("[policy]\nstop_heartbeat_last = yes\n", &s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":2: unknown key 'stop_heartbeat_last' in [policy]") &&
                      strstr(err.msg, "stop_heartbeat_first"),
                  "got '%s'", err.msg);
    ck_assert_int_eq(load("[faults]\ngracefull_stop = 1\n", &s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":2: unknown key 'gracefull_stop' in [faults]") &&
                      strstr(err.msg, "graceful_stop"),
                  "got '%s'", err.msg);

    /* a planned, per-claim kind, by name both ways */
    ck_assert_int_eq(qc_fault_is_per_claim(QC_FAULT_GRACEFUL_STOP), 1);
    ck_assert_str_eq(qc_fault_name(QC_FAULT_GRACEFUL_STOP), "graceful_stop");
    ck_assert_int_eq(qc_fault_from_name("graceful_stop"), QC_FAULT_GRACEFUL_STOP);
    qc_fault_spec spec[QC_FAULT_COUNT] = {{0, 0}};
    spec[QC_FAULT_GRACEFUL_STOP] = (qc_fault_spec){2, 0};
    int64_t jobs[4] = {1, 2, 3, 4};
    qc_fault_plan *plan = qc_fault_plan_create(7, spec, jobs, 4);
    ck_assert_ptr_nonnull(plan);
    ck_assert_int_eq(qc_fault_plan_count(plan, QC_FAULT_GRACEFUL_STOP), 2);
    int planned = 0;
    for (int i = 0; i < 4; i++)
        planned += qc_fault_plan_get(plan, jobs[i]) == QC_FAULT_GRACEFUL_STOP;
    ck_assert_int_eq(planned, 2);
    qc_fault_plan_destroy(plan);
}
END_TEST

/* [nemesis] pause: defaults off (3000 ms when on), the keys parse, a zero
 * or negative duration is refused with its line. */
START_TEST(test_scenario_nemesis_pause_keys)
{
    qc_scenario s;
    qc_err err = {0};
    qc_scenario_defaults(&s);
    ck_assert(s.pause_at_s == 0);
    ck_assert_int_eq(s.pause_ms, 3000);
    ck_assert_str_eq(s.pause_command, "");
    ck_assert_str_eq(s.restart_command, "");
    ck_assert_int_eq(qc_scenario_own_server(&s), 0);
    ck_assert_int_eq(load("[nemesis]\npause_at_s = 1.5\npause_ms = 2500\n"
                          "pause_command = my-freeze {dir} {ms}\n",
                          &s, &err),
                     0);
    ck_assert(s.pause_at_s == 1.5);
    ck_assert_int_eq(s.pause_ms, 2500);
    ck_assert_str_eq(s.pause_command, "my-freeze {dir} {ms}");
    ck_assert_int_eq(qc_scenario_own_server(&s), 1); /* it pauses the server */
    ck_assert_int_eq(load("[nemesis]\npause_at_s = 1\npause_ms = 0\n", &s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":3: pause_ms must be an integer >= 1, got '0'"), "got '%s'",
                  err.msg);
    ck_assert_int_eq(load("[nemesis]\npause_at_s = soon\n", &s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":2: pause_at_s must be a number of seconds >= 0"), "got '%s'",
                  err.msg);
}
END_TEST

/* [topology] kind = replicated and the switch faults (README "Failover"):
 * defaults, the keys parse, and a switch without a replicated topology,
 * two switches, or a replicated topology with a pooler are refused. */
START_TEST(test_scenario_replicated_topology_keys)
{
    qc_scenario s;
    qc_err err = {0};
    qc_scenario_defaults(&s);
    ck_assert_int_eq(s.replicated, 0);
    ck_assert_int_eq(s.unfenced_ms, 2000);
    ck_assert_int_eq(qc_scenario_switches_primary(&s), 0);
    ck_assert_int_eq(load("[topology]\nkind = replicated\nreplication = sync\n"
                          "[nemesis]\nfailover_at_s = 1.5\nreplica_lag_ms = 300\n",
                          &s, &err),
                     0);
    ck_assert_int_eq(s.replicated, 1);
    ck_assert_int_eq(s.replication_sync, 1);
    ck_assert(s.failover_at_s == 1.5);
    ck_assert_int_eq(s.replica_lag_ms, 300);
    ck_assert_int_eq(qc_scenario_switches_primary(&s), 1);
    ck_assert_int_eq(qc_scenario_own_server(&s), 1); /* no dir: qchaos starts one */
    ck_assert_int_eq(load("[topology]\nkind = replicated\ndir = /tmp/topo\n", &s, &err), 0);
    ck_assert_str_eq(s.topology_dir, "/tmp/topo");
    ck_assert_int_eq(qc_scenario_own_server(&s), 0);
    ck_assert_int_eq(load("[topology]\nkind = cluster\n", &s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":2: kind must be single or replicated"), "got '%s'", err.msg);

    ck_assert_int_eq(load("[nemesis]\nswitchover_at_s = 1\n", &s, &err), 0);
    ck_assert_int_eq(qc_scenario_validate(&s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "set [topology] kind = replicated"), "got '%s'", err.msg);
    qc_scenario_defaults(&s);
    s.replicated = 1;
    s.failover_at_s = 1;
    s.unfenced_primary_at_s = 2;
    ck_assert_int_eq(qc_scenario_validate(&s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "a run switches the primary once"), "got '%s'", err.msg);
    qc_scenario_defaults(&s);
    s.replicated = 1;
    snprintf(s.pooler, sizeof s.pooler, "pgbouncer");
    ck_assert_int_eq(qc_scenario_validate(&s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "goes without a pooler"), "got '%s'", err.msg);
}
END_TEST

/* [topology] pool_size (issue 16): default 4, parsed, at least 1; the
 * nemesis' session kills are refused behind a pooler (a worker's server
 * session is not its own there), allowed without one. */
START_TEST(test_scenario_pooler_pool_size_and_terminate_refused)
{
    qc_scenario s;
    qc_err err = {0};
    qc_scenario_defaults(&s);
    ck_assert_int_eq(s.pool_size, 4);
    ck_assert_int_eq(load("[topology]\npooler = pgbouncer\npool_size = 8\n", &s, &err), 0);
    ck_assert_str_eq(s.pooler, "pgbouncer");
    ck_assert_int_eq(s.pool_size, 8);
    ck_assert_int_eq(qc_scenario_validate(&s, &err), 0);
    ck_assert_int_eq(load("[topology]\npool_size = 0\n", &s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":2: pool_size must be an integer >= 1, got '0'"), "got '%s'",
                  err.msg);
    ck_assert_int_eq(load("[topology]\npooler = pgbouncer\n[nemesis]\nterminate_every_ms = 500\n",
                          &s, &err),
                     0);
    ck_assert_int_eq(qc_scenario_validate(&s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "terminate_every_ms cannot run behind [topology] pooler"),
                  "got '%s'", err.msg);
    ck_assert_int_eq(load("[nemesis]\nterminate_every_ms = 500\n", &s, &err), 0);
    ck_assert_int_eq(qc_scenario_validate(&s, &err), 0);
}
END_TEST

/* Two-word and yes/no keys set their field both ways. */
START_TEST(test_scenario_choice_and_bool_keys)
{
    qc_scenario s;
    qc_err err = {0};
    ck_assert_int_eq(load("[faults]\npoison_mode = crash\n[policy]\non_lost_ack = fail\n"
                          "after_stall = fail\nheartbeat = no\n[sink]\nidempotent = no\n",
                          &s, &err),
                     0);
    ck_assert_int_eq(s.poison_crash, 1);
    ck_assert_int_eq(s.lost_ack_fail, 1);
    ck_assert_int_eq(s.stall_then_fail, 1);
    ck_assert_int_eq(s.heartbeat, 0);
    ck_assert_int_eq(s.sink_idempotent, 0);
    ck_assert_int_eq(load("[faults]\npoison_mode = fail\n[policy]\non_lost_ack = retry\n"
                          "after_stall = complete\nheartbeat = yes\n[sink]\nidempotent = yes\n",
                          &s, &err),
                     0);
    ck_assert_int_eq(s.poison_crash, 0);
    ck_assert_int_eq(s.lost_ack_fail, 0);
    ck_assert_int_eq(s.stall_then_fail, 0);
    ck_assert_int_eq(s.heartbeat, 1);
    ck_assert_int_eq(s.sink_idempotent, 1);
}
END_TEST

START_TEST(test_scenario_unknown_section_and_syntax_error_rejected)
{
    qc_scenario s;
    qc_err err = {0};
    ck_assert_int_eq(load("[workload]\nworkers = 2\n[faultz]\nx = 1\n", &s, &err), QC_EINVAL);
    /* the section's own line, not its first key's */
    ck_assert_msg(strstr(err.msg, ":3: unknown section [faultz]"), "got '%s'", err.msg);
    /* a section without keys is refused too (inih calls no handler for it) */
    ck_assert_int_eq(load("[scenario]\nname = x\n[workloda]\n", &s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":3: unknown section [workloda]"), "got '%s'", err.msg);
    ck_assert_int_eq(load("[scenario]\nname = x\n[checks]\n; the checkers\njudge = exclusive_claim, nope\n", &s, &err), 0);
    ck_assert_int_eq(qc_scenario_validate(&s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":5: [checks] judge names unknown checker 'nope'") &&
                      strstr(err.msg, "own_lease"),
                  "got '%s'", err.msg);
    ck_assert_int_eq(load("[workload]\nthis line has no equals sign\n", &s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":2: syntax error"), "got '%s'", err.msg);
}
END_TEST

/* A scenario that is a FIFO or a device is refused at once (exit 2), not
 * read for ever. */
START_TEST(test_scenario_fifo_and_device_refused_without_blocking)
{
    qc_scenario s;
    qc_err err = {0};
    char dir[] = "/tmp/qc_scenario_fifo.XXXXXX", fifo[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/s.ini", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    qc_scenario_defaults(&s);
    ck_assert_int_eq(qc_scenario_load(&s, fifo, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "is not a regular file (a FIFO)") != NULL, "%s", err.msg);
    ck_assert_int_eq(qc_scenario_load(&s, "/dev/zero", &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "a device") != NULL, "%s", err.msg);
    unlink(fifo);
    rmdir(dir);
}
END_TEST

START_TEST(test_scenario_missing_file_is_input_error)
{
    qc_scenario s;
    qc_err err = {0};
    qc_scenario_defaults(&s);
    ck_assert_int_eq(qc_scenario_load(&s, "/nonexistent/x.ini", &err), QC_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/x.ini"));
}
END_TEST

START_TEST(test_scenario_validate_cap_below_base_rejected)
{
    qc_scenario s;
    qc_err err = {0};
    qc_scenario_defaults(&s);
    s.idle_base_ms = 100;
    s.idle_cap_ms = 10;
    ck_assert_int_eq(qc_scenario_validate(&s, &err), QC_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "cap_ms"));
}
END_TEST

START_TEST(test_scenario_resolve_missing_protocol_rejected)
{
    char out[1024];
    qc_err err = {0};
    ck_assert_int_eq(qc_scenario_resolve("no/such/protocol.sql", "/tmp", out, sizeof out, &err),
                     QC_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "no/such/protocol.sql"));
}
END_TEST

/* A copy of a bundled scenario elsewhere names its protocol as the bundled
 * one does, from the data folder's scenarios/ ("../backends/..."). */
START_TEST(test_scenario_resolve_copied_bundled_path)
{
    char out[4096], want[4096], cwd[2048];
    qc_err err = {0};
    /* the tests run from the checkout's root: it is the data folder */
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    setenv("QCHAOS_HOME", cwd, 1);
    ck_assert_int_eq(qc_scenario_resolve("../backends/postgres/skip_locked.sql", "/tmp", out,
                                         sizeof out, &err),
                     0);
    snprintf(want, sizeof want, "%s/backends/postgres/skip_locked.sql", qc_datadir());
    ck_assert_str_eq(out, want);
    ck_assert_int_eq(qc_scenario_resolve("../backends/postgres/no_such.sql", "/tmp", out,
                                         sizeof out, &err),
                     QC_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "looked in /tmp, . and"));
    unsetenv("QCHAOS_HOME");
}
END_TEST

/* ---- lint: unused scenario values, missing columns (issue 18) --------- */

/* A protocol whose enqueue ignores :max_attempts and whose reap returns no
 * now_ms; fail reads :delay_ms, claim :batch and :lease_ms. */
#define LINT_PROTO                                                                                \
    "-- name: setup\nCREATE TABLE t (id int);\n-- name: teardown\nDROP TABLE t;\n"                \
    "-- name: enqueue\nINSERT INTO t VALUES (1) RETURNING id AS job_id, :payload AS p;\n"        \
    "-- name: claim\nSELECT id AS job_id, 't' AS token, 0 AS lease_until_ms, 0 AS now_ms,\n"      \
    " 1 AS attempt, '' AS op_key, '' AS payload FROM t LIMIT :batch OFFSET :lease_ms;\n"          \
    "-- name: complete\nUPDATE t SET id = 0 WHERE id = :job_id;\n"                                \
    "-- name: fail\nUPDATE t SET id = :delay_ms WHERE id = :job_id;\n"                            \
    "-- name: reap\nUPDATE t SET id = 2 RETURNING id AS job_id, 't' AS token, 'ready' AS state;\n" \
    "-- name: snapshot\nSELECT id AS job_id, 'done' AS state, 1 AS attempt, '' AS token, '' AS "  \
    "error FROM t;\n"

static qc_protocol *lint_proto(const char *text)
{
    qc_protocol *p = NULL;
    qc_err err = {0};
    ck_assert_msg(qc_protocol_parse("backends/y.sql", text, QC_PARAM_DOLLAR, &p, &err) == 0,
                  "%s", err.msg);
    return p;
}

/* What qc_lint_print writes, in a malloc'd string. */
static char *lint_text(const qc_scenario *s, const qc_protocol *p, int *lines)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    *lines = qc_lint_print(f, s, p);
    fclose(f);
    return buf;
}

START_TEST(test_lint_unused_value_warned_with_file_line)
{
    qc_scenario s;
    qc_err err = {0};
    qc_unused u[8];
    int lines;
    qc_protocol *p = lint_proto(LINT_PROTO);

    ck_assert_int_eq(load("[scenario]\nname = x\n; a comment\n[workload]\nbatch = 4\n"
                          "[lease]\nlease_ms = 900\n\nmax_attempts = 10\nretry_delay_ms = 5\n",
                          &s, &err),
                     0);
    ck_assert_int_eq(qc_scenario_set_line(&s, "lease", "max_attempts"), 9);
    ck_assert_int_eq(qc_scenario_set_line(&s, "workload", "batch"), 5);
    ck_assert_int_eq(qc_scenario_set_line(&s, "workload", "jobs"), 0); /* a default */
    ck_assert_int_eq(qc_lint_unused(&s, p, u, 8), 1);
    ck_assert_str_eq(u[0].key, "max_attempts");
    ck_assert_str_eq(u[0].param, "max_attempts");
    ck_assert_str_eq(u[0].steps, "enqueue");
    ck_assert_int_eq(u[0].line, 9);
    ck_assert_int_eq(u[0].value, 10);
    char *text = lint_text(&s, p, &lines);
    char want[512];
    snprintf(want, sizeof want,
             "qchaos: warning: %s:9: max_attempts = 10 is set but backends/y.sql never reads "
             ":max_attempts (its enqueue ignores it)\n",
             path);
    ck_assert_msg(strncmp(text, want, strlen(want)) == 0, "got '%s'", text);
    free(text);
    qc_protocol_destroy(p);

    /* read in another step it is bound in (fail): not unused */
    p = lint_proto(LINT_PROTO "-- name: renew\nSELECT :max_attempts AS rows;\n");
    ck_assert_int_eq(qc_lint_unused(&s, p, u, 8), 0);
    qc_protocol_destroy(p);

    /* not set by the file: nothing to say, whatever the protocol reads */
    ck_assert_int_eq(load("[workload]\njobs = 5\n", &s, &err), 0);
    p = lint_proto(LINT_PROTO);
    ck_assert_int_eq(qc_lint_unused(&s, p, u, 8), 0);
    qc_protocol_destroy(p);
}
END_TEST

START_TEST(test_lint_every_mapped_key_and_transaction_model)
{
    qc_scenario s;
    qc_err err = {0};
    qc_unused u[8];
    /* reads nothing the scenario feeds; has renew, no fail */
    static const char bare[] =
        "-- name: setup\nCREATE TABLE t (id int);\n-- name: teardown\nDROP TABLE t;\n"
        "-- name: enqueue\nINSERT INTO t VALUES (1) RETURNING id AS job_id;\n"
        "-- name: claim\nSELECT id AS job_id, 't' AS token, 0 AS lease_until_ms, 0 AS now_ms,\n"
        " 1 AS attempt, '' AS op_key, '' AS payload FROM t;\n"
        "-- name: complete\nUPDATE t SET id = 0 WHERE id = :job_id;\n"
        "-- name: renew\nUPDATE t SET id = 0 WHERE id = :job_id;\n"
        "-- name: snapshot\nSELECT id AS job_id, 'done' AS state, 1 AS attempt, '' AS token "
        "FROM t;\n";
    qc_protocol *p = lint_proto(bare);

    ck_assert_int_eq(load("[workload]\nbatch = 2\ngroups = 3\npayload_bytes = 8\n"
                          "[lease]\nmax_attempts = 4\nlease_ms = 700\nretry_delay_ms = 9\n",
                          &s, &err),
                     0);
    ck_assert_int_eq(qc_lint_unused(&s, p, u, 8), 6);
    ck_assert_str_eq(u[0].key, "max_attempts");
    ck_assert_str_eq(u[1].key, "lease_ms");
    ck_assert_str_eq(u[1].steps, "claim and renew");
    ck_assert_str_eq(u[2].key, "retry_delay_ms");
    ck_assert_str_eq(u[2].param, "delay_ms");
    ck_assert_str_eq(u[3].key, "batch");
    ck_assert_str_eq(u[4].param, "group_key");
    ck_assert_str_eq(u[5].param, "payload");
    int lines;
    char *text = lint_text(&s, p, &lines);
    ck_assert_msg(strstr(text, "never reads :lease_ms (its claim and renew ignore it)") != NULL,
                  "%s", text);
    ck_assert_msg(strstr(text, "never reads :delay_ms (it has no fail step)") != NULL, "%s",
                  text);
    free(text);
    qc_protocol_destroy(p);

    /* transaction model: no lease, batch always 1 */
    char txn[2048];
    snprintf(txn, sizeof txn, "-- model: transaction\n%s", bare);
    p = lint_proto(txn);
    ck_assert_int_eq(qc_lint_unused(&s, p, u, 8), 4);
    ck_assert_str_eq(u[1].key, "retry_delay_ms");
    qc_protocol_destroy(p);

    /* groups = 0: no group key to store */
    ck_assert_int_eq(load("[workload]\ngroups = 0\n", &s, &err), 0);
    p = lint_proto(bare);
    ck_assert_int_eq(qc_lint_unused(&s, p, u, 8), 0);
    qc_protocol_destroy(p);
}
END_TEST

/* C23: [workload] copies and copies_rate parse with their bounds, the
 * copies are refused with an adapter (its library enqueues each job once),
 * and an enqueue that never stores :message_id is warned about. */
START_TEST(test_scenario_copies_keys_bounds_adapter_and_lint)
{
    qc_scenario s;
    qc_err err = {0};
    qc_unused u[8];

    qc_scenario_defaults(&s);
    ck_assert_int_eq(s.copies, 1);
    ck_assert(s.copies_rate == 0);
    ck_assert_int_eq(load("[workload]\njobs = 200\ncopies = 2\ncopies_rate = 0.25\n", &s, &err),
                     0);
    ck_assert_int_eq(s.copies, 2);
    ck_assert(s.copies_rate == 0.25);
    ck_assert_int_eq(qc_scenario_validate(&s, &err), 0);
    ck_assert_int_eq(load("[workload]\n\ncopies = 0\n", &s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":3: copies must be an integer >= 1, got '0'"), "got '%s'",
                  err.msg);
    ck_assert_int_eq(load("[workload]\ncopies = 17\n", &s, &err), 0);
    ck_assert_int_eq(qc_scenario_validate(&s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":2: [workload] copies must be <= 16, got 17"), "got '%s'",
                  err.msg);
    ck_assert_int_eq(load("[workload]\ncopies_rate = 1.5\n", &s, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":2: copies_rate must be a fraction 0..1 of the messages, got "
                                  "'1.5'"),
                  "got '%s'", err.msg);
    ck_assert_int_eq(load("[workload]\ncopies = 2\n[adapter]\ncommand = true\n", &s, &err), 0);
    ck_assert_int_eq(qc_scenario_validate(&s, &err), QC_EINVAL);
    char want[300];
    snprintf(want, sizeof want, "%s:2: [workload] copies with [adapter]", path);
    ck_assert_msg(strstr(err.msg, want) == err.msg, "got '%s'", err.msg);

    /* LINT_PROTO's enqueue stores no :message_id */
    qc_protocol *p = lint_proto(LINT_PROTO);
    ck_assert_int_eq(load("[workload]\ncopies = 2\n", &s, &err), 0);
    ck_assert_int_eq(qc_lint_unused(&s, p, u, 8), 1);
    ck_assert_str_eq(u[0].key, "copies");
    ck_assert_str_eq(u[0].param, "message_id");
    ck_assert_str_eq(u[0].steps, "enqueue");
    ck_assert_int_eq(u[0].line, 2);
    ck_assert_int_eq(u[0].value, 2);
    ck_assert_int_eq(load("[workload]\ncopies = 1\n", &s, &err), 0);
    ck_assert_int_eq(qc_lint_unused(&s, p, u, 8), 0); /* one copy: nothing to tell apart */
    qc_protocol_destroy(p);
    p = lint_proto("-- name: setup\nCREATE TABLE t (id int);\n-- name: teardown\nDROP TABLE t;\n"
                   "-- name: enqueue\nINSERT INTO t VALUES (1) RETURNING id AS job_id, "
                   ":message_id AS m;\n"
                   "-- name: claim\nSELECT id AS job_id, 't' AS token, 0 AS lease_until_ms, 0 "
                   "AS now_ms,\n 1 AS attempt, '' AS op_key, '' AS payload FROM t;\n"
                   "-- name: complete\nUPDATE t SET id = 0 WHERE id = :job_id;\n"
                   "-- name: snapshot\nSELECT id AS job_id, 'done' AS state, 1 AS attempt, '' "
                   "AS token FROM t;\n");
    ck_assert_int_eq(load("[workload]\ncopies = 2\n", &s, &err), 0);
    ck_assert_int_eq(qc_lint_unused(&s, p, u, 8), 0);
    qc_protocol_destroy(p);
}
END_TEST

START_TEST(test_lint_missing_column_noted_for_judged_checkers_only)
{
    qc_scenario s;
    qc_err err = {0};
    int lines;
    qc_protocol *p = lint_proto(LINT_PROTO);

    ck_assert_int_eq(load("[checks]\njudge = no_early_reap, no_lost_jobs\n", &s, &err), 0);
    char *text = lint_text(&s, p, &lines);
    /* reap returns no now_ms (no_early_reap); complete and fail return no
     * now_ms, but exclusive_claim and group_order are not judged */
    ck_assert_int_eq(lines, 1);
    ck_assert_str_eq(text, "qchaos: note: backends/y.sql: reap returns no now_ms: no_early_reap "
                           "judges its reap rule by the client's clock bound only\n");
    free(text);

    ck_assert_int_eq(load("[checks]\njudge = bounded_failure\n", &s, &err), 0);
    text = lint_text(&s, p, &lines);
    ck_assert_int_eq(lines, 0); /* the snapshot returns error */
    free(text);

    ck_assert_int_eq(load("[run]\nseed = 1\n", &s, &err), 0); /* every checker judged */
    text = lint_text(&s, p, &lines);
    ck_assert_int_eq(lines, 3); /* reap now_ms, complete now_ms, fail now_ms */
    ck_assert_msg(strstr(text, "complete returns no now_ms: exclusive_claim and group_exclusive "
                               "end a lease at a lower bound") != NULL &&
                      strstr(text, "; group_order orders completions") != NULL,
                  "%s", text);
    free(text);
    qc_protocol_destroy(p);

    json_t *cols = NULL;
    p = lint_proto(LINT_PROTO);
    cols = qc_lint_columns_json(p);
    char *dump = json_dumps(cols, JSON_COMPACT | JSON_SORT_KEYS);
    ck_assert_str_eq(dump, "{\"claim\":[\"job_id\",\"token\",\"lease_until_ms\",\"now_ms\","
                           "\"attempt\",\"op_key\",\"payload\"],\"complete\":[],"
                           "\"enqueue\":[\"job_id\"],\"fail\":[],"
                           "\"reap\":[\"job_id\",\"token\",\"state\"],"
                           "\"snapshot\":[\"job_id\",\"state\",\"attempt\",\"token\",\"error\"]}");
    free(dump);
    json_decref(cols);
    qc_protocol_destroy(p);
}
END_TEST

/* Loads len bytes (may hold NUL) and expects QC_EINVAL naming path:line
 * and the given words. */
static void expect_rejected(const char *text, size_t len, int line, const char *words)
{
    qc_scenario s;
    qc_err err = {0};
    snprintf(path, sizeof path, "/tmp/qc_scenario_%d.ini", (int)getpid());
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    fclose(f);
    qc_scenario_defaults(&s);
    int rc = qc_scenario_load(&s, path, &err);
    unlink(path);
    ck_assert_msg(rc == QC_EINVAL, "accepted (rc %d)", rc);
    char want[300];
    snprintf(want, sizeof want, "%s:%d: ", path, line);
    ck_assert_msg(strstr(err.msg, want) == err.msg, "want '%s...', got '%s'", want, err.msg);
    ck_assert_msg(strstr(err.msg, words) != NULL, "want '%s' in '%s'", words, err.msg);
}

START_TEST(test_scenario_empty_file_rejected)
{
    expect_rejected("", 0, 1, "is empty");
    static const char t[] = "; only a comment\n\n   \n";
    expect_rejected(t, sizeof t - 1, 3, "is empty");
}
END_TEST

START_TEST(test_scenario_nul_byte_rejected_on_its_line)
{
    static const char t[] = "[scenario]\nname = x\n[workload]\njobs = 5\x00\nworkers = 2\n";
    expect_rejected(t, sizeof t - 1, 4, "NUL byte");
}
END_TEST

START_TEST(test_scenario_long_line_reported_on_its_line)
{
    /* 100 KB on line 3 of 5: inih cut it into pieces and blamed line 4,
     * or a line past the end for a long last line. */
    size_t n = 100 * 1024;
    char *t = malloc(n + 100);
    ck_assert_ptr_nonnull(t);
    int k = sprintf(t, "[scenario]\nname = x\ndescription = ");
    memset(t + k, 'a', n);
    strcpy(t + k + n, "\n[workload]\njobs = 5\n");
    expect_rejected(t, strlen(t), 3, "bytes long");
    /* the long line last, without a final newline */
    k = sprintf(t, "[scenario]\nname = x\ndescription = ");
    memset(t + k, 'b', n);
    t[k + n] = '\0';
    expect_rejected(t, strlen(t), 3, "bytes long");
    free(t);
}
END_TEST

START_TEST(test_scenario_stray_quote_blamed_on_its_line)
{
    char t[8192];
    size_t o = (size_t)sprintf(t, "[scenario]\nname = \"chaos\ndescription = x\n[workload]\n");
    for (int i = 0; i < 80; i++)
        o += (size_t)sprintf(t + o, "; comment %d\nworkers = %d\n", i, i + 1);
    expect_rejected(t, o, 2, "unbalanced quote");
    static const char half[] = "[scenario]\ndescription = 'half\n";
    expect_rejected(half, sizeof half - 1, 2, "unbalanced quote");
    /* an apostrophe inside a value and balanced quotes are fine */
    qc_scenario s;
    qc_err err = {0};
    ck_assert_msg(load("[scenario]\ndescription = the queue's \"fast\" path\n", &s, &err) == 0,
                  "%s", err.msg);
}
END_TEST

START_TEST(test_scenario_parse_from_text)
{
    qc_scenario s;
    qc_err err = {0};
    qc_scenario_defaults(&s);
    /* not NUL-terminated: the length counts */
    static const char t[] = "[workload]\njobs = 7\nworkers = 99";
    ck_assert_int_eq(qc_scenario_parse(&s, "mem.ini", t, sizeof t - 2, &err), 0);
    ck_assert_int_eq(s.jobs, 7);
    ck_assert_int_eq(s.workers, 9);
    ck_assert_str_eq(s.path, "mem.ini");
}
END_TEST

START_TEST(test_scenario_reaper_skew_key_and_actor_offsets)
{
    qc_scenario s;
    qc_err err = {0};
    static const char ok[] = "[faults]\nclock_skew_ms = 0,-3000\nreaper_skew_ms = 2500\n";
    qc_scenario_defaults(&s);
    ck_assert_int_eq(s.reaper_skew_ms, 0);
    ck_assert_int_eq(qc_scenario_actor_skew_ms(&s, -1), 0);
    ck_assert_int_eq(qc_scenario_parse(&s, "skew.ini", ok, sizeof ok - 1, &err), 0);
    ck_assert_int_eq(qc_scenario_actor_skew_ms(&s, -1), 2500); /* the reaper */
    ck_assert_int_eq(qc_scenario_actor_skew_ms(&s, 0), 0);
    ck_assert_int_eq(qc_scenario_actor_skew_ms(&s, 1), -3000);
    ck_assert_int_eq(qc_scenario_clock_skew_ms(&s, -1), 0); /* the enqueuer's stays 0 */
    static const char bad[] = "[faults]\nreaper_skew_ms = 3s\n";
    qc_scenario_defaults(&s);
    ck_assert_int_ne(qc_scenario_parse(&s, "skew.ini", bad, sizeof bad - 1, &err), 0);
    ck_assert_msg(strstr(err.msg, "skew.ini:2") && strstr(err.msg, "reaper_skew_ms must be "
                                                                   "milliseconds"),
                  "%s", err.msg);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("scenario");
    TCase *tc = tcase_create("load");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_scenario_defaults_are_the_main_job);
    tcase_add_test(tc, test_scenario_valid_file_overrides_keys);
    tcase_add_test(tc, test_scenario_unknown_key_error_names_line);
    tcase_add_test(tc, test_scenario_worker_name_host);
    tcase_add_test(tc, test_scenario_session_time_zone);
    tcase_add_test(tc, test_scenario_bad_value_error_names_line_and_expectation);
    tcase_add_test(tc, test_scenario_unknown_section_and_syntax_error_rejected);
    tcase_add_test(tc, test_scenario_nemesis_pause_keys);
    tcase_add_test(tc, test_scenario_replicated_topology_keys);
    tcase_add_test(tc, test_scenario_pooler_pool_size_and_terminate_refused);
    tcase_add_test(tc, test_scenario_listen_keys_and_notify_faults);
    tcase_add_test(tc, test_scenario_graceful_stop_keys);
    tcase_add_test(tc, test_scenario_reaper_skew_key_and_actor_offsets);
    tcase_add_test(tc, test_scenario_choice_and_bool_keys);
    tcase_add_test(tc, test_scenario_missing_file_is_input_error);
    tcase_add_test(tc, test_scenario_fifo_and_device_refused_without_blocking);
    tcase_add_test(tc, test_scenario_validate_cap_below_base_rejected);
    tcase_add_test(tc, test_scenario_resolve_missing_protocol_rejected);
    tcase_add_test(tc, test_scenario_resolve_copied_bundled_path);
    tcase_add_test(tc, test_lint_unused_value_warned_with_file_line);
    tcase_add_test(tc, test_lint_every_mapped_key_and_transaction_model);
    tcase_add_test(tc, test_lint_missing_column_noted_for_judged_checkers_only);
    tcase_add_test(tc, test_scenario_copies_keys_bounds_adapter_and_lint);
    tcase_add_test(tc, test_scenario_empty_file_rejected);
    tcase_add_test(tc, test_scenario_nul_byte_rejected_on_its_line);
    tcase_add_test(tc, test_scenario_long_line_reported_on_its_line);
    tcase_add_test(tc, test_scenario_stray_quote_blamed_on_its_line);
    tcase_add_test(tc, test_scenario_parse_from_text);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
