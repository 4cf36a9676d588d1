/*
 * check_reports.c - unit tests of the report writers (reports/report.h):
 * junit.xml (well-formed, one testcase per checker, FAIL / INCONCLUSIVE /
 * NOT_APPLICABLE mapping), report.md and report.html (order of sections,
 * the repeat command, self-containment, escaping), plots with and without
 * gnuplot, a headless-browser rendering of report.html, bad input, and the
 * time a 200,000-event ledger takes.
 *
 * Each test builds a small hand-made run folder (results.json +
 * ledger.jsonl written from the strings below) under /tmp and removes it.
 * Tests that need a program (gnuplot, chromium, xmllint) look it up in PATH
 * and say on stderr when they skip because it is not installed.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../harness/checkers.h"
#include "../harness/history.h"
#include "../reports/report.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define QC_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define QC_SANITIZED 1
#endif
#ifdef QC_SANITIZED
#define TIME_BOUND_MS 60000.0
#else
#define TIME_BOUND_MS 8000.0
#endif

/* The evidence text every escaping test looks for. */
#define NASTY "<script>alert(1)</script>&\"'"
#define NASTY_JSON "<script>alert(1)</script>&\\\"'"
#define NASTY_ESCAPED "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;"

static const char results_json[] =
    "{\n"
    "  \"schema\": \"qchaos-results/1\",\n"
    "  \"seed\": 7,\n"
    "  \"events\": 40,\n"
    "  \"checkers\": [\n"
    "    {\"name\": \"exclusive_claim\", \"verdict\": \"FAIL\", \"opportunities\": 4,\n"
    "     \"violations_total\": 2, \"summary\": \"4 claims, 1 overlapping lease pair\",\n"
    "     \"violations\": [\n"
    "       {\"job\": 1, \"seq\": [5, 12],\n"
    "        \"explanation\": \"two live leases on job 1: " NASTY_JSON "\"},\n"
    "       {\"job\": 2, \"seq\": [8, 22], \"explanation\": \"job 2 overlapped itself\"}]},\n"
    "    {\"name\": \"double_complete\", \"verdict\": \"PASS\", \"opportunities\": 3,\n"
    "     \"violations_total\": 0, \"summary\": \"3 completes\", \"violations\": []},\n"
    "    {\"name\": \"no_lost_jobs\", \"verdict\": \"INCONCLUSIVE\", \"opportunities\": 0,\n"
    "     \"violations_total\": 0, \"summary\": \"no snapshot\", \"violations\": []},\n"
    "    {\"name\": \"group_order\", \"verdict\": \"NOT_APPLICABLE\", \"opportunities\": 0,\n"
    "     \"violations_total\": 0, \"summary\": \"no groups\", \"violations\": []},\n"
    "    {\"name\": \"acked_durable\", \"verdict\": \"PASS\"}\n"
    "  ],\n"
    "  \"exit_code\": 1,\n"
    "  \"verdict\": \"FAIL\",\n"
    "  \"scenario\": \"fixture\",\n"
    "  \"scenario_file\": \"scenarios/fixture.ini\",\n"
    "  \"protocol\": \"backends/postgres/skip_locked.sql\",\n"
    "  \"engine\": \"postgres\",\n"
    "  \"tested_where\": \"NOT TESTED: fixture\",\n"
    "  \"versions\": {\"qchaos\": \"0.1.0\", \"server\": \"PostgreSQL 15\"},\n"
    "  \"metrics\": {\"elapsed_s\": 3.2, \"workers\": 2, \"jobs\": 3},\n"
    "  \"command\": \"qchaos run --seed 7 --out /tmp/x scenarios/fixture.ini\"\n"
    "}\n";

/* Three jobs, two workers: claims, an empty claim, completes, a stall with
 * a window, an instant kill, a re-claim of each faulted job, monitor
 * samples, the snapshot. */
static const char ledger_jsonl[] =
    "{\"type\":\"header\",\"seed\":7,\"scenario\":\"fixture\",\"workers\":2,\"jobs\":3,"
    "\"lease_ms\":1000}\n"
    "{\"seq\":1,\"t\":10.0,\"type\":\"ok\",\"op\":\"enqueue\",\"worker\":-1,\"job\":1}\n"
    "{\"seq\":2,\"t\":10.5,\"type\":\"ok\",\"op\":\"enqueue\",\"worker\":-1,\"job\":2}\n"
    "{\"seq\":3,\"t\":11.0,\"type\":\"ok\",\"op\":\"enqueue\",\"worker\":-1,\"job\":3}\n"
    "{\"seq\":4,\"t\":100.0,\"type\":\"invoke\",\"op\":\"claim\",\"worker\":0,\"inc\":0,"
    "\"req\":1}\n"
    "{\"seq\":5,\"t\":101.5,\"type\":\"ok\",\"op\":\"claim\",\"worker\":0,\"inc\":0,\"req\":1,"
    "\"rows\":1,\"job\":1,\"token\":\"tokA\",\"now\":1000000.0,\"lease_until\":1001000.0,"
    "\"attempt\":1}\n"
    "{\"seq\":6,\"t\":150.0,\"type\":\"fault\",\"fault\":\"stall_beyond_lease\",\"job\":1,"
    "\"worker\":0,\"inc\":0,\"until_t\":1400.0}\n"
    "{\"seq\":7,\"t\":200.0,\"type\":\"invoke\",\"op\":\"claim\",\"worker\":1,\"inc\":0,"
    "\"req\":1}\n"
    "{\"seq\":8,\"t\":202.0,\"type\":\"ok\",\"op\":\"claim\",\"worker\":1,\"inc\":0,\"req\":1,"
    "\"rows\":1,\"job\":2,\"token\":\"tokB\",\"now\":1000100.0,\"lease_until\":1001100.0,"
    "\"attempt\":1}\n"
    "{\"seq\":9,\"t\":250.0,\"type\":\"fault\",\"fault\":\"kill_after_claim\",\"job\":2,"
    "\"worker\":1,\"inc\":0}\n"
    "{\"seq\":10,\"t\":300.0,\"type\":\"monitor\",\"ready\":1,\"inflight\":2,\"expired\":0,"
    "\"dead\":0,\"done\":0,\"oldest_ready_age_ms\":290}\n"
    "{\"seq\":11,\"t\":1200.0,\"type\":\"invoke\",\"op\":\"claim\",\"worker\":1,\"inc\":1,"
    "\"req\":1}\n"
    "{\"seq\":12,\"t\":1201.0,\"type\":\"ok\",\"op\":\"claim\",\"worker\":1,\"inc\":1,\"req\":1,"
    "\"rows\":2,\"job\":1,\"token\":\"tokC\",\"now\":1001050.0,\"lease_until\":1002050.0,"
    "\"attempt\":2}\n"
    "{\"seq\":13,\"t\":1201.0,\"type\":\"ok\",\"op\":\"claim\",\"worker\":1,\"inc\":1,\"req\":1,"
    "\"rows\":2,\"job\":3,\"token\":\"tokD\",\"now\":1001050.0,\"lease_until\":1002050.0,"
    "\"attempt\":1}\n"
    "{\"seq\":14,\"t\":1300.0,\"type\":\"monitor\",\"ready\":1,\"inflight\":2,\"expired\":1,"
    "\"dead\":0,\"done\":0,\"oldest_ready_age_ms\":1290}\n"
    "{\"seq\":15,\"t\":1450.0,\"type\":\"invoke\",\"op\":\"complete\",\"worker\":0,\"inc\":0,"
    "\"req\":2,\"job\":1,\"token\":\"tokA\"}\n"
    "{\"seq\":16,\"t\":1452.0,\"type\":\"ok\",\"op\":\"complete\",\"worker\":0,\"inc\":0,"
    "\"req\":2,\"job\":1,\"token\":\"tokA\",\"rows\":1}\n"
    "{\"seq\":17,\"t\":1500.0,\"type\":\"invoke\",\"op\":\"claim\",\"worker\":0,\"inc\":0,"
    "\"req\":3}\n"
    "{\"seq\":18,\"t\":1501.0,\"type\":\"ok\",\"op\":\"claim\",\"worker\":0,\"inc\":0,\"req\":3,"
    "\"rows\":1,\"job\":2,\"token\":\"tokE\",\"now\":1001400.0,\"lease_until\":1002400.0,"
    "\"attempt\":2}\n"
    "{\"seq\":19,\"t\":1600.0,\"type\":\"invoke\",\"op\":\"complete\",\"worker\":0,\"inc\":0,"
    "\"req\":4,\"job\":2,\"token\":\"tokE\"}\n"
    "{\"seq\":20,\"t\":1603.0,\"type\":\"ok\",\"op\":\"complete\",\"worker\":0,\"inc\":0,"
    "\"req\":4,\"job\":2,\"token\":\"tokE\",\"rows\":1}\n"
    "{\"seq\":21,\"t\":1700.0,\"type\":\"invoke\",\"op\":\"complete\",\"worker\":1,\"inc\":1,"
    "\"req\":2,\"job\":3,\"token\":\"tokD\"}\n"
    "{\"seq\":22,\"t\":1750.0,\"type\":\"info\",\"op\":\"complete\",\"worker\":1,\"inc\":1,"
    "\"req\":2,\"error\":\"connection lost <eof> & \\\"gone\\\"\"}\n"
    "{\"seq\":23,\"t\":1800.0,\"type\":\"invoke\",\"op\":\"complete\",\"worker\":1,\"inc\":1,"
    "\"req\":3,\"job\":3,\"token\":\"tokD\"}\n"
    "{\"seq\":24,\"t\":1801.0,\"type\":\"ok\",\"op\":\"complete\",\"worker\":1,\"inc\":1,"
    "\"req\":3,\"job\":3,\"token\":\"tokD\",\"rows\":1}\n"
    "{\"seq\":25,\"t\":2000.0,\"type\":\"invoke\",\"op\":\"claim\",\"worker\":0,\"inc\":0,"
    "\"req\":5}\n"
    "{\"seq\":26,\"t\":2000.5,\"type\":\"ok\",\"op\":\"claim\",\"worker\":0,\"inc\":0,\"req\":5,"
    "\"rows\":0}\n"
    "{\"seq\":27,\"t\":2300.0,\"type\":\"monitor\",\"ready\":0,\"inflight\":0,\"expired\":0,"
    "\"dead\":0,\"done\":3,\"oldest_ready_age_ms\":0}\n"
    "{\"seq\":28,\"t\":3000.0,\"type\":\"snapshot\",\"job\":1,\"state\":\"done\",\"attempt\":2,"
    "\"token\":\"tokC\"}\n"
    "{\"seq\":29,\"t\":3000.0,\"type\":\"snapshot\",\"job\":2,\"state\":\"done\",\"attempt\":2,"
    "\"token\":\"tokE\"}\n"
    "{\"seq\":30,\"t\":3000.0,\"type\":\"snapshot\",\"job\":3,\"state\":\"done\",\"attempt\":1,"
    "\"token\":\"tokD\"}\n"
    "{\"seq\":31,\"t\":3100.0,\"type\":\"end\",\"drained\":true}\n";

/* ---- helpers ------------------------------------------------------------ */

static void write_text(const char *dir, const char *name, const char *text)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s: %s", path, strerror(errno));
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* Returns the contents of DIR/NAME (free it), or NULL when missing. */
static char *slurp(const char *dir, const char *name)
{
    char path[4096];
    FILE *f;
    char *buf;
    long len;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)len + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
    buf[len] = '\0';
    fclose(f);
    return buf;
}

static long file_size(const char *dir, const char *name)
{
    char path[4096];
    struct stat st;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* A new run folder under /tmp holding the fixture (dir gets its name). */
static void make_run(char dir[64])
{
    snprintf(dir, 64, "/tmp/qc-report.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    write_text(dir, "results.json", results_json);
    write_text(dir, "ledger.jsonl", ledger_jsonl);
}

/* rm -r dir (the run folders are at most two levels deep). */
static void remove_run(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[4096];
    struct stat st;

    while (d != NULL && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            remove_run(path);
        else
            remove(path);
    }
    if (d != NULL)
        closedir(d);
    rmdir(dir);
}

/* Writes the report of dir; asserts success; note gets the remark. */
static void report(const char *dir, int allow_inconclusive, char *note, size_t notelen)
{
    qc_err err = {0};
    int rc = qc_report_write(dir, NULL, 0, allow_inconclusive, note, notelen, &err);

    ck_assert_msg(rc == 0, "qc_report_write: %d %s", rc, err.msg);
}

/* Looks a program up in PATH; fills path; 1 when found. */
static int find_program(const char *name, char *path, size_t n)
{
    const char *env = getenv("PATH");

    for (const char *p = env != NULL ? env : ""; *p;) {
        size_t len = strcspn(p, ":");
        snprintf(path, n, "%.*s/%s", (int)len, p, name);
        if (len > 0 && access(path, X_OK) == 0)
            return 1;
        p += len;
        if (*p == ':')
            p++;
    }
    return 0;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;

    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* The <testcase ...>...</testcase> element of checker name (free it). */
static char *testcase_of(const char *xml, const char *name)
{
    char key[128];
    const char *start, *end;
    char *out;

    snprintf(key, sizeof key, "name=\"%s\"", name);
    start = strstr(xml, key);
    ck_assert_msg(start != NULL, "no testcase %s", name);
    while (start > xml && strncmp(start, "<testcase", 9) != 0)
        start--;
    end = strstr(start, "</testcase>");
    ck_assert_ptr_nonnull(end);
    out = strndup(start, (size_t)(end - start));
    ck_assert_ptr_nonnull(out);
    return out;
}

/* A small XML 1.0 well-formedness check: matched tags, quoted attributes,
 * only the five predefined or numeric entities, no stray '<' or '&', one
 * root element.  why gets the reason when it returns 0. */
static int is_entity(const char *p)
{
    static const char *const ent[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};

    for (size_t i = 0; i < 5; i++)
        if (strncmp(p, ent[i], strlen(ent[i])) == 0)
            return 1;
    if (p[1] == '#') {
        const char *q = p + 2;
        int hex = *q == 'x';
        q += hex;
        const char *d = q;
        while (hex ? strchr("0123456789abcdefABCDEF", *q) && *q : (*q >= '0' && *q <= '9'))
            q++;
        return q > d && *q == ';';
    }
    return 0;
}

static int xml_wellformed(const char *s, char *why, size_t n)
{
    const char *stack[64];
    size_t lens[64], depth = 0, roots = 0;
    const char *p = s;

    if (strncmp(p, "<?xml", 5) == 0) {
        p = strstr(p, "?>");
        if (p == NULL)
            return snprintf(why, n, "unterminated declaration"), 0;
        p += 2;
    }
    while (*p) {
        if (*p == '&') {
            if (!is_entity(p))
                return snprintf(why, n, "bad entity at %.20s", p), 0;
            p++;
            continue;
        }
        if (*p != '<') {
            if (depth == 0 && *p != '\n' && *p != ' ')
                return snprintf(why, n, "text outside the root: %.20s", p), 0;
            p++;
            continue;
        }
        p++;
        int closing = *p == '/';
        p += closing;
        const char *name = p;
        while (*p && strchr(" \t\n/>", *p) == NULL)
            p++;
        size_t len = (size_t)(p - name);
        if (len == 0 || strchr("!?", name[0]) != NULL)
            return snprintf(why, n, "bad tag at %.20s", name), 0;
        if (closing) {
            if (depth == 0 || lens[depth - 1] != len || strncmp(stack[depth - 1], name, len))
                return snprintf(why, n, "mismatched </%.*s>", (int)len, name), 0;
            depth--;
            while (*p == ' ')
                p++;
            if (*p++ != '>')
                return snprintf(why, n, "bad end tag %.*s", (int)len, name), 0;
            continue;
        }
        for (;;) { /* attributes */
            while (*p == ' ' || *p == '\n' || *p == '\t')
                p++;
            if (*p == '>' || (p[0] == '/' && p[1] == '>'))
                break;
            while (*p && *p != '=' && *p != ' ' && *p != '>')
                p++;
            if (p[0] != '=' || p[1] != '"')
                return snprintf(why, n, "unquoted attribute in <%.*s>", (int)len, name), 0;
            for (p += 2; *p != '"'; p++) {
                if (*p == '\0' || *p == '<')
                    return snprintf(why, n, "bad attribute value in <%.*s>", (int)len, name), 0;
                if (*p == '&' && !is_entity(p))
                    return snprintf(why, n, "bad entity in <%.*s>", (int)len, name), 0;
            }
            p++;
        }
        if (depth == 0 && ++roots > 1)
            return snprintf(why, n, "more than one root element"), 0;
        if (*p == '/') {
            p += 2;
            continue;
        }
        p++;
        if (depth == 64)
            return snprintf(why, n, "too deep"), 0;
        stack[depth] = name;
        lens[depth++] = len;
    }
    if (depth != 0 || roots != 1)
        return snprintf(why, n, "%zu unclosed element(s), %zu root(s)", depth, roots), 0;
    return 1;
}

static void assert_junit_wellformed(const char *dir)
{
    char *xml = slurp(dir, "junit.xml"), why[256] = "", xmllint[4096], cmd[8192];

    ck_assert_ptr_nonnull(xml);
    ck_assert_msg(xml_wellformed(xml, why, sizeof why), "junit.xml is not well-formed: %s", why);
    if (find_program("xmllint", xmllint, sizeof xmllint)) {
        snprintf(cmd, sizeof cmd, "'%s' --noout '%s/junit.xml'", xmllint, dir);
        ck_assert_msg(system(cmd) == 0, "xmllint rejects %s/junit.xml", dir);
    }
    free(xml);
}

/* ---- junit.xml ------------------------------------------------------------- */

/* qc__select_kth gives what a sort would put at k: sizes 1..2000, many
 * equal values, sorted and reversed input, every k of small arrays. */
static int cmp_double_test(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

START_TEST(test_select_kth_as_sort)
{
    enum { N = 2000 };
    static double a[N], s[N];
    uint64_t x = 0x9E3779B97F4A7C15ull;

    for (int round = 0; round < 60; round++) {
        size_t n = round < 20 ? (size_t)round + 1 : (size_t)(x % N) + 1;
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            a[i] = round % 3 == 0 ? (double)(x % 4) : (double)(int64_t)(x >> 11) / 1e3;
            if (round % 5 == 1)
                a[i] = (double)i; /* sorted */
            if (round % 5 == 2)
                a[i] = -(double)i; /* reversed */
        }
        memcpy(s, a, n * sizeof *a);
        qsort(s, n, sizeof *s, cmp_double_test);
        size_t ks[3] = {0, n / 2, n - 1};
        for (size_t q = 0; q < (n <= 20 ? n : 3); q++) {
            size_t k = n <= 20 ? q : ks[q];
            double b[N];
            memcpy(b, a, n * sizeof *a);
            ck_assert_msg(qc__select_kth(b, n, k) == s[k], "round %d n %zu k %zu", round, n, k);
        }
    }
}
END_TEST

START_TEST(test_junit_fixture_run_wellformed_one_testcase_per_checker)
{
    char dir[64];
    make_run(dir);
    report(dir, 0, NULL, 0);
    assert_junit_wellformed(dir);
    char *xml = slurp(dir, "junit.xml");
    ck_assert_uint_eq(count(xml, "<testsuite "), 1);
    ck_assert_uint_eq(count(xml, "<testcase "), 5);
    for (size_t i = 0; i < 5; i++) {
        static const char *const names[] = {"exclusive_claim", "double_complete", "no_lost_jobs",
                                            "group_order", "acked_durable"};
        free(testcase_of(xml, names[i]));
    }
    ck_assert_ptr_nonnull(strstr(xml, "tests=\"5\" failures=\"2\" errors=\"0\" skipped=\"1\""));
    ck_assert_ptr_nonnull(strstr(xml, "<property name=\"seed\" value=\"7\"/>"));
    ck_assert_ptr_nonnull(
        strstr(xml, "<property name=\"tested_where\" value=\"NOT TESTED: fixture\"/>"));
    free(xml);
    remove_run(dir);
}
END_TEST

START_TEST(test_junit_fail_verdict_failure_with_escaped_evidence)
{
    char dir[64];
    make_run(dir);
    report(dir, 0, NULL, 0);
    char *xml = slurp(dir, "junit.xml");
    char *tc = testcase_of(xml, "exclusive_claim");
    ck_assert_ptr_nonnull(strstr(tc, "<failure type=\"FAIL\""));
    ck_assert_msg(strstr(tc, "two live leases on job 1: " NASTY_ESCAPED) != NULL, "%s", tc);
    ck_assert_ptr_nonnull(strstr(tc, "job 2 overlapped itself"));
    /* The evidence: each cited ledger event, in plain words. */
    ck_assert_ptr_nonnull(strstr(tc, "seq 5 at 101.5 ms: worker 0 (incarnation 0)&#39;s claim "
                                     "of job 1 with token tokA was acknowledged"));
    ck_assert_ptr_nonnull(strstr(tc, "seq 12 at 1201.0 ms: worker 1 (incarnation 1)"));
    ck_assert_ptr_null(strstr(xml, "<script>"));
    free(tc);
    tc = testcase_of(xml, "double_complete");
    ck_assert_ptr_null(strstr(tc, "<failure"));
    ck_assert_ptr_null(strstr(tc, "<skipped"));
    free(tc);
    free(xml);
    remove_run(dir);
}
END_TEST

START_TEST(test_junit_inconclusive_without_allow_failure)
{
    char dir[64];
    make_run(dir);
    report(dir, 0, NULL, 0);
    char *xml = slurp(dir, "junit.xml");
    char *tc = testcase_of(xml, "no_lost_jobs");
    ck_assert_ptr_nonnull(strstr(tc, "<failure type=\"INCONCLUSIVE\""));
    ck_assert_ptr_null(strstr(tc, "<skipped"));
    free(tc);
    free(xml);
    remove_run(dir);
}
END_TEST

START_TEST(test_junit_inconclusive_with_allow_skipped)
{
    char dir[64];
    make_run(dir);
    report(dir, 1, NULL, 0);
    assert_junit_wellformed(dir);
    char *xml = slurp(dir, "junit.xml");
    char *tc = testcase_of(xml, "no_lost_jobs");
    ck_assert_ptr_nonnull(strstr(
        tc, "<skipped message=\"inconclusive (allowed by --allow-inconclusive): no snapshot\""));
    ck_assert_ptr_null(strstr(tc, "<failure"));
    ck_assert_ptr_nonnull(strstr(xml, "tests=\"5\" failures=\"1\" errors=\"0\" skipped=\"2\""));
    free(tc);
    free(xml);
    remove_run(dir);
}
END_TEST

START_TEST(test_junit_not_applicable_skipped)
{
    char dir[64];
    make_run(dir);
    report(dir, 0, NULL, 0);
    char *xml = slurp(dir, "junit.xml");
    char *tc = testcase_of(xml, "group_order");
    ck_assert_ptr_nonnull(strstr(tc, "<skipped message=\"not applicable: no groups\"/>"));
    ck_assert_ptr_null(strstr(tc, "<failure"));
    free(tc);
    free(xml);
    remove_run(dir);
}
END_TEST

START_TEST(test_junit_unknown_verdict_error_not_pass)
{
    char dir[64], *json;
    make_run(dir);
    json = strdup(results_json);
    ck_assert_ptr_nonnull(json);
    memcpy(strstr(json, "\"NOT_APPLICABLE\""), "\"MAYBE_LATER___\"", 16);
    write_text(dir, "results.json", json);
    report(dir, 0, NULL, 0);
    assert_junit_wellformed(dir);
    char *xml = slurp(dir, "junit.xml");
    char *tc = testcase_of(xml, "group_order");
    ck_assert_ptr_nonnull(strstr(tc, "<error type=\"UNKNOWN_VERDICT\""));
    free(tc);
    free(xml);
    free(json);
    remove_run(dir);
}
END_TEST

/* ---- report.md / report.html ---------------------------------------------- */

/* A checker the scenario does not judge is shown as information: its
 * INCONCLUSIVE is not bold, carries "(info)", and gets no "proves nothing"
 * paragraph; a judged one keeps both. */
START_TEST(test_markdown_unjudged_inconclusive_is_info)
{
    char dir[64];
    make_run(dir);
    char *json = strdup(results_json);
    ck_assert_ptr_nonnull(json);
    const char *from = "{\"name\": \"no_lost_jobs\", \"verdict\": \"INCONCLUSIVE\",";
    char *at = strstr(json, from);
    ck_assert_ptr_nonnull(at);
    size_t n = strlen(json) + 32;
    char *edited = malloc(n);
    ck_assert_ptr_nonnull(edited);
    snprintf(edited, n,
             "%.*s{\"name\": \"no_lost_jobs\", \"judged\": false, \"verdict\": "
             "\"INCONCLUSIVE\",%s",
             (int)(at - json), json, at + strlen(from));
    write_text(dir, "results.json", edited);
    report(dir, 0, NULL, 0);
    char *md = slurp(dir, "report.md");
    ck_assert_ptr_nonnull(md);
    ck_assert_msg(strstr(md, "| no_lost_jobs | INCONCLUSIVE (info) | 0 |") != NULL, "%s", md);
    ck_assert_ptr_null(strstr(md, "**no_lost_jobs** is INCONCLUSIVE"));
    /* the judged checkers first, as in the terminal's table: no_lost_jobs
     * (third in results.json) comes after acked_durable (the last) */
    ck_assert_msg(strstr(md, "| acked_durable |") < strstr(md, "| no_lost_jobs |"), "%s", md);
    ck_assert(strstr(md, "| exclusive_claim |") < strstr(md, "| double_complete |"));
    char *html = slurp(dir, "report.html");
    ck_assert_ptr_nonnull(html);
    ck_assert_ptr_nonnull(strstr(html, "INCONCLUSIVE</span> (info)</td>"));
    ck_assert(strstr(html, "<td>acked_durable</td>") != NULL &&
              strstr(html, "<td>acked_durable</td>") < strstr(html, "<td>no_lost_jobs</td>"));
    free(html);
    free(md);
    free(edited);
    free(json);
    remove_run(dir);
}
END_TEST

START_TEST(test_markdown_fixture_run_verdict_table_first_then_sections)
{
    char dir[64];
    make_run(dir);
    report(dir, 0, NULL, 0);
    char *md = slurp(dir, "report.md");
    ck_assert_ptr_nonnull(md);
    /* Title line, blank line, then the verdict table. */
    const char *second = strchr(md, '\n');
    ck_assert_ptr_nonnull(second);
    ck_assert_msg(strncmp(second, "\n\n| checker | verdict |", 22) == 0, "%.200s", md);
    ck_assert_ptr_nonnull(strstr(md, "| exclusive_claim | **FAIL** | 4 | 2 |"));
    ck_assert_ptr_nonnull(strstr(md, "| double_complete | PASS | 3 | 0 |"));
    ck_assert_ptr_nonnull(strstr(md, "exit code 1; protocol tested: NOT TESTED: fixture"));
    const char *viol = strstr(md, "\n## Violations\n");
    const char *plots = strstr(md, "\n## Plots\n");
    const char *repeat = strstr(md, "\n## Repeat this run\n");
    ck_assert_ptr_nonnull(viol);
    ck_assert_ptr_nonnull(plots);
    ck_assert_ptr_nonnull(repeat);
    ck_assert(strstr(md, "| acked_durable |") < viol);
    ck_assert(viol < plots && plots < repeat);
    /* Each violation with its evidence, in plain words. */
    const char *ev = strstr(viol, "### exclusive_claim: the first of 2 violations, job 1");
    ck_assert_ptr_nonnull(ev);
    ck_assert(ev < plots);
    ck_assert_ptr_nonnull(strstr(viol, "- seq 5 at 101.5 ms: worker 0 (incarnation 0)'s claim"));
    ck_assert_ptr_nonnull(strstr(viol, "**no_lost_jobs** is INCONCLUSIVE"));
    /* The exact command and the seed, last. */
    ck_assert_ptr_nonnull(
        strstr(repeat, "\n    qchaos run --seed 7 --out /tmp/x scenarios/fixture.ini\n"));
    ck_assert_ptr_nonnull(strstr(repeat, "Seed: 7"));
    free(md);
    remove_run(dir);
}
END_TEST

START_TEST(test_html_fixture_run_self_contained)
{
    char dir[64], gp[4096];
    make_run(dir);
    report(dir, 0, NULL, 0);
    char *html = slurp(dir, "report.html");
    ck_assert_ptr_nonnull(html);
    ck_assert_ptr_null(strstr(html, "src=\"http"));
    ck_assert_ptr_null(strstr(html, "href=\"http"));
    ck_assert_ptr_null(strstr(html, "<link"));
    ck_assert_ptr_null(strstr(html, "<script"));
    ck_assert_ptr_null(strstr(html, "url("));
    ck_assert_ptr_nonnull(strstr(html, "<style>"));
    /* Every image is embedded. */
    size_t imgs = count(html, "<img "), data = count(html, "<img alt=");
    ck_assert_uint_eq(imgs, data);
    ck_assert_uint_eq(count(html, "src=\""), count(html, "src=\"data:image/png;base64,"));
    if (find_program("gnuplot", gp, sizeof gp))
        ck_assert_uint_eq(count(html, "src=\"data:image/png;base64,iVBORw0KGgo"), 5);
    /* Verdict table before the violations, the command last. */
    const char *table = strstr(html, "<table id=\"verdicts\">");
    const char *viol = strstr(html, "<h2 id=\"violations\">Violations</h2>");
    const char *plots = strstr(html, "<h2 id=\"plots\">Plots</h2>");
    const char *cmd = strstr(html, "<pre id=\"command\"><code>qchaos run --seed 7");
    ck_assert(table != NULL && viol != NULL && plots != NULL && cmd != NULL);
    ck_assert(table < viol && viol < plots && plots < cmd);
    free(html);
    remove_run(dir);
}
END_TEST

START_TEST(test_escape_script_message_escaped_everywhere)
{
    char dir[64];
    make_run(dir);
    report(dir, 0, NULL, 0);
    char *html = slurp(dir, "report.html"), *md = slurp(dir, "report.md");
    char *xml = slurp(dir, "junit.xml");
    ck_assert_ptr_nonnull(strstr(html, "two live leases on job 1: " NASTY_ESCAPED));
    ck_assert_ptr_null(strstr(html, NASTY));
    /* The ledger's error text is escaped too. */
    ck_assert_ptr_nonnull(strstr(html, "connection lost &lt;eof&gt; &amp; &quot;gone&quot;"));
    ck_assert_ptr_nonnull(strstr(xml, "connection lost &lt;eof&gt; &amp; &quot;gone&quot;"));
    ck_assert_ptr_nonnull(strstr(md, "connection lost \\<eof\\> \\& \"gone\""));
    /* No '<' in report.md that Markdown could read as the start of a tag. */
    for (const char *lt = strchr(md, '<'); lt != NULL; lt = strchr(lt + 1, '<'))
        ck_assert_msg(lt > md && lt[-1] == '\\', "raw '<' in report.md: %.30s", lt);
    ck_assert_ptr_nonnull(strstr(md, "two live leases on job 1: \\<script\\>alert(1)\\</script\\>"
                                     "\\&\"'"));
    ck_assert_ptr_nonnull(strstr(xml, NASTY_ESCAPED));
    free(html);
    free(md);
    free(xml);
    remove_run(dir);
}
END_TEST

/* ---- plots ------------------------------------------------------------------ */

START_TEST(test_plots_no_gnuplot_in_path_succeeds_note_says_skipped)
{
    char dir[64], empty[128], note[256] = "x";
    make_run(dir);
    snprintf(empty, sizeof empty, "%s/emptybin", dir);
    ck_assert_int_eq(mkdir(empty, 0755), 0);
    char *path = getenv("PATH") != NULL ? strdup(getenv("PATH")) : NULL;
    ck_assert_int_eq(setenv("PATH", empty, 1), 0);
    report(dir, 0, note, sizeof note);
    /* Restored for the tests that follow when run without fork (CK_FORK=no). */
    if (path != NULL)
        setenv("PATH", path, 1);
    free(path);
    ck_assert_msg(strstr(note, "plots skipped") != NULL, "note: %s", note);
    ck_assert_ptr_null(strchr(note, '\n'));
    char *md = slurp(dir, "report.md"), *html = slurp(dir, "report.html");
    ck_assert_ptr_nonnull(strstr(md, "plots skipped: gnuplot not found"));
    ck_assert_ptr_nonnull(strstr(html, "plots skipped: gnuplot not found"));
    ck_assert_ptr_null(strstr(html, "data:image"));
    ck_assert_int_lt(file_size(dir, "plots/throughput.png"), 0);
    /* Data and scripts are still there, for a later `gnuplot NAME.gp`. */
    ck_assert_int_gt(file_size(dir, "plots/throughput.dat"), 0);
    ck_assert_int_gt(file_size(dir, "plots/throughput.gp"), 0);
    ck_assert_int_gt(file_size(dir, "junit.xml"), 0);
    free(md);
    free(html);
    remove_run(dir);
}
END_TEST

START_TEST(test_plots_gnuplot_installed_png_and_svg_nonempty)
{
    /* The fixture has no idle streak (one empty claim): no idle plot. */
    static const char *const names[] = {"throughput", "latency", "latency_time", "queue_depth",
                                        "recovery"};
    char dir[64], gp[4096], note[256] = "x", file[64];
    if (!find_program("gnuplot", gp, sizeof gp)) {
        fprintf(stderr, "check_reports: SKIP test_plots_gnuplot_installed_png_and_svg_nonempty: "
                        "gnuplot is not installed\n");
        return;
    }
    make_run(dir);
    report(dir, 0, note, sizeof note);
    ck_assert_msg(note[0] == '\0', "note: %s", note);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(file, sizeof file, "plots/%s.png", names[i]);
        ck_assert_msg(file_size(dir, file) > 0, "%s missing or empty", file);
        snprintf(file, sizeof file, "plots/%s.svg", names[i]);
        ck_assert_msg(file_size(dir, file) > 0, "%s missing or empty", file);
    }
    /* The stall window and the instant kill, each in its kind's block, and
     * both violations in their checker's block. */
    char *dat = slurp(dir, "plots/throughput.dat"), *g = slurp(dir, "plots/throughput.gp");
    const char *win = strstr(dat, "# faults stall_beyond_lease");
    const char *inst = strstr(dat, "# faults kill_after_claim");
    const char *viol = strstr(dat, "# violations of exclusive_claim");
    ck_assert(win != NULL && inst != NULL && viol != NULL);
    ck_assert_ptr_nonnull(strstr(win, "\n0.150 1.400\n"));
    ck_assert_ptr_nonnull(strstr(inst, "\n0.250 0.250\n"));
    /* At the time of their first seq: 5 (101.5 ms) and 8 (202 ms). */
    ck_assert(strstr(viol, "\n0.101\n") != NULL || strstr(viol, "\n0.102\n") != NULL);
    ck_assert_ptr_nonnull(strstr(viol, "\n0.202\n"));
    /* one row per fault kind and per failing checker, one colour each */
    ck_assert_ptr_nonnull(strstr(g, "\"stall_beyond_lease (1)\""));
    ck_assert_ptr_nonnull(strstr(g, "\"kill_after_claim (1)\""));
    ck_assert_ptr_nonnull(strstr(g, "\"exclusive_claim (2)\""));
    ck_assert_ptr_nonnull(strstr(g, "lc rgb \"#674ea7\""));
    ck_assert_ptr_nonnull(strstr(g, "lc rgb \"#cc0000\""));
    /* the phases: setup + enqueue until the first claim (100 ms) */
    ck_assert_ptr_nonnull(strstr(g, "set object 1 rect from 0,graph 0 to 0.100,graph 1"));
    ck_assert_ptr_nonnull(strstr(g, "\"snapshot\" at 3.000"));
    free(dat);
    free(g);
    /* Recovery: job 1 after 1051 ms, job 2 after 1251 ms. */
    char *md = slurp(dir, "report.md");
    ck_assert_ptr_nonnull(strstr(md, "Faults the recovery checker judges: 2, recovery time "
                                     "measured for 2 (p50 1051 ms, max 1251 ms)."));
    free(md);
    remove_run(dir);
}
END_TEST

START_TEST(test_plots_no_fault_recovery_skipped_with_note)
{
    char dir[64], note[256];
    make_run(dir);
    /* The fixture without its fault lines. */
    char *l = strdup(ledger_jsonl), *out = calloc(1, sizeof ledger_jsonl);
    ck_assert(l != NULL && out != NULL);
    for (char *line = strtok(l, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        if (strstr(line, "\"fault\"") != NULL)
            continue;
        strcat(out, line);
        strcat(out, "\n");
    }
    write_text(dir, "ledger.jsonl", out);
    report(dir, 0, note, sizeof note);
    char *md = slurp(dir, "report.md");
    ck_assert_ptr_nonnull(
        strstr(md, "recovery-time histogram skipped: no fault left a job without its owner"));
    ck_assert_int_lt(file_size(dir, "plots/recovery.gp"), 0);
    free(md);
    free(l);
    free(out);
    remove_run(dir);
}
END_TEST

START_TEST(test_history_monitor_and_until_t_fields_parsed)
{
    qc_history h = {0};
    qc_err err = {0};
    ck_assert_int_eq(qc_history_parse(&h, ledger_jsonl, &err), 0);
    const qc_event *m = qc__report_find_seq(&h, 14), *f = qc__report_find_seq(&h, 6);
    const qc_event *k = qc__report_find_seq(&h, 9), *o = qc__report_find_seq(&h, 5);
    ck_assert(m != NULL && f != NULL && k != NULL && o != NULL);
    ck_assert_int_eq(qc_x(m->x)->ready, 1);
    ck_assert_int_eq(qc_x(m->x)->inflight, 2);
    ck_assert_int_eq(qc_x(m->x)->expired, 1);
    ck_assert_int_eq(qc_x(m->x)->dead, 0);
    ck_assert_int_eq(qc_x(m->x)->done, 0);
    ck_assert_double_eq(qc_x(m->x)->oldest_ready_age_ms, 1290.0);
    ck_assert_double_eq(qc_x(f->x)->until_t, 1400.0);
    ck_assert_double_eq(qc_x(k->x)->until_t, QC_NO_TIME);
    ck_assert_int_eq(qc_x(o->x)->ready, -1);
    ck_assert_double_eq(qc_x(o->x)->oldest_ready_age_ms, -1.0);
    qc_history_fini(&h);
}
END_TEST

/* ---- rendering ---------------------------------------------------------------- */

/* Renders DIR/report.html with headless Chromium at 1280 px into DIR/NAME
 * and checks that a PNG came out.  Chromium is a test dependency
 * (scripts/install-deps.sh installs it): its absence fails the test. */
static void screenshot(const char *dir, const char *name)
{
    char chromium[4096], cmd[16384], prof[128];
    static const char *const names[] = {"chromium", "chromium-browser", "google-chrome"};
    int found = 0;

    for (size_t i = 0; i < 3 && !found; i++)
        found = find_program(names[i], chromium, sizeof chromium);
    ck_assert_msg(found, "chromium is not installed: run scripts/install-deps.sh");
    snprintf(prof, sizeof prof, "%s/profile", dir);
    ck_assert_int_eq(mkdir(prof, 0700), 0);
    snprintf(cmd, sizeof cmd,
             "timeout 90 '%s' --headless --no-sandbox --disable-gpu "
             "--disable-background-networking --disable-component-update --disable-sync "
             "--no-first-run --hide-scrollbars --user-data-dir='%s' --screenshot='%s/%s' "
             "--window-size=1280,2400 'file://%s/report.html' >/dev/null 2>&1",
             chromium, prof, dir, name, dir);
    ck_assert_int_eq(system(cmd), 0);
    char *png = slurp(dir, name);
    ck_assert_ptr_nonnull(png);
    ck_assert_int_eq(memcmp(png, "\x89PNG\r\n\x1a\n", 8), 0);
    ck_assert_int_gt(file_size(dir, name), 10000);
    free(png);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", prof);
    ck_assert_int_eq(system(cmd), 0);
}

/* ---- the timeline of a violation -------------------------------------------- */

/* The text of the HTML card of checker's first (or widest) violation, up
 * to the next card or section (free it); the test fails when missing. */
static char *card(const char *html, const char *checker, const char *which)
{
    char id[128];
    snprintf(id, sizeof id, "<div class=\"violation\" id=\"%s-%s\">", checker, which);
    const char *a = strstr(html, id);
    ck_assert_msg(a != NULL, "no card %s", id);
    const char *b = strstr(a + 1, "<div class=\"violation\"");
    const char *c = strstr(a, "<h2");
    if (b == NULL || (c != NULL && c < b))
        b = c;
    size_t n = b != NULL ? (size_t)(b - a) : strlen(a);
    char *out = strndup(a, n);
    ck_assert_ptr_nonnull(out);
    return out;
}

START_TEST(test_timeline_fixture_violation_names_its_seqs)
{
    char dir[64];
    make_run(dir);
    report(dir, 0, NULL, 0);
    char *html = slurp(dir, "report.html"), *md = slurp(dir, "report.md");
    char *c = card(html, "exclusive_claim", "first");
    /* violation 1: job 1, claims seq 5 (worker 0.0) and seq 12 (worker 1.1) */
    ck_assert_ptr_nonnull(strstr(c, "<h3>exclusive_claim: the first of 2 violations, job 1</h3>"));
    ck_assert_ptr_nonnull(strstr(c, "<svg class=\"timeline\""));
    ck_assert_ptr_nonnull(strstr(c, ">worker 0 (incarnation 0)</text>"));
    ck_assert_ptr_nonnull(strstr(c, ">worker 1 (incarnation 1)</text>"));
    ck_assert_ptr_nonnull(
        strstr(c, "<title>seq 4 at 100.0 ms: worker 0 (incarnation 0) sent claim"));
    ck_assert_ptr_nonnull(
        strstr(c, "\nseq 5 at 101.5 ms: worker 0 (incarnation 0)&#39;s claim of job 1"));
    ck_assert_ptr_nonnull(
        strstr(c, "\nseq 12 at 1201.0 ms: worker 1 (incarnation 1)&#39;s claim of job 1"));
    /* each claim's lease, the stall fault on job 1 and the owner's complete */
    ck_assert_ptr_nonnull(strstr(c, "lease of claim 5 until"));
    ck_assert_ptr_nonnull(strstr(c, "lease of claim 12 until"));
    ck_assert_ptr_nonnull(strstr(
        c, "<title>seq 6 at 150.0 ms: the harness injected fault stall_beyond_lease on job 1"));
    ck_assert_ptr_nonnull(
        strstr(c, "\nseq 16 at 1452.0 ms: worker 0 (incarnation 0)&#39;s complete of job 1"));
    /* nothing of job 2 (its claim is seq 8, worker 1 incarnation 0) */
    ck_assert_ptr_null(strstr(c, "seq 8 at"));
    ck_assert_ptr_null(strstr(c, ">worker 1 (incarnation 0)</text>"));
    /* the cited seqs are outlined; the Markdown table marks them bold */
    ck_assert_uint_ge(count(c, "stroke=\"#000\" stroke-width=\"2\""), 2);
    const char *mc = strstr(md, "### exclusive_claim: the first of 2 violations, job 1");
    ck_assert_ptr_nonnull(mc);
    ck_assert_ptr_nonnull(
        strstr(mc, "| **4 - 5** | worker 0 (incarnation 0) | 100.0 - 101.5 (ok) |"));
    ck_assert_ptr_nonnull(strstr(mc, "| **11 - 12** | worker 1 (incarnation 1) |"));
    /* the second card is violation 2 (the widest), of job 2 */
    char *w = card(html, "exclusive_claim", "widest");
    ck_assert_ptr_nonnull(strstr(w, "of 2 violations, job 2</h3>"));
    ck_assert_ptr_nonnull(strstr(w, "\nseq 8 at 202.0 ms"));
    free(w);
    free(c);
    free(html);
    free(md);
    remove_run(dir);
}
END_TEST

START_TEST(test_explain_raw_epoch_shown_relative)
{
    char buf[256];

    /* group_order writes "server time <epoch ms>": the report shows it on
     * the run's clock; small numbers and words stay as they are */
    qc__report_explain("seq 17 (server time 1796137582472) until 1796137587472.6 ms, 12 rows, "
                       "token a1796137582472",
                       1796137580000.0, buf, sizeof buf);
    ck_assert_str_eq(buf, "seq 17 (server +2472 ms) until +7473 ms, 12 rows, token a1796137582472");
    qc__report_explain("server time 1796137582472", QC_NO_TIME, buf, sizeof buf);
    ck_assert_str_eq(buf, "server time 1796137582472");
    qc__report_explain("server time 1796137582472", 1796137580000.0, buf, 8);
    ck_assert_uint_lt(strlen(buf), 8);
}
END_TEST

/* ---- reports of real runs ------------------------------------------------------ */

/* Runs qchaos (the binary under test: QC_QCHAOS_BIN or ./qchaos) with args
 * into dir, on QC_TEST_DSN when set (else qchaos starts its own ephemeral
 * server); returns its exit code. */
static int qchaos_run(const char *dir, const char *args)
{
    /* the log goes beside the folder; remove_run(dir) does not take it */
    char cmd[8192];
    const char *bin = getenv("QC_QCHAOS_BIN"), *dsn = getenv("QC_TEST_DSN");

    snprintf(cmd, sizeof cmd, "%s run %s --out '%s' --force --no-progress%s%s%s >'%s.log' 2>&1",
             bin != NULL && *bin ? bin : "./qchaos", args, dir,
             dsn != NULL && *dsn ? " --dsn '" : "", dsn != NULL && *dsn ? dsn : "",
             dsn != NULL && *dsn ? "'" : "", dir);
    int st = system(cmd);
    ck_assert_msg(WIFEXITED(st), "qchaos died: %s", cmd);
    return WEXITSTATUS(st);
}

/* The ledger's fault plan: planned and fired per kind (kinds[k], up to
 * 16), and the first 7 digits of the smallest server time (an epoch ms
 * prefix no report may show). */
typedef struct ledger_facts {
    char kind[16][48];
    long planned[16], fired[16];
    size_t n;
    char epoch_prefix[16];
} ledger_facts;

static size_t facts_kind(ledger_facts *lf, const char *k)
{
    for (size_t i = 0; i < lf->n; i++)
        if (strcmp(lf->kind[i], k) == 0)
            return i;
    ck_assert_uint_lt(lf->n, 16);
    snprintf(lf->kind[lf->n], sizeof lf->kind[0], "%s", k);
    lf->planned[lf->n] = -1;
    lf->fired[lf->n] = 0;
    return lf->n++;
}

static void read_ledger_facts(const char *dir, ledger_facts *lf)
{
    char path[256];
    FILE *f;
    char *line = NULL;
    size_t cap = 0;
    double min_now = 0;

    memset(lf, 0, sizeof *lf);
    snprintf(path, sizeof path, "%s/ledger.jsonl", dir);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    while (getline(&line, &cap, f) > 0) {
        json_t *e = json_loads(line, 0, NULL);
        ck_assert_ptr_nonnull(e);
        const char *type = json_string_value(json_object_get(e, "type"));
        const char *fault = json_string_value(json_object_get(e, "fault"));
        const char *note = json_string_value(json_object_get(e, "note"));
        json_t *now = json_object_get(e, "now");
        if (json_is_number(now) && (min_now == 0 || json_number_value(now) < min_now))
            min_now = json_number_value(now);
        if (type != NULL && fault != NULL && strcmp(type, "fault") == 0)
            lf->fired[facts_kind(lf, fault)]++;
        else if (type != NULL && fault != NULL && note != NULL && strcmp(note, "fault plan") == 0)
            lf->planned[facts_kind(lf, fault)] =
                (long)json_integer_value(json_object_get(e, "planned"));
        json_decref(e);
    }
    free(line);
    fclose(f);
    ck_assert_msg(min_now > 1e12, "the ledger has no server time");
    snprintf(lf->epoch_prefix, sizeof lf->epoch_prefix, "%.0f", floor(min_now / 1e6));
}

static void assert_no_raw_epoch(const char *dir, const ledger_facts *lf)
{
    static const char *const files[] = {"report.md", "report.html", "junit.xml"};
    for (size_t i = 0; i < 3; i++) {
        char *t = slurp(dir, files[i]);
        ck_assert_ptr_nonnull(t);
        const char *hit = strstr(t, lf->epoch_prefix);
        ck_assert_msg(hit == NULL, "%s shows a raw epoch time: ...%.60s", files[i],
                      hit != NULL ? hit : "");
        free(t);
    }
}

START_TEST(test_report_chaos_run_fault_plan_description_bounds)
{
    char dir[64], row[256];
    ledger_facts lf;

    snprintf(dir, sizeof dir, "/tmp/qc-report-chaos.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    /* chaos.ini is a load test, not a gate: its faults fire at a time,
     * so a stale request may not happen (stale_token_rejected
     * INCONCLUSIVE, exit 4).  The report is under test here, not the
     * verdict; no violation is allowed either way. */
    int rc = qchaos_run(dir, "chaos --seed 42 --jobs 1000");
    ck_assert_msg(rc == 0 || rc == 4, "chaos run exit %d", rc);
    read_ledger_facts(dir, &lf);
    ck_assert_uint_ge(lf.n, 6); /* six client-side kinds, and the nemesis */
    json_error_t je;
    char path[256];
    snprintf(path, sizeof path, "%s/results.json", dir);
    json_t *r = json_load_file(path, 0, &je), *plan, *x;
    ck_assert_ptr_nonnull(r);
    plan = json_object_get(json_object_get(r, "tested"), "fault_plan");
    ck_assert_uint_eq(json_array_size(plan), lf.n);
    char *html = slurp(dir, "report.html"), *md = slurp(dir, "report.md");
    size_t i;
    json_array_foreach(plan, i, x)
    {
        const char *kind = json_string_value(json_object_get(x, "kind"));
        const char *spec = json_string_value(json_object_get(x, "spec"));
        size_t k = facts_kind(&lf, kind);
        ck_assert_uint_lt(k, 16);
        ck_assert_int_eq(json_integer_value(json_object_get(x, "fired")), lf.fired[k]);
        if (lf.planned[k] >= 0)
            ck_assert_int_eq(json_integer_value(json_object_get(x, "planned")), lf.planned[k]);
        else
            ck_assert(json_is_null(json_object_get(x, "planned")));
        ck_assert_int_gt(lf.fired[k], 0);
        /* the same numbers in both reports */
        if (lf.planned[k] >= 0)
            snprintf(row, sizeof row,
                     "<tr><td>%s</td><td>%s</td><td class=\"num\">%ld</td><td "
                     "class=\"num\">%ld</td></tr>",
                     kind, spec, lf.planned[k], lf.fired[k]);
        else
            snprintf(
                row, sizeof row,
                "<tr><td>%s</td><td>%s</td><td class=\"num\">-</td><td class=\"num\">%ld</td></tr>",
                kind, spec, lf.fired[k]);
        ck_assert_msg(strstr(html, row) != NULL, "report.html lacks %s", row);
        if (lf.planned[k] >= 0)
            snprintf(row, sizeof row, "| %s | %s | %ld | %ld |", kind, spec, lf.planned[k],
                     lf.fired[k]);
        else
            snprintf(row, sizeof row, "| %s | %s | - | %ld |", kind, spec, lf.fired[k]);
        ck_assert_msg(strstr(md, row) != NULL, "report.md lacks %s", row);
    }
    /* the scenario's description; its lease, bounds */
    static const char desc[] = "every client-side fault at once (kills, stalls, lost acks and "
                               "requests, poison) and a worker session terminated every 500 ms";
    ck_assert_ptr_nonnull(strstr(html, desc));
    ck_assert_ptr_nonnull(strstr(md, desc));
    ck_assert_ptr_nonnull(strstr(html, "<tr><td>lease</td><td class=\"num\">1500 ms</td></tr>"));
    ck_assert_ptr_nonnull(strstr(html, "<tr><td>recovery bound (lease + reaper interval + "
                                       "slack)</td><td class=\"num\">4700 ms</td></tr>"));
    ck_assert_ptr_nonnull(strstr(html, "<details id=\"glossary\">"));
    /* the bounds are drawn where the checkers apply them */
    char *idle = slurp(dir, "plots/idle_polls.gp"), *rec = slurp(dir, "plots/recovery.gp");
    ck_assert_ptr_nonnull(idle);
    ck_assert_ptr_nonnull(rec);
    ck_assert_ptr_nonnull(
        strstr(idle, "12.5000 with lines lw 2 lc rgb \"#cc0000\" title \"R = 12.5/s"));
    ck_assert_ptr_nonnull(strstr(idle, "(ceil(D x R) + 2 + 6) / D"));
    ck_assert_ptr_nonnull(strstr(rec, "set arrow 1 from 4700,graph 0 to 4700,graph 1"));
    ck_assert_ptr_nonnull(
        strstr(rec, "bound 4700 ms = lease 1500 + reaper interval 200 + slack 3000"));
    ck_assert_int_gt(file_size(dir, "plots/idle_polls.png"), 0);
    ck_assert_int_gt(file_size(dir, "plots/recovery.png"), 0);
    ck_assert_int_gt(file_size(dir, "plots/latency_time.png"), 0);
    /* junit: a time on every testcase; unjudged checkers skipped as such */
    char *xml = slurp(dir, "junit.xml");
    /* <testsuites> and <testsuite> carry a time too */
    ck_assert_uint_eq(count(xml, "<testcase ") + 2, count(xml, "\" time=\""));
    ck_assert_uint_eq(count(xml, " time=\"0\">"), 0);
    /* junit.xml names the fault plan too */
    snprintf(row, sizeof row,
             "<property name=\"fault.lost_request\" value=\"planned %ld jobs, fired %ld\"/>",
             lf.planned[facts_kind(&lf, "lost_request")],
             lf.fired[facts_kind(&lf, "lost_request")]);
    ck_assert_msg(strstr(xml, row) != NULL, "junit.xml lacks %s", row);
    ck_assert_ptr_nonnull(
        strstr(xml, "<property name=\"scenario_description\" value=\"every client-side fault"));
    char *tc = testcase_of(xml, "group_exclusive");
    ck_assert_ptr_nonnull(strstr(tc, "<skipped message=\"not judged by this scenario: "));
    free(tc);
    assert_no_raw_epoch(dir, &lf);
    screenshot(dir, "shot.png");
    free(xml);
    free(idle);
    free(rec);
    free(html);
    free(md);
    json_decref(r);
    remove_run(dir);
    snprintf(path, sizeof path, "%s.log", dir);
    remove(path);
}
END_TEST

START_TEST(test_report_mutant_run_timeline_of_first_violation)
{
    char dir[64], path[256], want[256];
    ledger_facts lf;
    json_error_t je;

    snprintf(dir, sizeof dir, "/tmp/qc-report-mutant.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_int_eq(qchaos_run(dir, "default --protocol backends/postgres/mutants/"
                                     "select_then_update.sql --jobs 400 --workers 8 --seed 7"),
                     1);
    read_ledger_facts(dir, &lf);
    snprintf(path, sizeof path, "%s/results.json", dir);
    json_t *r = json_load_file(path, 0, &je), *c, *v, *first = NULL;
    ck_assert_ptr_nonnull(r);
    size_t i, fails = 0;
    int64_t best = INT64_MAX;
    json_array_foreach(json_object_get(r, "checkers"), i, c)
    {
        fails += strcmp(json_string_value(json_object_get(c, "verdict")), "FAIL") == 0;
        if (strcmp(json_string_value(json_object_get(c, "name")), "exclusive_claim") != 0)
            continue;
        size_t k;
        json_array_foreach(json_object_get(c, "violations"), k, v)
        {
            json_t *seq = json_object_get(v, "seq");
            int64_t m = INT64_MAX;
            for (size_t q = 0; q < json_array_size(seq); q++)
                m = json_integer_value(json_array_get(seq, q)) < m
                        ? json_integer_value(json_array_get(seq, q))
                        : m;
            if (m < best) {
                best = m;
                first = v;
            }
        }
    }
    ck_assert_msg(first != NULL, "the mutant was not caught by exclusive_claim");
    char *html = slurp(dir, "report.html"), *md = slurp(dir, "report.md");
    char *cd = card(html, "exclusive_claim", "first");
    long long job = json_integer_value(json_object_get(first, "job"));
    snprintf(want, sizeof want, "violations, job %lld</h3>", job);
    ck_assert_msg(strstr(cd, want) != NULL, "card is not of job %lld", job);
    /* every cited seq: named in a tooltip, its lease drawn, its lane shown */
    json_t *seq = json_object_get(first, "seq");
    ck_assert_uint_ge(json_array_size(seq), 2);
    qc_history h = {0};
    qc_err err = {0};
    snprintf(path, sizeof path, "%s/ledger.jsonl", dir);
    const char *paths[1] = {path};
    ck_assert_int_eq(qc_history_load(&h, paths, 1, &err), 0);
    for (size_t q = 0; q < json_array_size(seq); q++) {
        long long s = json_integer_value(json_array_get(seq, q));
        const qc_event *e = qc__report_find_seq(&h, s);
        ck_assert_ptr_nonnull(e);
        snprintf(want, sizeof want, "seq %lld at ", s);
        ck_assert_msg(strstr(cd, want) != NULL, "timeline lacks %s", want);
        if (e->worker >= 0) {
            snprintf(want, sizeof want, ">worker %d (incarnation %d)</text>", e->worker, e->inc);
            ck_assert_msg(strstr(cd, want) != NULL, "timeline lacks the lane %s", want);
        }
        if (e->type == QC_EV_OK && e->op == QC_OP_CLAIM) {
            snprintf(want, sizeof want, "lease of claim %lld until", s);
            ck_assert_msg(strstr(cd, want) != NULL, "timeline lacks %s", want);
        }
    }
    qc_history_fini(&h);
    /* the Markdown table names them in bold */
    snprintf(want, sizeof want, "### exclusive_claim: the first of %lld violations, job %lld",
             (long long)json_integer_value(json_object_get(
                 json_array_get(json_object_get(r, "checkers"), 0), "violations_total")),
             job);
    ck_assert_msg(strstr(md, want) != NULL, "report.md lacks '%s'", want);
    /* a few cards per checker, not one per violation */
    ck_assert_uint_le(count(html, "<div class=\"violation\""), 2 * fails);
    ck_assert_uint_ge(count(html, "<div class=\"violation\""), fails);
    /* a mutant is said to be one */
    ck_assert_ptr_nonnull(
        strstr(html, "is a known-broken protocol (a mutant) that the checkers must catch: MUTANT "
                     "select-then-update claim without a row lock"));
    ck_assert_ptr_null(strstr(html, "protocol tested: as its base"));
    ck_assert_ptr_null(strstr(md, "protocol tested: as its base"));
    assert_no_raw_epoch(dir, &lf);
    screenshot(dir, "shot.png");
    free(cd);
    free(html);
    free(md);
    json_decref(r);
    remove_run(dir);
    snprintf(path, sizeof path, "%s.log", dir);
    remove(path);
}
END_TEST

/* ---- bad input ------------------------------------------------------------------ */

START_TEST(test_report_results_missing_eio_names_file)
{
    char dir[64];
    qc_err err = {0};
    make_run(dir);
    char path[128];
    snprintf(path, sizeof path, "%s/results.json", dir);
    ck_assert_int_eq(remove(path), 0);
    ck_assert_int_eq(qc_report_write(dir, NULL, 0, 0, NULL, 0, &err), QC_EIO);
    ck_assert_msg(strstr(err.msg, path) != NULL, "%s", err.msg);
    ck_assert_int_lt(file_size(dir, "junit.xml"), 0);
    remove_run(dir);
}
END_TEST

START_TEST(test_report_results_malformed_einval_no_output)
{
    static const char *const bad[] = {"{\"checkers\": [",
                                      "[1, 2]",
                                      "{\"seed\": 1}",
                                      "{\"checkers\": [{\"name\": \"x\"}]}",
                                      "{\"checkers\": [{\"verdict\": \"PASS\"}]}",
                                      ("{\"checkers\": [{\"name\": \"x\", \"verdict\": \"FAIL\", "
                                       "\"violations\": [{\"seq\": [\"a\"]}]}]}")};
    char dir[64];
    make_run(dir);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        qc_err err = {0};
        write_text(dir, "results.json", bad[i]);
        ck_assert_msg(qc_report_write(dir, NULL, 0, 0, NULL, 0, &err) == QC_EINVAL, "%s", bad[i]);
        ck_assert_ptr_nonnull(strstr(err.msg, "results.json"));
    }
    ck_assert_int_lt(file_size(dir, "junit.xml"), 0);
    ck_assert_int_lt(file_size(dir, "report.md"), 0);
    remove_run(dir);
}
END_TEST

START_TEST(test_report_ledger_missing_eio_names_file)
{
    char dir[64];
    qc_err err = {0};
    const char *ledgers[] = {"/nonexistent/qchaos/ledger.jsonl"};
    make_run(dir);
    ck_assert_int_eq(qc_report_write(dir, ledgers, 1, 0, NULL, 0, &err), QC_EIO);
    ck_assert_msg(strstr(err.msg, ledgers[0]) != NULL, "%s", err.msg);
    remove_run(dir);
}
END_TEST

START_TEST(test_report_minimal_results_missing_optional_fields_ok)
{
    char dir[64];
    make_run(dir);
    write_text(dir, "results.json",
               "{\"checkers\": [{\"name\": \"exclusive_claim\", \"verdict\": \"PASS\"}]}");
    report(dir, 0, NULL, 0);
    assert_junit_wellformed(dir);
    char *md = slurp(dir, "report.md");
    ck_assert_ptr_nonnull(strstr(md, "| exclusive_claim | PASS | - | 0 |"));
    ck_assert_ptr_nonnull(strstr(md, "The command of this run was not recorded"));
    free(md);
    remove_run(dir);
}
END_TEST

/* ---- size ---------------------------------------------------------------------------- */

START_TEST(test_report_200k_events_fast)
{
    char dir[64], path[128];
    struct timespec a, b;
    FILE *f;
    long seq = 0;

    snprintf(dir, sizeof dir, "/tmp/qc-report.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    write_text(dir, "results.json", results_json);
    snprintf(path, sizeof path, "%s/ledger.jsonl", dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"type\":\"header\",\"seed\":7,\"workers\":16,\"jobs\":50000}\n", f);
    /* 50,000 jobs x (claim invoke + ok, complete invoke + ok) over 60 s. */
    for (long j = 1; j <= 50000; j++) {
        double t = (double)j * 1.2;
        int w = (int)(j % 16);
        fprintf(f,
                "{\"seq\":%ld,\"t\":%.3f,\"type\":\"invoke\",\"op\":\"claim\",\"worker\":%d,"
                "\"req\":%ld}\n"
                "{\"seq\":%ld,\"t\":%.3f,\"type\":\"ok\",\"op\":\"claim\",\"worker\":%d,"
                "\"req\":%ld,\"rows\":1,\"job\":%ld,\"token\":\"t%ld\"}\n"
                "{\"seq\":%ld,\"t\":%.3f,\"type\":\"invoke\",\"op\":\"complete\",\"worker\":%d,"
                "\"req\":%ld,\"job\":%ld}\n"
                "{\"seq\":%ld,\"t\":%.3f,\"type\":\"ok\",\"op\":\"complete\",\"worker\":%d,"
                "\"req\":%ld,\"job\":%ld,\"rows\":1}\n",
                seq + 1, t, w, 2 * j, seq + 2, t + 0.3, w, 2 * j, j, j, seq + 3, t + 0.5, w,
                2 * j + 1, j, seq + 4, t + 0.9, w, 2 * j + 1, j);
        seq += 4;
    }
    ck_assert_int_eq(fclose(f), 0);
    /* The bound is on CPU time (this process and the gnuplot children it
     * waited for), not on the wall clock: on a machine shared with other
     * jobs (load 40 and more here) the wall time says more about them than
     * about the report.  Both are printed. */
    struct timespec ca, cb;
    struct rusage ra, rb;
    getrusage(RUSAGE_CHILDREN, &ra);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
    clock_gettime(CLOCK_MONOTONIC, &a);
    report(dir, 0, NULL, 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
    getrusage(RUSAGE_CHILDREN, &rb);
    double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
    double self = (double)(cb.tv_sec - ca.tv_sec) * 1e3 + (double)(cb.tv_nsec - ca.tv_nsec) / 1e6;
    double kids = (double)(rb.ru_utime.tv_sec + rb.ru_stime.tv_sec - ra.ru_utime.tv_sec -
                           ra.ru_stime.tv_sec) *
                      1e3 +
                  (double)(rb.ru_utime.tv_usec + rb.ru_stime.tv_usec - ra.ru_utime.tv_usec -
                           ra.ru_stime.tv_usec) /
                      1e3;
    fprintf(stderr,
            "check_reports: report of a 200,000-event ledger took %.0f ms (CPU: %.0f ms "
            "qchaos, %.0f ms gnuplot)\n",
            ms, self, kids);
    ck_assert_msg(self + kids < TIME_BOUND_MS, "report of 200,000 events took %.0f ms of CPU",
                  self + kids);
    char *dat = slurp(dir, "plots/throughput.dat");
    ck_assert_ptr_nonnull(dat);
    ck_assert_uint_le(count(dat, "\n"), 400); /* binned, not one line per event */
    free(dat);
    remove_run(dir);
}
END_TEST


/* Every checker qc_check_all runs has a glossary entry (a report.md row of
 * "- | -" told a newcomer nothing: retry_delay and the witness checkers had
 * none). */
START_TEST(test_report_glossary_names_every_checker)
{
    qc_history h;
    qc_err err = {0};
    memset(&h, 0, sizeof h);
    ck_assert_int_eq(qc_history_parse(&h,
                                      "{\"type\":\"header\",\"schema\":\"qchaos-ledger/1\"}\n",
                                      &err),
                     0);
    qc_check *cs = NULL;
    size_t n = 0;
    ck_assert_int_eq(qc_check_all(&h, &cs, &n), 0);
    ck_assert_uint_ge(n, 19);
    for (size_t i = 0; i < n; i++) {
        const char *opp = NULL;
        ck_assert_msg(qc__glossary(cs[i].name, &opp) != NULL && opp != NULL,
                      "checker %s has no glossary entry", cs[i].name);
    }
    qc_checks_free(cs, n);
    qc_history_fini(&h);
}
END_TEST

static Suite *reports_suite(void)
{
    Suite *s = suite_create("reports");
    TCase *tc;

    tc = tcase_create("junit");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_junit_fixture_run_wellformed_one_testcase_per_checker);
    tcase_add_test(tc, test_junit_fail_verdict_failure_with_escaped_evidence);
    tcase_add_test(tc, test_junit_inconclusive_without_allow_failure);
    tcase_add_test(tc, test_junit_inconclusive_with_allow_skipped);
    tcase_add_test(tc, test_junit_not_applicable_skipped);
    tcase_add_test(tc, test_junit_unknown_verdict_error_not_pass);
    suite_add_tcase(s, tc);

    tc = tcase_create("markdown_html");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_markdown_fixture_run_verdict_table_first_then_sections);
    tcase_add_test(tc, test_markdown_unjudged_inconclusive_is_info);
    tcase_add_test(tc, test_html_fixture_run_self_contained);
    tcase_add_test(tc, test_escape_script_message_escaped_everywhere);
    suite_add_tcase(s, tc);

    tc = tcase_create("plots");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_plots_no_gnuplot_in_path_succeeds_note_says_skipped);
    tcase_add_test(tc, test_plots_gnuplot_installed_png_and_svg_nonempty);
    tcase_add_test(tc, test_plots_no_fault_recovery_skipped_with_note);
    tcase_add_test(tc, test_history_monitor_and_until_t_fields_parsed);
    suite_add_tcase(s, tc);

    tc = tcase_create("render");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_timeline_fixture_violation_names_its_seqs);
    tcase_add_test(tc, test_explain_raw_epoch_shown_relative);
    suite_add_tcase(s, tc);

    tc = tcase_create("runs");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_report_chaos_run_fault_plan_description_bounds);
    tcase_add_test(tc, test_report_mutant_run_timeline_of_first_violation);
    suite_add_tcase(s, tc);

    tc = tcase_create("bad_input");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_report_results_missing_eio_names_file);
    tcase_add_test(tc, test_report_results_malformed_einval_no_output);
    tcase_add_test(tc, test_report_glossary_names_every_checker);
    tcase_add_test(tc, test_report_ledger_missing_eio_names_file);
    tcase_add_test(tc, test_report_minimal_results_missing_optional_fields_ok);
    suite_add_tcase(s, tc);

    tc = tcase_create("size");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_report_200k_events_fast);
    tcase_add_test(tc, test_select_kth_as_sort);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(reports_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
