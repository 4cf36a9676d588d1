/*
 * audit.c - from ledgers to a verdict.  A report never re-derives a verdict:
 * it is computed here once and written to results.json.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "audit.h"
#include "figures.h"
#include "../reports/report.h"

#include <errno.h>
#include <ftw.h>
#include <unistd.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

int qc_numbered_name(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(name, prefix, n) || name[n] == '\0')
        return 0;
    for (const char *p = name + n; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return (flag == FTW_DP ? rmdir(path) : unlink(path)) != 0 ? -1 : 0;
}

int qc_remove_tree(const char *path)
{
    return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 ? -1 : 0;
}

int qc_mkdirs(const char *path, qc_err *err)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                goto fail;
            *p = '/';
        }
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        goto fail;
    return 0;
fail:
    return qc_err_set(err, QC_EIO, "cannot create folder '%s': %s", buf, strerror(errno));
}

int qc_audit_is_judged(const char *judged, const char *name)
{
    if (!judged || !judged[0])
        return 1;
    size_t n = strlen(name);
    for (const char *p = judged; (p = strstr(p, name)); p += n) {
        int start = p == judged || p[-1] == ',';
        int end = p[n] == 0 || p[n] == ',';
        if (start && end)
            return 1;
    }
    return 0;
}

int qc_audit_exit_code(const qc_check *c, size_t n, const char *judged)
{
    int inconclusive = 0;
    for (size_t i = 0; i < n; i++) {
        if (c[i].verdict == QC_FAIL)
            return 1;
        if (c[i].verdict == QC_INCONCLUSIVE && qc_audit_is_judged(judged, c[i].name))
            inconclusive = 1;
    }
    return inconclusive ? 4 : 0;
}

/* Client time (ms since the run started) of the event with seq, or -1. */
static double seq_time(const qc_history *h, int64_t seq)
{
    size_t lo = 0, hi = h->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->ev[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < h->n && h->ev[lo].seq == seq) ? h->ev[lo].t : -1;
}

/* Seconds from the first claim to the earliest evidence of a violation:
 * the time a run needed to catch the bug; -1 without violations. */
static double first_violation_s(const qc_history *h, const qc_check *c)
{
    double first_claim = -1, best = -1;
    for (size_t i = 0; i < h->n; i++) {
        if (h->ev[i].type == QC_EV_INVOKE && h->ev[i].op == QC_OP_CLAIM) {
            first_claim = h->ev[i].t;
            break;
        }
    }
    for (size_t i = 0; i < c->nstored; i++) {
        const qc_violation *v = &c->v[i];
        double t = -1;
        for (int k = 0; k < v->nseq; k++) {
            double x = seq_time(h, v->seq[k]);
            if (x >= 0 && (t < 0 || x > t))
                t = x; /* a violation is proven by its last piece of evidence */
        }
        if (t >= 0 && (best < 0 || t < best))
            best = t;
    }
    if (best < 0)
        return -1;
    return (best - (first_claim >= 0 ? first_claim : 0)) / 1000.0;
}

static json_t *check_json(const qc_history *h, const qc_check *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(c->name));
    json_object_set_new(o, "judged", json_boolean(qc_audit_is_judged(h->info.checkers, c->name)));
    json_object_set_new(o, "verdict", json_string(qc_verdict_name(c->verdict)));
    json_object_set_new(o, "opportunities", json_integer(c->opportunities));
    json_object_set_new(o, "violations_total", json_integer(c->nviolations));
    json_object_set_new(o, "summary", json_string(c->summary));
    json_object_set_new(o, "time_s", json_real((double)(int64_t)(c->elapsed_ms + 0.5) / 1000.0)); /* whole ms */
    double fv = first_violation_s(h, c);
    json_object_set_new(o, "first_violation_s",
                        fv >= 0 ? json_real(qc_round(fv, 0.001)) : json_null());
    json_t *vs = json_array();
    for (size_t i = 0; i < c->nstored; i++) {
        const qc_violation *v = &c->v[i];
        json_t *vo = json_object();
        if (v->job != QC_NO_JOB)
            json_object_set_new(vo, "job", json_integer(v->job));
        json_t *seqs = json_array();
        for (int k = 0; k < v->nseq; k++)
            json_array_append_new(seqs, json_integer(v->seq[k]));
        json_object_set_new(vo, "seq", seqs);
        if (v->nwitness > 0) {
            json_t *ws = json_array();
            for (int k = 0; k < v->nwitness; k++)
                json_array_append_new(ws, json_integer(v->wseq[k]));
            json_object_set_new(vo, "witness", ws);
        }
        json_object_set_new(vo, "explanation", json_string(v->msg));
        json_array_append_new(vs, vo);
    }
    json_object_set_new(o, "violations", vs);
    return o;
}

/* Whether the run was cut short, and why in words: no "end" event (the
 * harness was killed or crashed; a torn last line says it died mid-write)
 * or an end event saying the run was interrupted before the drain. */
static int cut_short(const qc_history *h, char *why, size_t n)
{
    for (size_t i = h->n; i-- > 0;)
        if (h->ev[i].type == QC_EV_END) {
            if (qc_x(h->ev[i].x)->interrupted != 1)
                return 0;
            snprintf(why, n, "the run was interrupted (SIGINT/SIGTERM) before the queue drained");
            return 1;
        }
    snprintf(why, n, "the ledger has no end event: the harness was killed or crashed before "
             "the run finished%s", h->torn ? " (its last line is torn)" : "");
    return 1;
}

static void print_table(FILE *out, const qc_check *c, size_t n, const char *judged)
{
    fprintf(out, "%-22s %-21s %13s %10s  %s\n", "checker", "verdict", "opportunities",
            "violations", "summary");
    /* Judged checkers first; the others are informative (a FAIL still
     * counts, an INCONCLUSIVE does not change the exit code). */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < n; i++) {
            int j = qc_audit_is_judged(judged, c[i].name);
            if (j != (pass == 0))
                continue;
            char v[32];
            snprintf(v, sizeof v, "%s%s", qc_verdict_name(c[i].verdict), j ? "" : " (info)");
            fprintf(out, "%-22s %-21s %13ld %10ld  %s\n", c[i].name, v, c[i].opportunities,
                    c[i].nviolations, c[i].summary);
        }
    }
    for (size_t i = 0; i < n; i++) {
        size_t shown = c[i].nstored < 5 ? c[i].nstored : 5;
        for (size_t k = 0; k < shown; k++) {
            const qc_violation *v = &c[i].v[k];
            fprintf(out, "  %s: %s [seq", c[i].name, v->msg);
            for (int s = 0; s < v->nseq; s++)
                fprintf(out, " %" PRId64, v->seq[s]);
            if (v->nwitness > 0) {
                fprintf(out, "; witness");
                for (int s = 0; s < v->nwitness; s++)
                    fprintf(out, " %" PRId64, v->wseq[s]);
            }
            fprintf(out, "]\n");
        }
        if (c[i].nviolations > (long)shown)
            fprintf(out, "  %s: ... %ld more violations in results.json\n", c[i].name,
                    c[i].nviolations - (long)shown);
    }
}

/* What a re-audit can say about the run from its (first) ledger's header
 * line: scenario, protocol, engine, where the protocol was tested, the
 * versions.  NULL when the header cannot be read. */
static json_t *header_facts(const char *ledger)
{
    FILE *f = fopen(ledger, "rb");
    char *line = NULL;
    size_t cap = 0;
    json_t *h = NULL, *out = NULL;

    if (f == NULL)
        return NULL;
    if (getline(&line, &cap, f) > 0)
        h = json_loads(line, 0, NULL);
    free(line);
    fclose(f);
    if (!json_is_object(h) || !json_is_string(json_object_get(h, "type")) ||
        strcmp(json_string_value(json_object_get(h, "type")), "header") != 0) {
        json_decref(h);
        return NULL;
    }
    out = json_object();
    static const char *const keys[] = {"scenario", "scenario_file", "protocol", "engine",
                                       "tested_where"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        json_t *v = json_object_get(h, keys[i]);
        if (json_is_string(v))
            json_object_set(out, keys[i], v);
    }
    json_t *ver = json_object();
    if (json_is_string(json_object_get(h, "qchaos")))
        json_object_set(ver, "qchaos", json_object_get(h, "qchaos"));
    if (json_is_string(json_object_get(h, "server")))
        json_object_set(ver, "server", json_object_get(h, "server"));
    json_object_set_new(out, "versions", ver);
    if (json_is_object(json_object_get(h, "target")))
        json_object_set(out, "target", json_object_get(h, "target"));
    json_decref(h);
    return out;
}

void qc_audit_verdict_line(const qc_check *c, size_t n, const char *judged, int interrupted,
                           char *buf, size_t size)
{
    int code = qc_audit_exit_code(c, n, judged);
    size_t len = 0;
    long njudged = 0, failed = 0, inconclusive = 0;

    for (size_t i = 0; i < n; i++) {
        njudged += qc_audit_is_judged(judged, c[i].name);
        failed += c[i].verdict == QC_FAIL;
        inconclusive += c[i].verdict == QC_INCONCLUSIVE && qc_audit_is_judged(judged, c[i].name);
    }
#define ADD(...)                                                                                   \
    do {                                                                                           \
        if (len < size)                                                                            \
            len += (size_t)snprintf(buf + len, size - len, __VA_ARGS__);                           \
    } while (0)
    buf[0] = '\0';
    if (code == 1) {
        ADD("qchaos: verdict: FAIL: ");
        for (size_t i = 0, k = 0; i < n; i++)
            if (c[i].verdict == QC_FAIL)
                ADD("%s%s (%ld violation%s)", k++ ? ", " : "", c[i].name, c[i].nviolations,
                    c[i].nviolations == 1 ? "" : "s");
    } else if (code == 4) {
        ADD("qchaos: verdict: INCONCLUSIVE: no violation, but %ld judged checker%s had no "
            "opportunity (",
            inconclusive, inconclusive == 1 ? "" : "s");
        for (size_t i = 0, k = 0; i < n; i++)
            if (c[i].verdict == QC_INCONCLUSIVE && qc_audit_is_judged(judged, c[i].name))
                ADD("%s%s", k++ ? ", " : "", c[i].name);
        ADD(")");
        if (interrupted)
            ADD("; the run was interrupted before its drain: liveness is not judged");
        else if (judged == NULL || judged[0] == '\0')
            ADD("; no scenario named the checkers it judges ([checks] judge), so every checker "
                "is judged");
    } else {
        ADD("qchaos: verdict: PASS: %ld judged checker%s passed with opportunities, no "
            "violation in any of the %zu",
            njudged, njudged == 1 ? "" : "s", n);
    }
#undef ADD
    (void)failed;
}

/* results.json's "figures" (figures.h), samples.csv beside it, and the
 * throughput over the work interval in "metrics" (work_s, jobs_per_s,
 * jobs_per_s_over): the same object the runner passed, so it prints them.
 * A figure that cannot be computed (out of memory) is left out, with a
 * warning; the verdicts are written all the same. */
static void add_figures(json_t *root, const qc_history *h, const char *out_dir)
{
    qc_sample *s = NULL;
    size_t ns = 0;
    qc_err e = {0};
    if (qc_figures_samples(h, 1000, &s, &ns, &e) != 0)
        fprintf(stderr, "qchaos: samples left out: %s\n", e.msg);
    json_t *f = qc_figures_json(h, s, ns, 1000);
    if (f)
        json_object_set_new(root, "figures", f);
    char path[2048];
    snprintf(path, sizeof path, "%s/samples.csv", out_dir);
    if (qc_mkdirs(out_dir, &e) == 0 && qc_figures_write_csv(path, s, ns, 1000, &e) != 0)
        fprintf(stderr, "qchaos: %s\n", e.msg);
    free(s);
    json_t *m = json_object_get(root, "metrics");
    if (!json_is_object(m)) {
        m = json_object();
        json_object_set_new(root, "metrics", m);
    }
    qc_work w;
    qc_figures_work(h, &w);
    json_object_set_new(m, "work_s", w.from_ms >= 0 ? json_real(qc_round((w.to_ms - w.from_ms) /
                                                                         1000.0, 0.001))
                                                    : json_null());
    json_object_set_new(m, "jobs_per_s", json_real(w.jobs_per_s));
    json_object_set_new(m, "jobs_per_s_over", json_string("work_s: first claim sent to last "
                                                          "acknowledged complete (client clock)"));
}

int qc_audit(const char *const *ledgers, int n, const char *out_dir, json_t *metrics, FILE *out,
             qc_err *err)
{
    return qc_audit_ex(ledgers, n, out_dir, metrics, out, NULL, 0, err);
}

int qc_audit_ex(const char *const *ledgers, int n, const char *out_dir, json_t *metrics,
                FILE *out, char *verdict, size_t verdict_size, qc_err *err)
{
    char line[1024];
    qc_history h = {0};
    int rc = qc_history_load(&h, ledgers, n, err);
    if (rc != 0) {
        qc_history_fini(&h);
        /* a ledger that cannot be read or parsed is bad input */
        return rc == QC_EINVAL || rc == QC_EIO ? 2 : 3;
    }
    if (h.info.shard_count > 1 &&
        (h.info.shard_ledgers != h.info.shard_count || h.info.shard_dup)) {
        /* A shard's events missing would look like jobs never enqueued or
         * never done: the merged history is judged whole or not at all. */
        qc_err_set(err, QC_EINVAL,
                   "the run was split over %d processes (qchaos run --shard I/%d): %s; give "
                   "every shard's ledger once",
                   h.info.shard_count, h.info.shard_count,
                   h.info.shard_dup ? "two of the ledgers given are the same shard's"
                                    : "the ledgers given are not all of its shards'");
        qc_history_fini(&h);
        return 2;
    }
    if (h.torn)
        fprintf(stderr, "qchaos: skipped %zu torn line(s) at the end of the ledger\n", h.torn);
    qc_check *c = NULL;
    size_t nc = 0;
    if (qc_check_all(&h, &c, &nc) != 0) {
        qc_history_fini(&h);
        qc_err_set(err, QC_ENOMEM, "out of memory while auditing");
        return 3;
    }
    char why[200] = "";
    int cut = cut_short(&h, why, sizeof why);
    if (cut)
        fprintf(out, "qchaos: the run was cut short: %s; verdicts cover only what it recorded\n",
                why);
    print_table(out, c, nc, h.info.checkers);
    qc_witness_counts wc;
    qc_witness_counts_get(&h, &wc);
    if (wc.on)
        fprintf(out,
                "qchaos: witness: %ld row changes%s; %ld answers linked to their row; %ld info "
                "outcomes (%ld of complete): %ld resolved by their session's row change "
                "(%ld committed, %ld not committed), %ld unresolved\n",
                wc.rows, wc.complete ? "" : " (read in part)", wc.linked, wc.info,
                wc.info_complete, wc.committed + wc.not_committed, wc.committed,
                wc.not_committed, wc.unresolved);
    int code = qc_audit_exit_code(c, nc, h.info.checkers);
    qc_audit_verdict_line(c, nc, h.info.checkers, qc__run_interrupted(&h), line, sizeof line);
    /* A schedule (script, replay) that was not carried out: what it was to
     * show may not have happened, so a run without a violation proves
     * nothing (a violation found on the way is still real). */
    for (size_t i = 0; i < h.n; i++) {
        const qc_event *e = &h.ev[i];
        if (e->type != QC_EV_NOTE || qc_x(e->x)->note == NULL || strcmp(qc_x(e->x)->note, "schedule abandoned"))
            continue;
        fprintf(out, "qchaos: the schedule was not carried out: %s\n",
                qc_s(e->error) != NULL ? qc_s(e->error) : "(no reason recorded)");
        if (code == 0) {
            code = 4;
            snprintf(line, sizeof line,
                     "qchaos: verdict: INCONCLUSIVE: no violation, but the schedule was not "
                     "carried out: %.900s",
                     qc_s(e->error) != NULL ? qc_s(e->error) : "(no reason recorded)");
        }
        break;
    }
    if (verdict != NULL && verdict_size > 0)
        snprintf(verdict, verdict_size, "%s", line); /* the caller ends with it */
    else
        fprintf(out, "%s\n", line);
    if (out_dir) {
        json_t *root = json_object();
        json_object_set_new(root, "schema", json_string("qchaos-results/1"));
        json_object_set_new(root, "seed", json_integer((json_int_t)h.info.seed));
        json_object_set_new(root, "events", json_integer((json_int_t)h.n));
        json_object_set_new(root, "torn_lines", json_integer((json_int_t)h.torn));
        json_object_set_new(root, "cut_short", json_boolean(cut));
        /* A scripted race that could not be set up on this protocol (the
         * schedule released, sched.c): the run is judged as it ran, so a
         * PASS says the race did not happen, not that the protocol
         * survived it; the gate shows why beside the row. */
        for (size_t i = 0; i < h.n; i++) {
            const qc_event *e = &h.ev[i];
            if (e->type == QC_EV_NOTE && qc_x(e->x)->note != NULL &&
                !strcmp(qc_x(e->x)->note, "schedule released")) {
                json_object_set_new(root, "schedule_released",
                                    json_string(qc_s(e->error) != NULL ? qc_s(e->error)
                                                                        : "(no reason recorded)"));
                break;
            }
        }
        if (cut)
            json_object_set_new(root, "cut_short_reason", json_string(why));
        json_t *arr = json_array();
        for (size_t i = 0; i < nc; i++)
            json_array_append_new(arr, check_json(&h, &c[i]));
        json_object_set_new(root, "checkers", arr);
        if (wc.on) {
            json_t *w = json_object();
            json_object_set_new(w, "table", json_string(h.info.witness_table));
            json_object_set_new(w, "rows", json_integer(wc.rows));
            json_object_set_new(w, "complete", json_boolean(wc.complete));
            json_object_set_new(w, "linked_answers", json_integer(wc.linked));
            json_object_set_new(w, "info_outcomes", json_integer(wc.info));
            json_object_set_new(w, "info_outcomes_of_complete", json_integer(wc.info_complete));
            json_object_set_new(w, "resolved_committed", json_integer(wc.committed));
            json_object_set_new(w, "resolved_not_committed", json_integer(wc.not_committed));
            json_object_set_new(w, "unresolved", json_integer(wc.unresolved));
            json_object_set_new(root, "witness", w);
        }
        json_object_set_new(root, "exit_code", json_integer(code));
        json_t *jl = json_array();
        for (size_t i = 0; i < nc; i++)
            if (qc_audit_is_judged(h.info.checkers, c[i].name))
                json_array_append_new(jl, json_string(c[i].name));
        json_object_set_new(root, "judged", jl);
        json_object_set_new(root, "verdict",
                            json_string(code == 0 ? "PASS" : code == 1 ? "FAIL" : "INCONCLUSIVE"));
        json_object_set_new(root, "verdict_line",
                            json_string(strncmp(line, "qchaos: verdict: ", 17) == 0 ? line + 17
                                                                                      : line));
        /* What was tested (scenario, fault plan planned / fired): reports/ */
        json_object_set_new(root, "tested", qc_report_tested_json(&h, n > 0 ? ledgers[0] : NULL));
        if (metrics) {
            json_object_update(root, metrics);
        } else if (n > 0) { /* a re-audit: what the ledger says about the run */
            json_t *facts = header_facts(ledgers[0]);
            if (facts != NULL)
                json_object_update(root, facts);
            json_decref(facts);
        }
        add_figures(root, &h, out_dir);
        char path[2048];
        snprintf(path, sizeof path, "%s/results.json", out_dir);
        if (qc_mkdirs(out_dir, err) != 0) {
            code = 3;
        } else if (json_dump_file(root, path, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) != 0) {
            qc_err_set(err, QC_EIO, "cannot write '%s'", path);
            code = 3;
        }
        json_decref(root);
    }
    qc_checks_free(c, nc);
    /* With an out folder the reports come next and load the same ledgers
     * (qc_report_write): let them reuse this history instead of parsing the
     * ledgers a second time. */
    if (out_dir != NULL)
        qc_history_keep(&h, ledgers, n);
    else
        qc_history_fini(&h);
    return code;
}
