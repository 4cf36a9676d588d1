/*
 * junit.c - junit.xml: one <testsuite> for the run, one <testcase> per
 * checker of results.json, so a CI server shows each audit rule as a test.
 *
 * The mapping (report.h): PASS passes; FAIL is a <failure> whose text is
 * every stored violation with its evidence told in plain words; INCONCLUSIVE
 * is a <failure type="INCONCLUSIVE"> (a run that could not look is not a
 * pass), or <skipped/> when the caller allows inconclusive results;
 * NOT_APPLICABLE is <skipped/>; a verdict this version does not know is an
 * <error>, never a pass.
 *
 * Invariants: every piece of text from results.json or the ledger goes
 * through qc__xml_escape (attributes and text alike), so the file is
 * well-formed whatever a message holds; the counts in the <testsuite> and
 * <testsuites> attributes are those of the <testcase> elements written.
 */
#include "report.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

typedef enum { TC_PASS, TC_FAILURE, TC_SKIPPED, TC_ERROR } tc_kind;

static tc_kind kind_of(const qc__rcheck *c, int allow_inconclusive)
{
    if (strcmp(c->verdict, "PASS") == 0)
        return TC_PASS;
    if (strcmp(c->verdict, "FAIL") == 0)
        return TC_FAILURE;
    if (strcmp(c->verdict, "INCONCLUSIVE") == 0)
        return (allow_inconclusive || !c->judged) ? TC_SKIPPED : TC_FAILURE;
    if (strcmp(c->verdict, "NOT_APPLICABLE") == 0)
        return TC_SKIPPED;
    return TC_ERROR;
}

/* Writes ` name="value"` with value escaped. */
static void attr(FILE *f, const char *name, const char *value)
{
    fprintf(f, " %s=\"", name);
    qc__xml_escape(f, value);
    fputc('"', f);
}

static void property(FILE *f, const char *name, const char *value)
{
    if (value == NULL || value[0] == '\0')
        return;
    fputs("      <property", f);
    attr(f, "name", name);
    attr(f, "value", value);
    fputs("/>\n", f);
}

static long total_of(const qc__rcheck *c)
{
    return c->violations_total >= 0 ? c->violations_total : (long)c->nv;
}

/* The body of a FAIL's <failure>: every stored violation, its explanation
 * and each ledger event it cites. */
static void failure_text(FILE *f, const qc__rcheck *c, const qc_history *h, double origin)
{
    char line[1024];
    long total = total_of(c);

    snprintf(line, sizeof line, "%s: %ld violation(s)", c->name, total);
    qc__xml_escape(f, line);
    if (c->summary[0] != '\0') {
        fputs(" - ", f);
        qc__xml_escape(f, c->summary);
    }
    fputc('\n', f);
    for (size_t k = 0; k < c->nv; k++) {
        const qc__rviolation *v = &c->v[k];
        if (v->has_job)
            snprintf(line, sizeof line, "\nviolation %zu, job %" PRId64 ": ", k + 1, v->job);
        else
            snprintf(line, sizeof line, "\nviolation %zu: ", k + 1);
        qc__xml_escape(f, line);
        qc__report_explain(v->explanation, origin, line, sizeof line);
        qc__xml_escape(f, line);
        fputc('\n', f);
        for (size_t s = 0; s < v->nseq; s++) {
            qc__report_describe(h, origin, v->seq[s], line, sizeof line);
            fputs("  ", f);
            qc__xml_escape(f, line);
            fputc('\n', f);
        }
    }
    if (total > (long)c->nv) {
        snprintf(line, sizeof line, "\n... and %ld more violation(s) not stored in results.json\n",
                 total - (long)c->nv);
        qc__xml_escape(f, line);
    }
}

static void testcase(FILE *f, const qc__results *r, const qc__rcheck *c, const qc_history *h,
                     double origin, int allow_inconclusive, const char *classname)
{
    char msg[512];
    int inconclusive = strcmp(c->verdict, "INCONCLUSIVE") == 0;

    fputs("    <testcase", f);
    attr(f, "classname", classname);
    attr(f, "name", c->name);
    /* The time the checker took to judge the ledger (results.json
     * "time_s"; 0 when an older results.json does not say). */
    fprintf(f, " time=\"%.6f\">\n", c->time_s > 0 ? c->time_s : 0.0);
    switch (kind_of(c, allow_inconclusive)) {
    case TC_PASS:
        break;
    case TC_FAILURE:
        if (inconclusive) {
            snprintf(msg, sizeof msg,
                     "inconclusive: the checker had no opportunity to catch a "
                     "violation");
            fputs("      <failure type=\"INCONCLUSIVE\"", f);
            attr(f, "message", msg);
            fputs(">", f);
            qc__xml_escape(f, c->name);
            fputs(" had no opportunity to catch a violation, so the run proves nothing about "
                  "it (it is never counted as a pass).",
                  f);
            if (c->summary[0] != '\0') {
                fputs("\n", f);
                qc__xml_escape(f, c->summary);
            }
            fputs("\nRun with --allow-inconclusive to report it as skipped.\n</failure>\n", f);
        } else {
            long total = total_of(c);
            char first[512] = "";
            if (c->nv > 0)
                qc__report_explain(c->v[0].explanation, origin, first, sizeof first);
            if (c->nv > 0)
                snprintf(msg, sizeof msg, "%ld violation(s); first: %s", total, first);
            else
                snprintf(msg, sizeof msg, "%ld violation(s)", total);
            fputs("      <failure type=\"FAIL\"", f);
            attr(f, "message", msg);
            fputs(">", f);
            failure_text(f, c, h, origin);
            fputs("</failure>\n", f);
        }
        break;
    case TC_SKIPPED:
        /* Why it is skipped, in this order: a checker the scenario does
         * not judge is information whatever its verdict; a judged
         * INCONCLUSIVE is skipped only by --allow-inconclusive. */
        snprintf(msg, sizeof msg, "%s: %s",
                 !inconclusive ? "not applicable"
                 : !c->judged  ? "not judged by this scenario"
                               : "inconclusive (allowed by --allow-inconclusive)",
                 c->summary[0] != '\0' ? c->summary : c->verdict);
        fputs("      <skipped", f);
        attr(f, "message", msg);
        fputs("/>\n", f);
        break;
    case TC_ERROR:
        snprintf(msg, sizeof msg, "unknown verdict '%s'", c->verdict);
        fputs("      <error type=\"UNKNOWN_VERDICT\"", f);
        attr(f, "message", msg);
        fputs("/>\n", f);
        break;
    }
    fputs("      <system-out>", f);
    snprintf(msg, sizeof msg, "verdict %s, %ld opportunities, %ld violation(s)", c->verdict,
             c->opportunities, total_of(c));
    qc__xml_escape(f, msg);
    if (c->summary[0] != '\0') {
        fputs(": ", f);
        qc__xml_escape(f, c->summary);
    }
    if (r->has_seed) {
        snprintf(msg, sizeof msg, " (seed %" PRIu64 ")", r->seed);
        qc__xml_escape(f, msg);
    }
    fputs("</system-out>\n    </testcase>\n", f);
}

int qc__junit_write(const char *dir, const qc__results *r, const qc_history *h,
                    int allow_inconclusive, qc_err *err)
{
    size_t counts[4] = {0, 0, 0, 0};
    char classname[256], num[64], time[64];
    FILE *f = qc__report_open(dir, "junit.xml", err);

    if (f == NULL)
        return QC_EIO;
    for (size_t i = 0; i < r->nc; i++)
        counts[kind_of(&r->c[i], allow_inconclusive)]++;
    snprintf(classname, sizeof classname, "qchaos.%s",
             r->scenario[0] != '\0' ? r->scenario : "run");
    snprintf(time, sizeof time, "%.3f", r->elapsed_s >= 0 ? r->elapsed_s : 0.0);

    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    fprintf(f,
            "<testsuites name=\"qchaos\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
            "skipped=\"%zu\" time=\"%s\">\n",
            r->nc, counts[TC_FAILURE], counts[TC_ERROR], counts[TC_SKIPPED], time);
    fputs("  <testsuite", f);
    attr(f, "name", classname);
    fprintf(f, " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%s\">\n",
            r->nc, counts[TC_FAILURE], counts[TC_ERROR], counts[TC_SKIPPED], time);
    fputs("    <properties>\n", f);
    if (r->has_seed) {
        snprintf(num, sizeof num, "%" PRIu64, r->seed);
        property(f, "seed", num);
    }
    property(f, "verdict", r->verdict);
    if (r->exit_code >= 0) {
        snprintf(num, sizeof num, "%d", r->exit_code);
        property(f, "exit_code", num);
    }
    property(f, "scenario", r->scenario);
    property(f, "scenario_file", r->scenario_file);
    property(f, "protocol", r->protocol);
    property(f, "engine", r->engine);
    property(f, "tested_where", r->tested);
    property(f, "qchaos_version", r->version);
    property(f, "server_version", r->server);
    property(f, "target_host", r->target_host);
    property(f, "target_port", r->target_port);
    property(f, "target_dbname", r->target_dbname);
    property(f, "target_user", r->target_user);
    property(f, "target_how", r->target_how);
    property(f, "command", r->command);
    property(f, "allow_inconclusive", allow_inconclusive ? "yes" : "no");
    /* What was tested: the scenario's words, the protocol's role, the
     * lease, and per fault kind the jobs planned and the faults fired. */
    {
        json_t *t = r->tested_json, *x;
        size_t i;
        char val[256];
        property(f, "scenario_description", json_string_value(json_object_get(t, "description")));
        property(f, "protocol_role",
                 json_string_value(json_object_get(json_object_get(t, "protocol"), "role")));
        x = json_object_get(json_object_get(t, "lease"), "lease_ms");
        if (json_is_integer(x)) {
            snprintf(val, sizeof val, "%lld", (long long)json_integer_value(x));
            property(f, "lease_ms", val);
        }
        json_array_foreach(json_object_get(t, "fault_plan"), i, x)
        {
            json_t *pl = json_object_get(x, "planned");
            char name[96];
            snprintf(name, sizeof name, "fault.%s",
                     json_is_string(json_object_get(x, "kind"))
                         ? json_string_value(json_object_get(x, "kind"))
                         : "?");
            if (json_is_integer(pl))
                snprintf(val, sizeof val, "planned %lld jobs, fired %lld",
                         (long long)json_integer_value(pl),
                         (long long)json_integer_value(json_object_get(x, "fired")));
            else
                snprintf(val, sizeof val, "fired %lld",
                         (long long)json_integer_value(json_object_get(x, "fired")));
            property(f, name, val);
        }
    }
    fputs("    </properties>\n", f);
    double origin = qc__report_server_origin(h);
    for (size_t i = 0; i < r->nc; i++)
        testcase(f, r, &r->c[i], h, origin, allow_inconclusive, classname);
    fputs("  </testsuite>\n</testsuites>\n", f);
    return qc__report_close(f, dir, "junit.xml", err);
}
