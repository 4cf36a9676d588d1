/*
 * check_adapter_keys.c - what an adapter cannot honour is refused at load
 * (issue 17): qc_adapter_check on scenarios with an [adapter] section and
 * one key each (the notify faults, the listen nemesis keys, the listen
 * policy keys, clock skew, the proxy's faults, the older lost_request),
 * one scenario it accepts, and `qchaos run` on such a scenario against an
 * address nothing listens on: exit 2 with the key named, before any
 * connection (an attempt would be exit 3).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../harness/adapter.h"
#include "../harness/scenario.h"

static const char head[] = "[scenario]\nname = adref\n"
                           "protocol = backends/adapters/pgboss.sql\n"
                           "[adapter]\ncommand = false\n";

/* Parses head + extra and runs qc_adapter_check; the message in *err. */
static int check_with(const char *extra, qc_err *err)
{
    char text[1024];
    qc_scenario s;
    int n = snprintf(text, sizeof text, "%s%s", head, extra);
    qc_scenario_defaults(&s);
    memset(err, 0, sizeof *err);
    ck_assert_int_eq(qc_scenario_parse(&s, "adref.ini", text, (size_t)n, err), 0);
    return qc_adapter_check(&s, err);
}

static const struct {
    const char *extra, *named;
} refused[] = {
    {"[faults]\nnotify_lost = 3\n", "[faults] notify_lost is not available with [adapter]"},
    {"[faults]\nnotify_early = 2%\n", "[faults] notify_early is not available with [adapter]"},
    {"[nemesis]\nlisten_close_every_ms = 500\n",
     "[nemesis] listen_close_every_ms is not available with [adapter]"},
    {"[nemesis]\nlisten_terminate_every_ms = 500\n",
     "[nemesis] listen_terminate_every_ms is not available with [adapter]"},
    {"[idle]\nlisten_poll_ms = 300\n", "[idle] listen_poll_ms is not available with [adapter]"},
    {"[policy]\non_listen_lost = ignore\n",
     "[policy] on_listen_lost is not available with [adapter]"},
    {"[policy]\non_renew_lost = continue\n",
     "[policy] on_renew_lost is not available with [adapter]"},
    {"[policy]\nlease_deadline = answer\n",
     "[policy] lease_deadline is not available with [adapter]"},
    {"[faults]\nclock_skew_ms = 0,-3000\n",
     "[faults] clock_skew_ms is not available with [adapter]"},
    {"[faults]\nreaper_skew_ms = 3000\n",
     "[faults] reaper_skew_ms is not available with [adapter]"},
    {"[faults]\nlost_request = 1\n", "[faults] lost_request is not available with [adapter]"},
    {"[faults]\ngraceful_stop = 1\n", "[faults] graceful_stop is not available with [adapter]"},
    {"[policy]\nstop_heartbeat_first = yes\n",
     "[policy] stop_heartbeat_first is not available with [adapter]"},
};

START_TEST(test_adapter_check_key_it_cannot_honour_refused)
{
    qc_err err;
    ck_assert_int_eq(check_with(refused[_i].extra, &err), QC_EINVAL);
    /* the file and the line that set the key (decision 1130): the head
     * has 5 lines, the key is on the 7th */
    ck_assert_msg(strstr(err.msg, "adref.ini:7: ") == err.msg, "no file:line in \"%s\"",
                  err.msg);
    ck_assert_msg(strstr(err.msg, refused[_i].named) != NULL, "\"%s\" lacks \"%s\"", err.msg,
                  refused[_i].named);
}
END_TEST

START_TEST(test_adapter_check_process_faults_and_default_listen_poll_accepted)
{
    qc_err err;
    ck_assert_int_eq(check_with("[faults]\nkill_after_claim = 2\nstall_beyond_lease = 1\n"
                                "lost_ack = 1\n[idle]\nlisten_poll_ms = 1000\n",
                                &err),
                     0);
}
END_TEST

/* End to end: refused before any server is touched (port 1: nothing
 * listens there, so a connection attempt would be exit 3). */
START_TEST(test_adapter_run_notify_fault_exit_2_before_connecting)
{
    char dir[] = "/tmp/qchaos-adref.XXXXXX", path[128], cmd[512], line[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/s.ini", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "%s[faults]\nnotify_lost = 3\n", head);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "./qchaos run %s --dsn 'host=127.0.0.1 port=1 user=x' --out %s/out --no-progress "
             "2>&1",
             path, dir);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    int named = 0;
    while (fgets(line, sizeof line, p))
        named |=
            strstr(line, "s.ini:7: [faults] notify_lost is not available with [adapter]") != NULL;
    int st = pclose(p);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "exit status %d", st);
    ck_assert_msg(named, "the refusal does not name the file, line and key");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("adapter_keys");
    TCase *tc = tcase_create("refused");
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_adapter_check_key_it_cannot_honour_refused, 0,
                        (int)(sizeof refused / sizeof *refused));
    tcase_add_test(tc, test_adapter_check_process_faults_and_default_listen_poll_accepted);
    tcase_add_test(tc, test_adapter_run_notify_fault_exit_2_before_connecting);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
