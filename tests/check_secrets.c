/*
 * check_secrets.c - no output ever contains a password, whatever the form of
 * the connection string and whichever driver it is given to.
 *
 * TCases:
 *   scrub   qc_scrub_conninfo on every string form (unit);
 *   closed  every driver (pg, odbc) x every string form pointed at a closed
 *           port: the error message holds no piece of the secret;
 *   live    the same forms at the real servers of QC_TEST_DSN (a role that
 *           does not exist) and QC_TEST_ODBC (a wrong password), so that the
 *           server's own error text is checked too (only when set);
 *   cli     the qchaos binary (QC_QCHAOS_BIN, default ./qchaos): stderr and
 *           stdout of a failing connect for every form, and a real run with
 *           a password in --dsn and --worker-dsn (PostgreSQL) and one through
 *           ODBC (MariaDB, its real password): stdout, stderr, the ledger
 *           header, results.json and every report hold no secret (live).
 *
 * Each form gets its own secret so that a hit names the form.  A secret is
 * checked whole and in its pieces (a quoted 'a b' must not leak "a" + " b"
 * either); pieces are long and unusual so that they cannot occur by chance.
 */
#include <check.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../backends/driver.h"
#include "../backends/odbc.h"
#include "../harness/err.h"

/* One string form: printf template with %s for host, %s for port, %s for
 * the secret as written; the pieces that must never be printed. */
typedef struct form {
    const char *name;
    const char *tmpl;
    const char *written;   /* the secret as written in the string */
    const char *pieces[3]; /* what must not appear (NULL-terminated) */
} form;

static const form forms[] = {
    {"libpq password=", "host=%s port=%s user=qc_no_such_role password=%s dbname=postgres",
     "Xq1kvPlainSecret", {"Xq1kvPlainSecret", NULL}},
    {"libpq password = 'a b'",
     "host=%s port=%s user=qc_no_such_role password = %s dbname=postgres",
     "'Xq2quoted\\'Half Xq2otherHalf'", {"Xq2quoted", "Xq2otherHalf", NULL}},
    {"postgres:// userinfo", "postgres://qc_no_such_role:%3$s@%1$s:%2$s/postgres",
     "Xq3uriSecret", {"Xq3uriSecret", NULL}},
    {"postgresql:// userinfo", "postgresql://qc_no_such_role:%3$s@%1$s:%2$s/postgres",
     "Xq4uriSecret", {"Xq4uriSecret", NULL}},
    {"postgresql:// percent-encoded",
     "postgresql://qc_no_such_role:%3$s@%1$s:%2$s/postgres", "Xq5pct%40Encoded",
     {"Xq5pct", "Encoded", NULL}},
    {"URI ?password=", "postgresql://qc_no_such_role@%1$s:%2$s/postgres?password=%3$s",
     "Xq6querySecret", {"Xq6querySecret", NULL}},
    {"ODBC Pwd=", "Driver={MariaDB Unicode};Server=%s;Port=%s;Uid=qc_no_such_role;Pwd=%s;",
     "Xq7odbcSecret", {"Xq7odbcSecret", NULL}},
    {"ODBC PWD={se;cret}",
     "Driver={MariaDB Unicode};Server=%s;Port=%s;Uid=qc_no_such_role;PWD=%s;Database=x",
     "{Xq8brace;Xq8second}}Xq8third}", {"Xq8brace", "Xq8second", "Xq8third"}},
    {"ODBC Password=",
     "Driver={MariaDB Unicode};Server=%s;Port=%s;Uid=qc_no_such_role;Password=%s;",
     "Xq9passwordSecret", {"Xq9passwordSecret", NULL}},
};
#define NFORMS (sizeof forms / sizeof forms[0])

static void build(const form *f, const char *host, const char *port, char *out, size_t n)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(out, n, f->tmpl, host, port, f->written);
#pragma GCC diagnostic pop
}

/* Fails the test when text holds any piece of f's secret. */
static void assert_clean(const form *f, const char *what, const char *text)
{
    for (int i = 0; i < 3 && f->pieces[i]; i++)
        ck_assert_msg(strstr(text, f->pieces[i]) == NULL, "%s: form '%s' leaked '%s': %s", what,
                      f->name, f->pieces[i], text);
}

/* ---- scrub ----------------------------------------------------------------- */

START_TEST(test_scrub_conninfo_every_form)
{
    for (size_t i = 0; i < NFORMS; i++) {
        char conn[512], msg[2048];
        build(&forms[i], "db.example", "5432", conn, sizeof conn);
        /* A message that quotes the whole string and every piece. */
        snprintf(msg, sizeof msg, "error in '%s': %s / %s / %s", conn, forms[i].pieces[0],
                 forms[i].pieces[1] ? forms[i].pieces[1] : "",
                 forms[i].pieces[2] ? forms[i].pieces[2] : "");
        qc_scrub_conninfo(msg, sizeof msg, conn);
        assert_clean(&forms[i], "scrub", msg);
        ck_assert_msg(strstr(msg, "db.example") != NULL, "host lost: %s", msg);
    }
}
END_TEST

START_TEST(test_redact_mixed_syntax_hides_password)
{
    char out[256];
    /* "database" makes it read as ODBC, where the whole string is the value
     * of "host": the libpq password must still go. */
    qc_redact_conninfo("host=h password=Xq12mixedSecret database=x", out, sizeof out);
    ck_assert_msg(strstr(out, "Xq12mixed") == NULL, "%s", out);
    qc_redact_conninfo("Driver={X};Server=h password=Xq13mixedSecret", out, sizeof out);
    ck_assert_msg(strstr(out, "Xq13mixed") == NULL, "%s", out);
    ck_assert_msg(strstr(out, "Server=h") != NULL, "%s", out);
}
END_TEST

START_TEST(test_scrub_conninfo_keeps_text_without_password)
{
    char msg[128] = "cannot connect to db:5432: refused";
    qc_scrub_conninfo(msg, sizeof msg, "host=db port=5432 user=u dbname=refused");
    ck_assert_str_eq(msg, "cannot connect to db:5432: refused");
}
END_TEST

/* ---- closed ---------------------------------------------------------------- */

static void open_fails_clean(const qc_driver *d, const char *dname, const char *host,
                             const char *port)
{
    for (size_t i = 0; i < NFORMS; i++) {
        char conn[512], what[64];
        qc_conn *c = NULL;
        qc_err err = {0};
        build(&forms[i], host, port, conn, sizeof conn);
        int rc = d->open(conn, &c, &err);
        if (rc == 0) { /* trust authentication let the wrong password in */
            d->close(c);
            continue;
        }
        snprintf(what, sizeof what, "%s open", dname);
        ck_assert_msg(err.msg[0] != '\0', "%s: form '%s': empty message", what, forms[i].name);
        assert_clean(&forms[i], what, err.msg);
    }
}

START_TEST(test_closed_port_pg_every_form)
{
    open_fails_clean(&qc_driver_pg, "pg", "127.0.0.1", "1");
}
END_TEST

START_TEST(test_closed_port_odbc_every_form)
{
    open_fails_clean(&qc_driver_odbc, "odbc", "127.0.0.1", "1");
}
END_TEST

/* ---- live ------------------------------------------------------------------ */

static void pg_host_port(char *host, size_t hn, char *port, size_t pn)
{
    char *perr = NULL;
    PQconninfoOption *o = PQconninfoParse(getenv("QC_TEST_DSN"), &perr);
    ck_assert_ptr_nonnull(o);
    snprintf(host, hn, "127.0.0.1");
    snprintf(port, pn, "5432");
    for (PQconninfoOption *p = o; p->keyword; p++) {
        if (!strcmp(p->keyword, "host") && p->val)
            snprintf(host, hn, "%s", p->val);
        if (!strcmp(p->keyword, "port") && p->val)
            snprintf(port, pn, "%s", p->val);
    }
    PQconninfoFree(o);
}

/* Copies the value of key (";key=value;") of an ODBC string. */
static void odbc_get(const char *s, const char *key, char *out, size_t n)
{
    char pat[64];
    snprintf(pat, sizeof pat, "%s=", key);
    const char *p = strstr(s, pat);
    ck_assert_msg(p != NULL, "no %s in QC_TEST_ODBC", key);
    p += strlen(pat);
    snprintf(out, n, "%.*s", (int)strcspn(p, ";"), p);
}

START_TEST(test_live_pg_every_form)
{
    char host[256], port[32];
    pg_host_port(host, sizeof host, port, sizeof port);
    open_fails_clean(&qc_driver_pg, "pg live", host, port);
}
END_TEST

START_TEST(test_live_odbc_every_form)
{
    char host[256], port[32];
    const char *o = getenv("QC_TEST_ODBC");
    odbc_get(o, "Server", host, sizeof host);
    odbc_get(o, "Port", port, sizeof port);
    open_fails_clean(&qc_driver_odbc, "odbc live", host, port);
}
END_TEST

START_TEST(test_live_odbc_wrong_password_real_user)
{
    /* The user exists: MariaDB answers "access denied (using password)". */
    char host[256], port[32], conn[512];
    const char *o = getenv("QC_TEST_ODBC");
    odbc_get(o, "Server", host, sizeof host);
    odbc_get(o, "Port", port, sizeof port);
    snprintf(conn, sizeof conn,
             "Driver={MariaDB Unicode};Server=%s;Port=%s;Uid=qchaos;Pwd={Xq10wrong;Pw};", host,
             port);
    qc_conn *c = NULL;
    qc_err err = {0};
    ck_assert_int_ne(qc_driver_odbc.open(conn, &c, &err), 0);
    ck_assert_msg(strstr(err.msg, "Xq10wrong") == NULL && strstr(err.msg, "Pw}") == NULL,
                  "leaked: %s", err.msg);
    ck_assert_msg(strstr(err.msg, "ccess denied") != NULL, "not the server's refusal: %s",
                  err.msg);
}
END_TEST

/* ---- cli ------------------------------------------------------------------- */

static const char *bin(void)
{
    const char *b = getenv("QC_QCHAOS_BIN");
    return b && *b ? b : "./qchaos";
}

/* Runs cmd (stdout and stderr together) and returns its output (malloc'd). */
static char *run_capture(const char *cmd, int *status)
{
    char full[4096];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    ck_assert_ptr_nonnull(p);
    size_t cap = 4096, len = 0, got;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    while ((got = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (cap - len < 1024) {
            cap *= 2;
            buf = realloc(buf, cap);
            ck_assert_ptr_nonnull(buf);
        }
    }
    buf[len] = '\0';
    *status = pclose(p);
    return buf;
}

/* Writes s into a shell single-quoted word. */
static void shell_quote(const char *s, char *out, size_t n)
{
    size_t o = 0;
    out[o++] = '\'';
    for (; *s && o + 5 < n; s++) {
        if (*s == '\'') {
            memcpy(out + o, "'\\''", 4);
            o += 4;
        } else {
            out[o++] = *s;
        }
    }
    out[o++] = '\'';
    out[o] = '\0';
}

START_TEST(test_cli_failing_connect_every_form)
{
    /* Every form with every protocol family: libpq strings given to a
     * MariaDB protocol (the reported leak) and ODBC strings given to the
     * PostgreSQL one. */
    static const char *const protocols[] = {"backends/postgres/skip_locked.sql",
                                            "backends/mariadb/skip_locked.sql"};
    for (size_t p = 0; p < 2; p++)
        for (size_t i = 0; i < NFORMS; i++) {
            char conn[512], q[1200], cmd[4096];
            int st;
            build(&forms[i], "127.0.0.1", "1", conn, sizeof conn);
            shell_quote(conn, q, sizeof q);
            snprintf(cmd, sizeof cmd, "%s run --protocol %s --jobs 10 --no-progress --dsn %s",
                     bin(), protocols[p], q);
            char *out = run_capture(cmd, &st);
            ck_assert_msg(st != 0, "%s: exit 0", cmd);
            assert_clean(&forms[i], protocols[p], out);
            /* and with the same string as --worker-dsn=... */
            snprintf(cmd, sizeof cmd,
                     "%s run --protocol %s --jobs 10 --no-progress --dsn %s --worker-dsn=%s", bin(),
                     protocols[p], q, q);
            free(out);
            out = run_capture(cmd, &st);
            ck_assert_msg(st != 0, "%s: exit 0", cmd);
            assert_clean(&forms[i], protocols[p], out);
            free(out);
        }
}
END_TEST

START_TEST(test_cli_real_run_records_no_secret)
{
    const char *dsn = getenv("QC_TEST_DSN");
    char dir[] = "/tmp/qc-secrets-XXXXXX", conn[1024], q[2100], cmd[8192];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    /* The ephemeral server trusts every local user: the password is
     * ignored by the server but passes through every qchaos output. */
    snprintf(conn, sizeof conn, "%s password=Xq11realRunSecret", dsn);
    shell_quote(conn, q, sizeof q);
    snprintf(cmd, sizeof cmd,
             "%s run scenarios/default.ini --jobs 200 --workers 2 --seed 7 --no-progress "
             "--dsn %s --worker-dsn %s --ds=%s --out %s/run",
             bin(), q, q, q, dir);
    int st;
    char *out = run_capture(cmd, &st);
    ck_assert_msg(st == 0, "exit %d: %s", st, out);
    ck_assert_msg(strstr(out, "Xq11realRunSecret") == NULL, "leaked on the terminal: %s", out);
    free(out);
    /* A mutant fails, so the printed repeat command is checked too. */
    snprintf(cmd, sizeof cmd,
             "%s run scenarios/default.ini --protocol "
             "backends/postgres/mutants/select_then_update.sql --seed 2 "
             "--no-progress --dsn %s --out %s/mutant",
             bin(), q, dir);
    out = run_capture(cmd, &st);
    ck_assert_msg(strstr(out, "repeat with:") != NULL, "no repeat command (exit %d): %s", st,
                  out);
    /* its --out is this run's folder: the line under it says --force */
    ck_assert_msg(strstr(out, "(its --out is this run's folder: add --force to overwrite it") !=
                      NULL,
                  "no --force hint under the repeat command: %s", out);
    ck_assert_msg(strstr(out, "Xq11realRunSecret") == NULL, "leaked on the terminal: %s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "grep -rl Xq11realRunSecret %s", dir);
    out = run_capture(cmd, &st);
    ck_assert_msg(out[0] == '\0', "a file holds the secret: %s", out);
    free(out);
    /* The record is there, redacted. */
    snprintf(cmd, sizeof cmd, "grep -l 'password=\\*\\*\\*' %s/run/results.json %s/run/ledger.jsonl",
             dir, dir);
    out = run_capture(cmd, &st);
    ck_assert_msg(st == 0, "no redacted command in results.json / ledger: %s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_cli_real_odbc_run_records_no_secret)
{
    /* QC_TEST_ODBC holds the server's real password: a real run through
     * ODBC must record the string with Pwd=*** and nowhere the value. */
    const char *o = getenv("QC_TEST_ODBC");
    char pwd[256], dir[] = "/tmp/qc-secrets-XXXXXX", q[2100], cmd[8192];
    odbc_get(o, "Pwd", pwd, sizeof pwd);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    shell_quote(o, q, sizeof q);
    snprintf(cmd, sizeof cmd,
             "%s run scenarios/default.ini --protocol backends/mariadb/skip_locked.sql --jobs 100 "
             "--workers 2 --seed 7 --no-progress --dsn %s --out %s/run",
             bin(), q, dir);
    int st;
    char *out = run_capture(cmd, &st);
    ck_assert_msg(st == 0, "exit %d: %s", st, out);
    char pat[300];
    snprintf(pat, sizeof pat, "Pwd=%s", pwd);
    ck_assert_msg(strstr(out, pat) == NULL, "leaked on the terminal: %s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "grep -rlF -- '%s' %s", pat, dir);
    out = run_capture(cmd, &st);
    ck_assert_msg(out[0] == '\0', "a file holds the password: %s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "grep -l 'Pwd=\\*\\*\\*' %s/run/results.json %s/run/ledger.jsonl",
             dir, dir);
    out = run_capture(cmd, &st);
    ck_assert_msg(st == 0, "no redacted command in results.json / ledger: %s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("secrets");
    TCase *tc = tcase_create("scrub");
    tcase_add_test(tc, test_scrub_conninfo_every_form);
    tcase_add_test(tc, test_scrub_conninfo_keeps_text_without_password);
    tcase_add_test(tc, test_redact_mixed_syntax_hides_password);
    suite_add_tcase(s, tc);
    tc = tcase_create("closed");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_closed_port_pg_every_form);
    tcase_add_test(tc, test_closed_port_odbc_every_form);
    suite_add_tcase(s, tc);
    tc = tcase_create("cli");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_cli_failing_connect_every_form);
    suite_add_tcase(s, tc);
    if (getenv("QC_TEST_DSN")) {
        tc = tcase_create("live_pg");
        tcase_set_timeout(tc, 600);
        tcase_add_test(tc, test_live_pg_every_form);
        tcase_add_test(tc, test_cli_real_run_records_no_secret);
        suite_add_tcase(s, tc);
    } else {
        fprintf(stderr, "check_secrets: QC_TEST_DSN not set: live PostgreSQL tests skipped\n");
    }
    if (getenv("QC_TEST_ODBC")) {
        tc = tcase_create("live_odbc");
        tcase_set_timeout(tc, 600);
        tcase_add_test(tc, test_live_odbc_every_form);
        tcase_add_test(tc, test_live_odbc_wrong_password_real_user);
        tcase_add_test(tc, test_cli_real_odbc_run_records_no_secret);
        suite_add_tcase(s, tc);
    } else {
        fprintf(stderr, "check_secrets: QC_TEST_ODBC not set: live MariaDB tests skipped\n");
    }
    return s;
}

int main(void)
{
    qc_err err = {0};
    if (qc_odbc_global_init(&err) != 0) {
        fprintf(stderr, "check_secrets: %s\n", err.msg);
        return 1;
    }
    SRunner *r = srunner_create(suite());
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    qc_odbc_global_fini();
    return failed ? 1 : 0;
}
