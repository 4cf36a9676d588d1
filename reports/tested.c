/*
 * tested.c - what a run tested, for results.json ("tested") and the
 * reports: the scenario (its description, workload, lease, bounds), the
 * protocol's role (a protocol under test, or a known-broken mutant with its
 * header's description), the fault plan with the faults that actually fired
 * per kind, and a short glossary of the checkers.
 *
 * Sources: the ledger's header line (the scenario's values as the run used
 * them, README "Ledger"), the "fault plan" notes (jobs the seeded plan gave
 * each fault) and the fault events (each fault that fired: a client-side
 * fault once per firing, a poison job once per attempt; the nemesis's
 * terminate_session, restart and pause once each).  Nothing here judges:
 * the counts are facts of the ledger.
 *
 * Invariants: every key is present in the output whether or not the header
 * had it (JSON null when unknown), so a reader never has to guess between
 * "0" and "not recorded"; fault kinds are listed in a fixed order, planned
 * ones first.
 */
#include "report.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- glossary ---------------------------------------------------------- */

static const struct gloss {
    const char *name, *means, *opportunity;
} glossary[] = {
    {"exclusive_claim",
     "no two workers hold a live lease on one job at once (server times), and no job is "
     "claimed again while or after it is being completed",
     "a claim with a server time, or a completed job watched for a later claim"},
    {"double_complete", "a job is completed (rows > 0) at most once", "an acknowledged complete"},
    {"no_lost_jobs", "every enqueued job ends done or dead, and no job appears from nowhere",
     "an enqueued job"},
    {"acked_durable", "a complete the queue acknowledged (rows > 0) is done in the final snapshot",
     "an acknowledged complete"},
    {"stale_token_rejected",
     "a complete, renew or fail sent after its job changed hands is refused",
     "a request sent after its job was claimed by someone else (or with a rotated token)"},
    {"no_false_success", "a worker never counts a 0-row complete as a success",
     "a complete answered with 0 rows"},
    {"effects_once", "each job's effect is applied once (the sink deduplicates by op key)",
     "a re-delivery of a job's effect"},
    {"exclusive_run",
     "no two workers run one job (claim to effect) at once, nor two jobs of one group",
     "a run that followed another run of its job"},
    {"own_lease",
     "a worker that keeps a lease deadline of its own (lease_ms from sending the claim or its "
     "last granted renew) starts no effect and sends no complete past it",
     "an effect or a first complete of a worker that keeps its own deadline"},
    {"recovery", "a job abandoned by a fault becomes claimable again once its lease has expired",
     "a fault that left a job without its owner (kill, stall, lost request, crashing poison)"},
    {"bounded_failure",
     "a poison job is claimed at most max_attempts times and ends dead with its error kept",
     "a poison job"},
    {"no_early_reap", "a lease is never taken away before its lease_until",
     "a reap of a known lease, or an owner's request sent before lease_until"},
    {"batch_bound", "a claim returns at most the jobs it asked for", "a non-empty claim"},
    {"bounded_idle_polling",
     "an idle worker backs off (empty claims per second and pauses bounded) and still picks up "
     "due work",
     "an idle streak, a pause after an empty claim, or an empty claim judged against a due job"},
    {"group_exclusive", "two jobs of one group are never leased at once",
     "a claim of a grouped job"},
    {"group_order", "a group's jobs complete in the order they were enqueued",
     "a completion of a grouped job"},
    {"message_once",
     "the physical copies of one message (its :message_id, [workload] copies) apply its effect "
     "once between them: the queue's dedup lets one copy run and suppresses the others",
     "a message with two or more of its copies claimed"},
    {"retry_delay",
     "a job given back by fail with a retry delay is not claimed again before the delay has "
     "passed",
     "a fail with a retry delay answered with rows > 0, followed by a claim of its job"},
    {"witness_agrees",
     "the server's witness (a trigger's record of every row change) and the ledger tell the same "
     "story: each change the client took as made is there, each change there was made by a "
     "request the ledger has",
     "a run with the witness on"},
    {"witness_owner",
     "by the witness, no worker session changes a job another session owns (a stale request "
     "the queue accepted)",
     "a run with the witness on, a worker session's change of a job"},
    {"worker_progress",
     "a live worker makes progress: its requests do not all fail for longer than the bound, and "
     "its session is not left in a transaction between its requests",
     "a worker incarnation watched longer than the bound, or a sample of its session between "
     "requests"},
};

const char *qc__glossary(const char *checker, const char **opportunity)
{
    for (size_t i = 0; i < sizeof glossary / sizeof glossary[0]; i++)
        if (strcmp(glossary[i].name, checker) == 0) {
            if (opportunity != NULL)
                *opportunity = glossary[i].opportunity;
            return glossary[i].means;
        }
    if (opportunity != NULL)
        *opportunity = NULL;
    return NULL;
}

/* ---- the header -------------------------------------------------------- */

/* The ledger's first line as a JSON object, or NULL. */
static json_t *read_header(const char *ledger)
{
    FILE *f;
    char *line = NULL;
    size_t cap = 0;
    json_t *h = NULL;

    if (ledger == NULL || (f = fopen(ledger, "rb")) == NULL)
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
    return h;
}

/* Copies key of from (or null) into to, under the name as. */
static void copy(json_t *to, const char *as, json_t *from, const char *key)
{
    json_t *v = json_object_get(from, key);

    json_object_set_new(to, as, v != NULL ? json_deep_copy(v) : json_null());
}

/* ---- the fault plan ---------------------------------------------------- */

static const char *const kinds[] = {
    "kill_after_claim",      "kill_after_effect", "stall_beyond_lease", "stall_in_work",
    "stall_until_reclaimed", "lost_ack",          "lost_request",       "poison",
    "terminate_session",     "restart_server",    "pause_server",
    "failover",              "switchover",        "unfenced_primary",
    "graceful_stop", /* client-side too; after the others: indexes 8-10 are named below */
    "late_renew",
    "lost_ack_on_fail",
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

static json_t *fault_plan(const qc_history *h, json_t *hdr)
{
    long planned[NKINDS + 1], fired[NKINDS + 1];
    json_t *spec = json_object_get(hdr, "faults"), *tested = json_object_get(hdr, "tested");
    json_t *arr = json_array();
    size_t other = NKINDS; /* fired kinds this version does not list */

    for (size_t k = 0; k <= NKINDS; k++)
        planned[k] = -1, fired[k] = 0;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        size_t k;
        if (qc_x(e->x)->fault == NULL)
            continue;
        for (k = 0; k < NKINDS && strcmp(kinds[k], qc_x(e->x)->fault) != 0; k++)
            ;
        if (e->type == QC_EV_NOTE && qc_x(e->x)->note != NULL && strcmp(qc_x(e->x)->note, "fault plan") == 0)
            planned[k] = qc_x(e->x)->planned;
        else if (e->type == QC_EV_FAULT)
            fired[k]++;
    }
    for (size_t k = 0; k < NKINDS; k++) {
        json_t *sv = json_object_get(spec, kinds[k]), *o;
        double every = 0;
        if (planned[k] < 0 && fired[k] == 0 && sv == NULL) {
            /* server-side faults come from [nemesis], not [faults] */
            if (k == 8)
                every = json_number_value(json_object_get(tested, "terminate_every_ms"));
            else if (k == 9)
                every = json_number_value(json_object_get(tested, "restart_at_s"));
            else if (k == 10)
                every = json_number_value(json_object_get(tested, "pause_at_s"));
            if (every <= 0)
                continue;
        }
        o = json_object();
        json_object_set_new(o, "kind", json_string(kinds[k]));
        if (json_is_integer(sv))
            json_object_set_new(o, "spec",
                                json_sprintf("%lld jobs", (long long)json_integer_value(sv)));
        else if (json_is_real(sv))
            json_object_set_new(o, "spec", json_sprintf("%g%% of jobs", json_real_value(sv) * 100));
        else if (k == 8)
            json_object_set_new(o, "spec",
                                json_sprintf("every %.0f ms", json_number_value(json_object_get(
                                                                  tested, "terminate_every_ms"))));
        else if (k == 9)
            json_object_set_new(o, "spec",
                                json_sprintf("at %g s", json_number_value(json_object_get(
                                                            tested, "restart_at_s"))));
        else if (k == 10)
            json_object_set_new(
                o, "spec",
                json_sprintf("at %g s for %.0f ms",
                             json_number_value(json_object_get(tested, "pause_at_s")),
                             json_number_value(json_object_get(tested, "pause_ms"))));
        else
            json_object_set_new(o, "spec", json_null());
        json_object_set_new(o, "planned", planned[k] >= 0 ? json_integer(planned[k]) : json_null());
        json_object_set_new(o, "fired", json_integer(fired[k]));
        json_array_append_new(arr, o);
    }
    if (fired[other] > 0) {
        json_t *o = json_object();
        json_object_set_new(o, "kind", json_string("other"));
        json_object_set_new(o, "spec", json_null());
        json_object_set_new(o, "planned", json_null());
        json_object_set_new(o, "fired", json_integer(fired[other]));
        json_array_append_new(arr, o);
    }
    return arr;
}

/* The leading comment block of a scenario file (";" or "#" lines before
 * the first section), joined with spaces, or NULL: what a scenario without
 * a description key says about itself. */
static json_t *file_comment(const char *path)
{
    char line[512], text[1536];
    size_t len = 0;
    FILE *f;

    if (path == NULL || path[0] == '\0' || (f = fopen(path, "r")) == NULL)
        return NULL;
    text[0] = '\0';
    while (fgets(line, sizeof line, f) != NULL) {
        char *p = line;
        if (*p != ';' && *p != '#')
            break;
        while (*p == ';' || *p == '#' || *p == ' ')
            p++;
        p[strcspn(p, "\r\n")] = '\0';
        if (*p != '\0' && len + strlen(p) + 2 < sizeof text)
            len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", len ? " " : "", p);
    }
    fclose(f);
    return len > 0 ? json_string(text) : NULL;
}

json_t *qc_report_tested_json(const qc_history *h, const char *ledger)
{
    json_t *hdr = read_header(ledger), *t = json_object(), *o, *x;
    json_t *tested;
    const char *expect;

    if (t == NULL)
        return NULL;
    if (hdr == NULL)
        hdr = json_object(); /* an unreadable header: every value null */
    tested = json_object_get(hdr, "tested");
    copy(t, "description", tested, "description");
    x = json_object_get(t, "description");
    if (!json_is_string(x) || json_string_length(x) == 0) {
        /* no description key: the scenario file's own header comment */
        json_t *c = file_comment(json_string_value(json_object_get(hdr, "scenario_file")));
        if (c != NULL) {
            json_object_set_new(t, "description", c);
            json_object_set_new(t, "description_from",
                                json_string("the scenario file's header comment"));
        }
    }
    expect = json_string_value(json_object_get(tested, "protocol_expect"));
    o = json_object();
    copy(o, "file", hdr, "protocol");
    json_object_set_new(o, "role",
                        json_string(expect != NULL && expect[0] != '\0' ? "mutant" : "protocol"));
    copy(o, "description", tested, "protocol_description");
    copy(o, "expect", tested, "protocol_expect");
    copy(o, "base", tested, "protocol_base");
    copy(o, "model", hdr, "model");
    copy(o, "engine", hdr, "engine");
    json_object_set_new(t, "protocol", o);

    o = json_object();
    copy(o, "workers", hdr, "workers");
    copy(o, "jobs", hdr, "jobs");
    copy(o, "batch", hdr, "batch");
    copy(o, "groups", tested, "groups");
    copy(o, "work_ms_min", tested, "work_ms_min");
    copy(o, "work_ms_max", tested, "work_ms_max");
    copy(o, "duration_s", hdr, "duration_s");
    copy(o, "feed_bursts", tested, "feed_bursts");
    copy(o, "feed_jobs", tested, "feed_jobs");
    copy(o, "pooler", hdr, "pooler");
    json_object_set_new(t, "workload", o);

    o = json_object();
    copy(o, "lease_ms", hdr, "lease_ms");
    copy(o, "max_attempts", hdr, "max_attempts");
    copy(o, "reaper_interval_ms", hdr, "reaper_interval_ms");
    copy(o, "retry_delay_ms", tested, "retry_delay_ms");
    copy(o, "statement_timeout_ms", hdr, "statement_timeout_ms");
    copy(o, "heartbeat", hdr, "heartbeat");
    copy(o, "sink", hdr, "sink");
    json_object_set_new(t, "lease", o);

    o = json_object();
    copy(o, "recovery_slack_ms", hdr, "recovery_slack_ms");
    /* The recovery bound the checker documents: lease + reaper interval +
     * slack (harness/checkers.h, qc_check_recovery). */
    x = json_object_get(hdr, "lease_ms");
    if (json_is_integer(x) && json_is_integer(json_object_get(hdr, "reaper_interval_ms")) &&
        json_is_integer(json_object_get(hdr, "recovery_slack_ms")))
        json_object_set_new(
            o, "recovery_bound_ms",
            json_integer(json_integer_value(x) +
                         json_integer_value(json_object_get(hdr, "reaper_interval_ms")) +
                         json_integer_value(json_object_get(hdr, "recovery_slack_ms"))));
    else
        json_object_set_new(o, "recovery_bound_ms", json_null());
    copy(o, "max_idle_polls_per_s", hdr, "max_idle_polls_per_s");
    copy(o, "max_idle_pause_ms", hdr, "max_idle_pause_ms");
    copy(o, "max_pickup_ms", hdr, "max_pickup_ms");
    copy(o, "drain_timeout_s", tested, "drain_timeout_s");
    json_object_set_new(t, "bounds", o);

    o = json_object();
    copy(o, "stall_factor", tested, "stall_factor");
    copy(o, "restart_delay_ms", tested, "restart_delay_ms");
    copy(o, "poison_mode", hdr, "poison_mode");
    copy(o, "terminate_every_ms", tested, "terminate_every_ms");
    copy(o, "restart_at_s", tested, "restart_at_s");
    copy(o, "pause_at_s", tested, "pause_at_s");
    copy(o, "pause_ms", tested, "pause_ms");
    json_object_set_new(t, "fault_settings", o);
    json_object_set_new(t, "fault_plan", fault_plan(h, hdr));
    json_decref(hdr);
    return t;
}

/* ---- the "What was tested" section of report.md and report.html -------- */

typedef struct row {
    char key[64], value[192];
} row;

/* "1500" / "0.2" / "yes" for a JSON value; "-" when null or absent. */
static void fmt_value(json_t *v, const char *unit, char *buf, size_t n)
{
    if (json_is_integer(v))
        snprintf(buf, n, "%lld%s", (long long)json_integer_value(v), unit);
    else if (json_is_real(v))
        snprintf(buf, n, "%g%s", json_real_value(v), unit);
    else if (json_is_true(v))
        snprintf(buf, n, "yes");
    else if (json_is_false(v))
        snprintf(buf, n, "no");
    else if (json_is_string(v))
        snprintf(buf, n, "%s", json_string_value(v));
    else
        snprintf(buf, n, "-");
}

static size_t add_row(row *rows, size_t n, size_t max, const char *key, json_t *obj,
                      const char *field, const char *unit)
{
    if (n >= max)
        return n;
    snprintf(rows[n].key, sizeof rows[n].key, "%s", key);
    fmt_value(json_object_get(obj, field), unit, rows[n].value, sizeof rows[n].value);
    return n + 1;
}

/* The settings a reviewer needs, as key / value rows. */
static size_t settings_rows(json_t *t, row *rows, size_t max)
{
    json_t *w = json_object_get(t, "workload"), *l = json_object_get(t, "lease");
    json_t *b = json_object_get(t, "bounds"), *fs = json_object_get(t, "fault_settings");
    size_t n = 0;
    char work[64];

    n = add_row(rows, n, max, "workers", w, "workers", "");
    n = add_row(rows, n, max, "jobs enqueued before the workers start", w, "jobs", "");
    n = add_row(rows, n, max, "jobs asked for per claim (batch)", w, "batch", "");
    n = add_row(rows, n, max, "groups", w, "groups", "");
    if (n < max) {
        json_t *lo = json_object_get(w, "work_ms_min"), *hi = json_object_get(w, "work_ms_max");
        if (json_is_integer(lo) && json_is_integer(hi) &&
            json_integer_value(lo) != json_integer_value(hi))
            snprintf(work, sizeof work, "%lld-%lld ms", (long long)json_integer_value(lo),
                     (long long)json_integer_value(hi));
        else
            fmt_value(lo, " ms", work, sizeof work);
        snprintf(rows[n].key, sizeof rows[n].key, "simulated work per job");
        snprintf(rows[n].value, sizeof rows[n].value, "%s", work);
        n++;
    }
    n = add_row(rows, n, max, "chaos phase (0 = until drained)", w, "duration_s", " s");
    n = add_row(rows, n, max, "lease", l, "lease_ms", " ms");
    n = add_row(rows, n, max, "max attempts", l, "max_attempts", "");
    n = add_row(rows, n, max, "reaper interval", l, "reaper_interval_ms", " ms");
    n = add_row(rows, n, max, "retry delay after fail", l, "retry_delay_ms", " ms");
    n = add_row(rows, n, max, "statement timeout", l, "statement_timeout_ms", " ms");
    n = add_row(rows, n, max, "heartbeat (renew every lease/3)", l, "heartbeat", "");
    n = add_row(rows, n, max, "effect sink", l, "sink", "");
    n = add_row(rows, n, max, "recovery bound (lease + reaper interval + slack)", b,
                "recovery_bound_ms", " ms");
    n = add_row(rows, n, max, "idle polls per worker in an idle streak, at most", b,
                "max_idle_polls_per_s", "/s");
    n = add_row(rows, n, max, "pause after an empty claim, at most", b, "max_idle_pause_ms", " ms");
    n = add_row(rows, n, max, "a due job claimed within", b, "max_pickup_ms", " ms");
    n = add_row(rows, n, max, "drain timeout", b, "drain_timeout_s", " s");
    n = add_row(rows, n, max, "stall length (x lease)", fs, "stall_factor", "");
    n = add_row(rows, n, max, "a killed worker restarts after", fs, "restart_delay_ms", " ms");
    n = add_row(rows, n, max, "poison mode", fs, "poison_mode", "");
    /* the nemesis only when it was on */
    if (json_number_value(json_object_get(fs, "terminate_every_ms")) > 0)
        n = add_row(rows, n, max, "nemesis: terminate a worker session every", fs,
                    "terminate_every_ms", " ms");
    if (json_number_value(json_object_get(fs, "restart_at_s")) > 0)
        n = add_row(rows, n, max, "nemesis: restart the server at", fs, "restart_at_s", " s");
    if (json_number_value(json_object_get(fs, "pause_at_s")) > 0) {
        n = add_row(rows, n, max, "nemesis: pause the server at", fs, "pause_at_s", " s");
        n = add_row(rows, n, max, "nemesis: pause for", fs, "pause_ms", " ms");
    }
    return n;
}

/* "Scenario chaos (scenarios/chaos.ini): Mixed chaos: ..." */
static void scenario_line(const qc__results *r, char *buf, size_t n)
{
    const char *d = json_string_value(json_object_get(r->tested_json, "description"));
    const char *from = json_string_value(json_object_get(r->tested_json, "description_from"));

    if (from != NULL && d != NULL) {
        snprintf(buf, n, "Scenario %s (%s), from %s: %s", r->scenario, r->scenario_file, from, d);
        return;
    }
    snprintf(buf, n, "Scenario %s%s%s%s: %s", r->scenario[0] ? r->scenario : "(unnamed)",
             r->scenario_file[0] ? " (" : "", r->scenario_file, r->scenario_file[0] ? ")" : "",
             d != NULL && d[0] != '\0' ? d : "(the scenario file has no description)");
}

void qc__protocol_line(const qc__results *r, char *buf, size_t n)
{
    json_t *p = json_object_get(r->tested_json, "protocol");
    const char *d = json_string_value(json_object_get(p, "description"));
    const char *ex = json_string_value(json_object_get(p, "expect"));
    const char *base = json_string_value(json_object_get(p, "base"));
    const char *model = json_string_value(json_object_get(p, "model"));

    if (r->mutant)
        snprintf(buf, n,
                 "Protocol %s is a known-broken protocol (a mutant) that the checkers must "
                 "catch: %s. Expected to fail: %s.%s%s%s It proves qchaos's detection power, "
                 "not a queue's safety.",
                 r->protocol, d != NULL ? d : "(no description)", ex != NULL ? ex : "-",
                 base != NULL ? " It overlays " : "", base != NULL ? base : "",
                 base != NULL ? "." : "");
    else
        snprintf(buf, n, "Protocol %s (%s model): %s.%s%s", r->protocol,
                 model != NULL ? model : "lease", d != NULL ? d : "(no description)",
                 r->tested[0] ? " Where it was tested: " : "", r->tested);
}

static long jlong(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);

    return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

void qc__tested_md(FILE *f, const qc__results *r)
{
    row rows[40];
    char line[1200];
    size_t n;
    json_t *plan, *x;
    size_t i;

    fputs("\n## What was tested\n\n", f);
    if (r->tested_json == NULL) {
        fputs("The ledger holds no header: the scenario is unknown.\n", f);
        return;
    }
    scenario_line(r, line, sizeof line);
    qc__md_escape(f, line);
    fputs("\n\n", f);
    qc__protocol_line(r, line, sizeof line);
    qc__md_escape(f, line);
    fputs("\n\n| setting | value |\n|---|---|\n", f);
    n = settings_rows(r->tested_json, rows, sizeof rows / sizeof rows[0]);
    for (i = 0; i < n; i++) {
        fputs("| ", f);
        qc__md_escape(f, rows[i].key);
        fputs(" | ", f);
        qc__md_escape(f, rows[i].value);
        fputs(" |\n", f);
    }
    plan = json_object_get(r->tested_json, "fault_plan");
    fputs("\nFault plan (seeded: the same seed gives the same plan) and the faults that fired "
          "(fault events in the ledger; a poison job fires once per attempt):\n\n",
          f);
    if (json_array_size(plan) == 0)
        fputs("No fault was planned and none fired.\n", f);
    else
        fputs("| fault | scenario | jobs planned | fired |\n|---|---|---:|---:|\n", f);
    json_array_foreach(plan, i, x)
    {
        long p = jlong(x, "planned");
        fputs("| ", f);
        qc__md_escape(f, json_string_value(json_object_get(x, "kind")));
        fputs(" | ", f);
        qc__md_escape(f, json_is_string(json_object_get(x, "spec"))
                             ? json_string_value(json_object_get(x, "spec"))
                             : "-");
        if (p >= 0)
            fprintf(f, " | %ld", p);
        else
            fputs(" | -", f);
        fprintf(f, " | %ld |\n", jlong(x, "fired"));
    }
    fputs("\nThe checkers (what each means, what counts as one opportunity):\n\n"
          "| checker | means | one opportunity is |\n|---|---|---|\n",
          f);
    for (i = 0; i < r->nc; i++) {
        const char *opp, *means = qc__glossary(r->c[i].name, &opp);
        fputs("| ", f);
        qc__md_escape(f, r->c[i].name);
        fputs(" | ", f);
        qc__md_escape(f, means != NULL ? means : "-");
        fputs(" | ", f);
        qc__md_escape(f, opp != NULL ? opp : "-");
        fputs(" |\n", f);
    }
}

void qc__tested_html(FILE *f, const qc__results *r)
{
    row rows[40];
    char line[1200];
    size_t n, i;
    json_t *plan, *x;

    fputs("\n<h2 id=\"tested\">What was tested</h2>\n", f);
    if (r->tested_json == NULL) {
        fputs("<p>The ledger holds no header: the scenario is unknown.</p>\n", f);
        return;
    }
    scenario_line(r, line, sizeof line);
    fputs("<p id=\"scenario\">", f);
    qc__xml_escape(f, line);
    fputs("</p>\n<p id=\"protocol\">", f);
    qc__protocol_line(r, line, sizeof line);
    if (r->mutant)
        fputs("<span class=\"badge inconclusive\">MUTANT</span> ", f);
    qc__xml_escape(f, line);
    fputs("</p>\n<div class=\"cols\">\n<table id=\"settings\">\n<tr><th>setting</th>"
          "<th>value</th></tr>\n",
          f);
    n = settings_rows(r->tested_json, rows, sizeof rows / sizeof rows[0]);
    for (i = 0; i < n; i++) {
        fputs("<tr><td>", f);
        qc__xml_escape(f, rows[i].key);
        fputs("</td><td class=\"num\">", f);
        qc__xml_escape(f, rows[i].value);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n<div>\n<p>Fault plan (seeded) and the faults that fired (fault events "
          "in the ledger; a poison job fires once per attempt):</p>\n",
          f);
    plan = json_object_get(r->tested_json, "fault_plan");
    if (json_array_size(plan) == 0)
        fputs("<p id=\"faultplan\">No fault was planned and none fired.</p>\n", f);
    else
        fputs("<table id=\"faultplan\">\n<tr><th>fault</th><th>scenario</th><th>jobs "
              "planned</th><th>fired</th></tr>\n",
              f);
    json_array_foreach(plan, i, x)
    {
        long p = jlong(x, "planned");
        fputs("<tr><td>", f);
        qc__xml_escape(f, json_string_value(json_object_get(x, "kind")));
        fputs("</td><td>", f);
        qc__xml_escape(f, json_is_string(json_object_get(x, "spec"))
                              ? json_string_value(json_object_get(x, "spec"))
                              : "-");
        if (p >= 0)
            fprintf(f, "</td><td class=\"num\">%ld", p);
        else
            fputs("</td><td class=\"num\">-", f);
        fprintf(f, "</td><td class=\"num\">%ld</td></tr>\n", jlong(x, "fired"));
    }
    if (json_array_size(plan) > 0)
        fputs("</table>\n", f);
    fputs("</div>\n</div>\n<details id=\"glossary\">\n<summary>The checkers: what each "
          "means, what counts as one opportunity</summary>\n<table>\n<tr><th>checker</th>"
          "<th>means</th><th>one opportunity is</th></tr>\n",
          f);
    for (i = 0; i < r->nc; i++) {
        const char *opp, *means = qc__glossary(r->c[i].name, &opp);
        fputs("<tr><td>", f);
        qc__xml_escape(f, r->c[i].name);
        fputs("</td><td>", f);
        qc__xml_escape(f, means != NULL ? means : "-");
        fputs("</td><td>", f);
        qc__xml_escape(f, opp != NULL ? opp : "-");
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n</details>\n", f);
}
