/*
 * gate.c - `qchaos gate PROTOCOL` (gate.h): a battery of scenarios, each
 * opening one bug class's window on purpose, run against one protocol.
 *
 * Which scenarios: those of the protocol's model (lease or transaction)
 * and engine, each listed with the checkers it is there for, so the table
 * says what each run can show.  Every run is a child process (as in the
 * mutation matrix: a crash of one run is reported, not fatal); verdicts are
 * read back from each run's results.json, never re-derived.
 */
#include "gate.h"
#include "audit.h"
#include "clock.h"
#include "mutation.h"
#include "scenario.h"
#include "../backends/protocol.h"

#include <jansson.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gate_scenario {
    const char *file;  /* under the data folder's scenarios/ */
    const char *model; /* "lease", "transaction" or NULL: both */
    const char *why;   /* the bug classes it opens a window for */
    int pg_only;       /* needs PostgreSQL (a pooler, pg_stat_statements) */
    int groups;        /* only with --groups */
} gate_scenario;

static const gate_scenario battery[] = {
    {"gate/stale_complete.ini", "lease",
     "stale renew / complete accepted (stale_token_rejected, no_early_reap)", 0, 0},
    {"gate/stale_fail.ini", "lease", "stale fail accepted (stale_token_rejected)", 0, 0},
    {"gate/contention.ini", NULL, "two workers take one job (exclusive_claim, double_complete)",
     0, 0},
    {"kill_after_claim.ini", NULL,
     "recovery, early reap, lost or phantom jobs (recovery, no_early_reap, no_lost_jobs)", 0, 0},
    {"kill_after_effect.ini", "lease", "an unstable op key (effects_once)", 0, 0},
    {"lost_ack.ini", NULL, "a lost answer to a committed complete (acked_durable, "
                           "no_false_success)", 0, 0},
    {"poison.ini", "lease", "no dead letter, no error kept (bounded_failure)", 0, 0},
    {"max_attempts.ini", "lease", "max_attempts not honoured (no_lost_jobs, bounded_failure)", 0,
     0},
    {"cases/c12_poison_crash.ini", "lease", "a crash loop never dead-lettered (C12)", 0, 0},
    {"cases/c02_batch_limit.ini", "lease", "a batch claim larger than asked for (batch_bound)", 0,
     0},
    {"cases/c09_rescuer.ini", "lease", "a rescuer overwriting a completion (C09)", 0, 0},
    {"cases/c03_pooler.ini", "lease", "session state behind a transaction pooler (C03)", 1, 0},
    {"idle.ini", "lease", "a hot loop on an empty queue (bounded_idle_polling)", 1, 0},
    {"txn.ini", "transaction", "two open claims of one job (exclusive_claim)", 0, 0},
    {"cases/c01_snapshot_claim.ini", "transaction", "a claim from an old snapshot (C01)", 0, 0},
    {"grouped.ini", "lease", "a group run twice at once or out of order (group_*)", 0, 1},
};

#define NBATTERY (sizeof battery / sizeof battery[0])

/* runner.c: set by main.c's SIGINT / SIGTERM handler */
extern volatile sig_atomic_t qc_interrupted;

/* What one run showed. */
typedef struct gate_run {
    int exit;            /* child exit code, -1 died */
    char failed[512];    /* failing checkers, comma list */
    char unjudged[512];  /* judged checkers INCONCLUSIVE, comma list */
    json_t *results;     /* results.json, or NULL */
} gate_run;

static void append(char *buf, size_t n, const char *name)
{
    size_t len = strlen(buf);
    snprintf(buf + len, n - len, "%s%s", len ? ", " : "", name);
}

static void read_run(const char *dir, gate_run *r)
{
    char path[PATH_MAX + 256];
    size_t i;
    json_t *c, *judged;

    snprintf(path, sizeof path, "%s/results.json", dir);
    r->results = json_load_file(path, 0, NULL);
    r->failed[0] = r->unjudged[0] = '\0';
    if (r->results == NULL)
        return;
    judged = json_object_get(r->results, "judged");
    json_array_foreach(json_object_get(r->results, "checkers"), i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        const char *v = json_string_value(json_object_get(c, "verdict"));
        if (name == NULL || v == NULL)
            continue;
        if (!strcmp(v, "FAIL"))
            append(r->failed, sizeof r->failed, name);
        if (!strcmp(v, "INCONCLUSIVE") && json_is_true(json_object_get(c, "judged")))
            append(r->unjudged, sizeof r->unjudged, name);
    }
    (void)judged;
}

static void xml_escape(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
                fputc(*s, f);
        }
    }
}

/* junit.xml: a testcase per scenario, seed and judged checker; a FAIL is a
 * failure carrying its first violation, a run that could not be done an
 * error, an INCONCLUSIVE judged checker a skip with its reason. */
static void write_junit(const char *path, const char *protocol, const gate_scenario **sc,
                        gate_run *runs, size_t nsc, int seeds, int first_seed, double secs)
{
    FILE *f = fopen(path, "w");
    long tests = 0, failures = 0, errors = 0, skipped = 0;

    if (f == NULL)
        return;
    for (size_t k = 0; k < nsc * (size_t)seeds; k++) {
        gate_run *r = &runs[k];
        size_t i;
        json_t *c;
        if (r->results == NULL) {
            tests++;
            errors++;
            continue;
        }
        json_array_foreach(json_object_get(r->results, "checkers"), i, c)
        {
            const char *v = json_string_value(json_object_get(c, "verdict"));
            int judged = json_is_true(json_object_get(c, "judged"));
            if (!judged && (v == NULL || strcmp(v, "FAIL") != 0))
                continue;
            tests++;
            failures += v != NULL && !strcmp(v, "FAIL");
            skipped += v != NULL && !strcmp(v, "INCONCLUSIVE");
        }
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"qchaos gate\" tests=\"%ld\" failures=\"%ld\" errors=\"%ld\" "
               "skipped=\"%ld\" time=\"%.1f\">\n",
            tests, failures, errors, skipped, secs);
    fprintf(f, "  <testsuite name=\"qchaos gate ");
    xml_escape(f, protocol);
    fprintf(f, "\" tests=\"%ld\" failures=\"%ld\" errors=\"%ld\" skipped=\"%ld\" time=\"%.1f\">\n",
            tests, failures, errors, skipped, secs);
    for (size_t s = 0; s < nsc; s++) {
        for (int k = 0; k < seeds; k++) {
            gate_run *r = &runs[s * (size_t)seeds + (size_t)k];
            size_t i;
            json_t *c;
            if (r->results == NULL) {
                fprintf(f, "    <testcase classname=\"");
                xml_escape(f, sc[s]->file);
                fprintf(f, "\" name=\"run seed %d\"><error message=\"the run could not be done "
                           "(exit %d)\"/></testcase>\n",
                        first_seed + k, r->exit);
                continue;
            }
            json_array_foreach(json_object_get(r->results, "checkers"), i, c)
            {
                const char *name = json_string_value(json_object_get(c, "name"));
                const char *v = json_string_value(json_object_get(c, "verdict"));
                int judged = json_is_true(json_object_get(c, "judged"));
                if (name == NULL || v == NULL || (!judged && strcmp(v, "FAIL") != 0))
                    continue;
                fprintf(f, "    <testcase classname=\"");
                xml_escape(f, sc[s]->file);
                fprintf(f, " seed %d\" name=\"%s\">", first_seed + k, name);
                if (!strcmp(v, "FAIL")) {
                    json_t *v0 = json_array_get(json_object_get(c, "violations"), 0);
                    fprintf(f, "<failure message=\"");
                    xml_escape(f, json_string_value(json_object_get(v0, "explanation")));
                    fprintf(f, "\">");
                    xml_escape(f, json_string_value(json_object_get(c, "summary")));
                    fprintf(f, "</failure>");
                } else if (!strcmp(v, "INCONCLUSIVE")) {
                    fprintf(f, "<skipped message=\"no opportunity: ");
                    xml_escape(f, json_string_value(json_object_get(c, "summary")));
                    fprintf(f, "\"/>");
                }
                fprintf(f, "</testcase>\n");
            }
        }
    }
    fprintf(f, "  </testsuite>\n</testsuites>\n");
    fclose(f);
}

int qc_gate_run(const qc_gate_opts *o, qc_err *err)
{
    qc_protocol *proto = NULL;
    const gate_scenario *sc[NBATTERY];
    char files[NBATTERY][PATH_MAX];
    size_t nsc = 0;
    gate_run *runs = NULL;
    int code = 0, any_fail = 0, any_error = 0, any_inc = 0;
    double t0 = qc_clock_ms();
    char path[PATH_MAX + 64];

    if (qc_protocol_load(o->protocol, QC_PARAM_DOLLAR, &proto, err) != 0)
        return 2;
    int pg = !strcmp(proto->engine, "postgres");
    for (size_t i = 0; i < NBATTERY; i++) {
        const gate_scenario *g = &battery[i];
        if (g->model != NULL && strcmp(g->model, proto->model) != 0)
            continue;
        if ((g->pg_only && !pg) || (g->groups && !o->groups))
            continue;
        snprintf(files[nsc], sizeof files[nsc], "%s/scenarios/%s", qc_datadir(), g->file);
        sc[nsc++] = g;
    }
    runs = calloc(nsc * (size_t)o->seeds + 1, sizeof *runs);
    if (runs == NULL || qc_mkdirs(o->out_dir, err) != 0) {
        qc_protocol_destroy(proto);
        free(runs);
        return runs == NULL ? 3 : 2;
    }
    printf("qchaos: gate: %s (%s model, %s): %zu scenarios x %d seeds\n", o->protocol,
           proto->model, proto->engine, nsc, o->seeds);
    printf("%-32s %-6s %5s  %s\n", "scenario", "seed", "exit", "failed / judged without an "
                                                           "opportunity");
    for (size_t s = 0; s < nsc && !qc_interrupted; s++) {
        for (int k = 0; k < o->seeds && !qc_interrupted; k++) {
            gate_run *r = &runs[s * (size_t)o->seeds + (size_t)k];
            char dir[PATH_MAX + 128], name[128];
            snprintf(name, sizeof name, "%s", sc[s]->file);
            for (char *p = name; *p; p++)
                if (*p == '/')
                    *p = '_';
            if (strlen(name) > 4 && !strcmp(name + strlen(name) - 4, ".ini"))
                name[strlen(name) - 4] = '\0';
            snprintf(dir, sizeof dir, "%s/%s/seed%d", o->out_dir, name, o->first_seed + k);
            r->exit = qc__run_child(files[s], o->protocol, o->first_seed + k, dir, o->dsn);
            read_run(dir, r);
            any_fail |= r->exit == 1 || r->failed[0];
            any_error |= r->results == NULL || r->exit == 2 || r->exit == 3 || r->exit < 0;
            any_inc |= r->exit == 4;
            printf("%-32s %-6d %5d  %s%s%s\n", sc[s]->file, o->first_seed + k, r->exit,
                   r->results == NULL ? "no results" : r->failed,
                   r->failed[0] && r->unjudged[0] ? "; " : "", r->unjudged);
            if (r->exit != 0) /* where to look, and how to run it again */
                printf("    %s/ (run.log, report.html); repeat: qchaos run %s --protocol %s "
                       "--seed %d%s%s\n",
                       dir, files[s], o->protocol, o->first_seed + k, o->dsn ? " --dsn " : "",
                       o->dsn ? "'...'" : "");
            fflush(stdout);
        }
    }
    double secs = (qc_clock_ms() - t0) / 1000.0;
    code = any_fail ? 1 : any_error ? 3 : any_inc ? 4 : 0;
    if (qc_interrupted && code != 1)
        code = 4; /* stopped: what ran is written, the rest was not judged */

    json_t *root = json_object(), *arr = json_array();
    json_object_set_new(root, "schema", json_string("qchaos-gate/1"));
    json_object_set_new(root, "protocol", json_string(o->protocol));
    json_object_set_new(root, "model", json_string(proto->model));
    json_object_set_new(root, "engine", json_string(proto->engine));
    json_object_set_new(root, "seconds", json_real(secs));
    for (size_t s = 0; s < nsc; s++) {
        for (int k = 0; k < o->seeds; k++) {
            gate_run *r = &runs[s * (size_t)o->seeds + (size_t)k];
            json_t *x = json_object();
            json_object_set_new(x, "scenario", json_string(sc[s]->file));
            json_object_set_new(x, "for", json_string(sc[s]->why));
            json_object_set_new(x, "seed", json_integer(o->first_seed + k));
            json_object_set_new(x, "exit", json_integer(r->exit));
            json_object_set_new(x, "failed", json_string(r->failed));
            json_object_set_new(x, "inconclusive", json_string(r->unjudged));
            json_array_append_new(arr, x);
        }
    }
    json_object_set_new(root, "runs", arr);
    json_object_set_new(root, "exit_code", json_integer(code));
    snprintf(path, sizeof path, "%s/gate.json", o->out_dir);
    if (json_dump_file(root, path, JSON_INDENT(2)) != 0)
        fprintf(stderr, "qchaos: cannot write '%s'\n", path);
    json_decref(root);
    snprintf(path, sizeof path, "%s/junit.xml", o->out_dir);
    write_junit(path, o->protocol, sc, runs, nsc, o->seeds, o->first_seed, secs);

    printf("qchaos: gate results in %s/ (gate.json, junit.xml, one folder per run), %.1f s\n",
           o->out_dir, secs);
    if (code == 1) {
        printf("qchaos: verdict: FAIL: the protocol failed the gate:");
        int nf = 0;
        for (size_t s = 0; s < nsc; s++)
            for (int k = 0; k < o->seeds; k++) {
                gate_run *r = &runs[s * (size_t)o->seeds + (size_t)k];
                if (r->failed[0])
                    printf("%s %s seed %d (%s)", nf++ ? ";" : "", sc[s]->file, o->first_seed + k,
                           r->failed);
            }
        printf("\n");
    } else if (qc_interrupted) {
        printf("qchaos: verdict: INCONCLUSIVE: the gate was interrupted (SIGINT / SIGTERM) "
               "before all its runs were done\n");
    } else if (code == 3) {
        printf("qchaos: verdict: ERROR: some runs could not be done (exit 2/3: see their "
               "run.log)\n");
    } else if (code == 4) {
        printf("qchaos: verdict: INCONCLUSIVE: no violation, but a judged checker had no "
               "opportunity in some run (see the table)\n");
    } else {
        printf("qchaos: verdict: PASS: %zu scenarios x %d seeds, no violation\n", nsc, o->seeds);
    }
    for (size_t k = 0; k < nsc * (size_t)o->seeds; k++)
        json_decref(runs[k].results);
    free(runs);
    qc_protocol_destroy(proto);
    return code;
}
