/*
 * check_cli.c - the command line's pieces that need no database: shell
 * quoting, the command that repeats a run (order, empty words, quotes,
 * --seed/--out/--repeat, passwords; a shell splits it back into the same
 * words), scenario names looked up in the data folder (QCHAOS_HOME), and a
 * malformed connection string refused without echoing its password.
 */
#include <check.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../backends/driver.h"
#include "../harness/cli.h"
#include "../harness/scenario.h"

/* The shape of `qchaos run`'s table (harness/main.c): the builder only
 * needs the names and which take a value. */
static const struct option run_opts[] = {{"dsn", required_argument, 0, 256},
                                         {"worker-dsn", required_argument, 0, 257},
                                         {"protocol", required_argument, 0, 258},
                                         {"workers", required_argument, 0, 259},
                                         {"jobs", required_argument, 0, 260},
                                         {"duration", required_argument, 0, 261},
                                         {"seed", required_argument, 0, 262},
                                         {"out", required_argument, 0, 263},
                                         {"keep", no_argument, 0, 264},
                                         {"no-progress", no_argument, 0, 265},
                                         {"help", no_argument, 0, 'h'},
                                         {"allow-inconclusive", no_argument, 0, 266},
                                         {"repeat", required_argument, 0, 267},
                                         {"force", no_argument, 0, 268},
                                         {0, 0, 0, 0}};

static char *line_of(char *const *argv, unsigned long long seed, const char *out)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    char *s = qc_cli_repeat_line("qchaos", argc, argv, run_opts, seed, out);
    ck_assert_ptr_nonnull(s);
    return s;
}

START_TEST(test_cli_quote)
{
    const char *const cases[][2] = {
        {"", "''"},           {"plain-1_./=:,@x", "plain-1_./=:,@x"},
        {"a b", "'a b'"},     {"it's", "'it'\\''s'"},
        {"$HOME", "'$HOME'"}, {"a\\b", "'a\\b'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *q = qc_cli_quote(cases[i][0]);
        ck_assert_str_eq(q, cases[i][1]);
        free(q);
    }
}
END_TEST

/* `--dsn ''` was written `--dsn  --jobs ...`: a shell then reads --jobs
 * as the DSN. */
START_TEST(test_cli_repeat_empty_word_quoted)
{
    char *argv[] = {"run", "--dsn", "", "--jobs", "5", NULL};
    char *s = line_of(argv, 7, "o");
    ck_assert_str_eq(s, "qchaos run --dsn '' --jobs 5 --seed 7 --out o");
    free(s);
}
END_TEST

START_TEST(test_cli_repeat_keeps_order_and_replaces_in_place)
{
    char *argv[] = {"run", "--seed", "3", "scenarios/chaos.ini", "--jobs", "5", "--out",
                    "d",   "--keep", NULL};
    char *s = line_of(argv, 9, "d2");
    ck_assert_str_eq(s, "qchaos run --seed 9 scenarios/chaos.ini --jobs 5 --out d2 --keep");
    free(s);
    char *argv2[] = {"run", "--jobs=5", "--seed=3", "x.ini", "--out=a b", NULL};
    s = line_of(argv2, 10, "a b/seed-10");
    ck_assert_str_eq(s, "qchaos run --jobs=5 --seed=10 x.ini '--out=a b/seed-10'");
    free(s);
}
END_TEST

START_TEST(test_cli_repeat_drops_repeat_reads_abbreviations)
{
    char *argv[] = {"run", "--rep", "3", "--se", "1", "--o", "x", "--repeat=2", "--keep", NULL};
    char *s = line_of(argv, 101, "x/seed-101");
    ck_assert_str_eq(s, "qchaos run --se 101 --o x/seed-101 --keep");
    free(s);
    /* a value that looks like an option is the option's value, as getopt
     * read it; after "--" nothing is an option */
    char *argv2[] = {"run", "--protocol", "--seed", "--", "--out", NULL};
    s = line_of(argv2, 4, "r");
    ck_assert_str_eq(s, "qchaos run --protocol --seed -- --out --seed 4 --out r");
    free(s);
}
END_TEST

START_TEST(test_cli_repeat_redacts_passwords)
{
    char *argv[] = {"run",
                    "--dsn",
                    "host=h password=s3cret",
                    "--worker-dsn=password=s3cret port=1",
                    "--ds",
                    "postgresql://u:s3cret@h/db",
                    "--worker-d",
                    "password=s3cret",
                    NULL};
    char *s = line_of(argv, 1, "o");
    ck_assert_msg(strstr(s, "s3cret") == NULL, "password in: %s", s);
    ck_assert_msg(strstr(s, "'host=h password=***'") != NULL, "%s", s);
    ck_assert_msg(strstr(s, "'--worker-dsn=password=*** port=1'") != NULL, "%s", s);
    free(s);
}
END_TEST

/* sh -c 'printf "%s\n" LINE' gives back the words the line was built from. */
START_TEST(test_cli_repeat_shell_splits_back)
{
    char *argv[] = {"run", "--dsn",  "",  "x y.ini", "--protocol", "it's \"q\"", "--out",
                    "o",   "--jobs", "5", "--seed",  "1",          "--keep",     NULL};
    const char *const want[] = {"qchaos",     "run",        "--dsn", "",           "x y.ini",
                                "--protocol", "it's \"q\"", "--out", "new dir/$X", "--jobs",
                                "5",          "--seed",     "42",    "--keep"};
    char *s = line_of(argv, 42, "new dir/$X");
    size_t n = strlen(s) + 32;
    char *cmd = malloc(n);
    snprintf(cmd, n, "printf '%%s\\n' %s", s);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    char buf[256];
    size_t k = 0;
    while (fgets(buf, sizeof buf, p)) {
        buf[strcspn(buf, "\n")] = '\0';
        ck_assert_msg(k < sizeof want / sizeof *want, "extra word '%s' from: %s", buf, s);
        ck_assert_msg(!strcmp(buf, want[k]), "word %zu: '%s', want '%s' (line: %s)", k, buf,
                      want[k], s);
        k++;
    }
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_uint_eq(k, sizeof want / sizeof *want);
    free(cmd);
    free(s);
}
END_TEST

/* A bundled scenario by name, by its path under the data folder, from any
 * folder; QCHAOS_HOME sets the data folder. */
START_TEST(test_cli_scenario_found_in_datadir)
{
    char home[] = "/tmp/qchaos-check-cli.XXXXXX", p[512], out[1024];
    ck_assert_ptr_nonnull(mkdtemp(home));
    snprintf(p, sizeof p, "%s/scripts", home);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/scenarios", home);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/scenarios/mine.ini", home);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs("[scenario]\nname = mine\n", f);
    fclose(f);
    setenv("QCHAOS_HOME", home, 1);
    ck_assert_str_eq(qc_datadir(), home);
    const char *const names[] = {"mine", "mine.ini", "scenarios/mine.ini"};
    for (size_t i = 0; i < 3; i++) {
        qc_err err = {0};
        ck_assert_msg(qc_scenario_find(names[i], out, sizeof out, &err) == 0, "%s: %s", names[i],
                      err.msg);
        ck_assert_str_eq(out, p);
    }
    qc_err err = {0};
    ck_assert_int_eq(qc_scenario_find("nosuch", out, sizeof out, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "'nosuch' not found") && strstr(err.msg, home), "%s", err.msg);
    unsetenv("QCHAOS_HOME");
    unlink(p);
    snprintf(p, sizeof p, "%s/scenarios", home);
    rmdir(p);
    snprintf(p, sizeof p, "%s/scripts", home);
    rmdir(p);
    rmdir(home);
}
END_TEST

/* The test binary lives in tests/, which has no scripts/: the data folder
 * is then tests/../share/qchaos or the build's QC_DATADIR, never a folder
 * without scripts/ (run from the checkout: ./qchaos finds ./scripts). */
START_TEST(test_cli_datadir_has_scripts_or_is_builtin)
{
    unsetenv("QCHAOS_HOME");
    const char *d = qc_datadir();
    char p[1100];
    struct stat st;
    snprintf(p, sizeof p, "%s/scripts", d);
    ck_assert_msg(stat(p, &st) == 0 || strstr(d, "/share/qchaos") != NULL, "%s", d);
}
END_TEST

START_TEST(test_cli_bad_conninfo_is_input_error_without_password)
{
    const char *const bad[] = {"host=x bogus", "postgres://[bad", "postgresql://u:s3cret@[bad",
                               "postgresql://u:s3c%zzret@h/db", "host=x s3cret"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        qc_err err = {0};
        ck_assert_msg(qc_driver_pg.check_conninfo(bad[i], &err) == QC_EINVAL, "%s", bad[i]);
        ck_assert_msg(strstr(err.msg, "invalid connection string") != NULL, "%s", err.msg);
        ck_assert_msg(strstr(err.msg, "s3c") == NULL, "password in: %s", err.msg);
    }
    const char *const good[] = {"", "host=127.0.0.1 port=1", "postgresql://u:p@h:5/db"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        qc_err err = {0};
        ck_assert_msg(qc_driver_pg.check_conninfo(good[i], &err) == 0, "%s: %s", good[i], err.msg);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_cli_quote);
    tcase_add_test(tc, test_cli_repeat_empty_word_quoted);
    tcase_add_test(tc, test_cli_repeat_keeps_order_and_replaces_in_place);
    tcase_add_test(tc, test_cli_repeat_drops_repeat_reads_abbreviations);
    tcase_add_test(tc, test_cli_repeat_redacts_passwords);
    tcase_add_test(tc, test_cli_repeat_shell_splits_back);
    tcase_add_test(tc, test_cli_scenario_found_in_datadir);
    tcase_add_test(tc, test_cli_datadir_has_scripts_or_is_builtin);
    tcase_add_test(tc, test_cli_bad_conninfo_is_input_error_without_password);
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
