/*
 * lint.c - load-time remarks on a scenario and protocol pair (see lint.h).
 *
 * Which scenario key feeds which parameter mirrors what the worker, the
 * reaper and the enqueuer bind (worker.c, runner.c; README "Protocol
 * files"): a key counts as read when any step it is bound in uses the
 * parameter, so a protocol that checks :max_attempts in fail rather than
 * storing it at enqueue is not blamed.
 */
#include "lint.h"

#include <string.h>

static const qc_step_id all_steps[] = {QC_STEP_ENQUEUE, QC_STEP_CLAIM, QC_STEP_COMPLETE,
                                       QC_STEP_RENEW,   QC_STEP_FAIL,  QC_STEP_REAP,
                                       QC_STEP_HEARTBEAT, QC_STEP_DEDUP};
static const qc_step_id worker_steps[] = {QC_STEP_CLAIM, QC_STEP_COMPLETE, QC_STEP_RENEW,
                                          QC_STEP_FAIL, QC_STEP_REAP, QC_STEP_DEDUP};
static const qc_step_id enqueue_step[] = {QC_STEP_ENQUEUE};

typedef struct feed {
    const char *section, *key, *param;
    const qc_step_id *bound; /* steps the harness binds param in with the key's value */
    size_t nbound;
    qc_step_id meant, also;  /* the steps meant to read it (also: QC_STEP_COUNT none) */
    int lease_model_only;
} feed;

#define STEPS(a) a, sizeof a / sizeof a[0]
static const feed feeds[] = {
    {"lease", "max_attempts", "max_attempts", STEPS(all_steps), QC_STEP_ENQUEUE, QC_STEP_COUNT,
     0},
    {"lease", "lease_ms", "lease_ms", STEPS(all_steps), QC_STEP_CLAIM, QC_STEP_RENEW, 1},
    {"lease", "retry_delay_ms", "delay_ms", STEPS(worker_steps), QC_STEP_FAIL, QC_STEP_COUNT, 0},
    {"workload", "batch", "batch", STEPS(all_steps), QC_STEP_CLAIM, QC_STEP_COUNT, 1},
    {"workload", "groups", "group_key", STEPS(enqueue_step), QC_STEP_ENQUEUE, QC_STEP_COUNT, 0},
    {"workload", "payload_bytes", "payload", STEPS(enqueue_step), QC_STEP_ENQUEUE, QC_STEP_COUNT,
     0},
    /* C23: copies of a message are told apart from other jobs only by the
     * :message_id their enqueue stores */
    {"workload", "copies", "message_id", STEPS(enqueue_step), QC_STEP_ENQUEUE, QC_STEP_COUNT, 0},
};

static long value_of(const qc_scenario *s, const char *key)
{
    if (!strcmp(key, "max_attempts"))
        return s->max_attempts;
    if (!strcmp(key, "lease_ms"))
        return s->lease_ms;
    if (!strcmp(key, "retry_delay_ms"))
        return s->retry_delay_ms;
    if (!strcmp(key, "batch"))
        return s->batch;
    if (!strcmp(key, "groups"))
        return s->groups;
    if (!strcmp(key, "copies"))
        return s->copies;
    return s->payload_bytes;
}

int qc_lint_unused(const qc_scenario *s, const qc_protocol *p, qc_unused *out, int max)
{
    if (p->model && !strcmp(p->model, "adapter"))
        return 0; /* the adapter gets every value in its environment (docs/adapters.md) */
    int n = 0, txn = !strcmp(p->model, "transaction");

    for (size_t i = 0; i < sizeof feeds / sizeof feeds[0] && n < max; i++) {
        const feed *f = &feeds[i];
        int line = qc_scenario_set_line(s, f->section, f->key), read = 0;

        if (line == 0 || (txn && f->lease_model_only))
            continue;
        if (!strcmp(f->key, "groups") && s->groups == 0)
            continue; /* no group: :group_key is NULL for every job */
        if (!strcmp(f->key, "copies") && s->copies <= 1)
            continue; /* one copy: every job is its own message */
        for (size_t k = 0; k < f->nbound && !read; k++)
            read = qc_protocol_reads(p, f->bound[k], f->param);
        if (read)
            continue;
        out[n].section = f->section;
        out[n].key = f->key;
        out[n].param = f->param;
        out[n].line = line;
        out[n].value = value_of(s, f->key);
        if (f->also != QC_STEP_COUNT && p->steps[f->also].present)
            out[n].steps = "claim and renew"; /* the only pair in feeds */
        else
            out[n].steps = qc_step_name(f->meant);
        n++;
    }
    return n;
}

/* 1 when checker is judged by s ("" = every checker). */
static int judged(const qc_scenario *s, const char *checker)
{
    size_t n = strlen(checker);
    const char *c = s->checkers;

    if (c[0] == '\0')
        return 1;
    for (; *c; c += *c == ',') {
        size_t w = strcspn(c, ",");
        if (w == n && !strncmp(c, checker, n))
            return 1;
        c += w;
    }
    return 0;
}

int qc_lint_print(FILE *f, const qc_scenario *s, const qc_protocol *p)
{
    qc_unused u[8];
    int n = qc_lint_unused(s, p, u, 8), lines = 0, txn = !strcmp(p->model, "transaction");
    size_t nn, i, j;
    const qc_column_need *need = qc_protocol_column_needs(&nn);

    for (int k = 0; k < n; k++, lines++) {
        const char *why = "ignores";
        char what[96];
        if (strchr(u[k].steps, ' ') != NULL)
            why = "ignore";
        snprintf(what, sizeof what, "its %s %s it", u[k].steps, why);
        for (int st = 0; st < QC_STEP_COUNT; st++)
            if (!strcmp(qc_step_name((qc_step_id)st), u[k].steps) && !p->steps[st].present)
                snprintf(what, sizeof what, "it has no %s step", u[k].steps);
        fprintf(f,
                "qchaos: warning: %s:%d: %s = %ld is set but %s never reads :%s (%s)\n",
                s->path[0] ? s->path : "scenario", u[k].line, u[k].key, u[k].value, p->path,
                u[k].param, what);
    }
    /* One line per missing column, naming every judged rule that needs it. */
    for (i = 0; i < nn; i++) {
        char text[1024];
        size_t o = 0;
        int dup = 0;

        for (j = 0; j < i && !dup; j++)
            dup = need[j].step == need[i].step && !strcmp(need[j].column, need[i].column);
        if (dup || !p->steps[need[i].step].present ||
            qc_protocol_returns(p, need[i].step, need[i].column))
            continue;
        text[0] = '\0';
        for (j = i; j < nn; j++) {
            if (need[j].step != need[i].step || strcmp(need[j].column, need[i].column) ||
                !judged(s, need[j].checker) || (txn && need[j].lease_only))
                continue;
            if (o < sizeof text)
                o += (size_t)snprintf(text + o, sizeof text - o, "%s%s", o ? "; " : "",
                                      need[j].without);
        }
        if (text[0] == '\0')
            continue;
        fprintf(f, "qchaos: note: %s: %s returns no %s: %s\n", p->path,
                qc_step_name(need[i].step), need[i].column, text);
        lines++;
    }
    return lines;
}

void qc_lint_ledger(qc_lbuf *lb, const qc_scenario *s, const qc_protocol *p)
{
    qc_unused u[8];
    int n = qc_lint_unused(s, p, u, 8);

    for (int k = 0; k < n; k++) {
        json_t *e = json_object();
        json_object_set_new(e, "type", json_string("note"));
        json_object_set_new(e, "note", json_string("unused scenario value"));
        json_object_set_new(e, "key", json_string(u[k].key));
        json_object_set_new(e, "section", json_string(u[k].section));
        json_object_set_new(e, "value", json_integer(u[k].value));
        json_object_set_new(e, "parameter", json_string(u[k].param));
        json_object_set_new(e, "steps", json_string(u[k].steps));
        json_object_set_new(e, "scenario_file", json_string(s->path));
        json_object_set_new(e, "line", json_integer(u[k].line));
        json_object_set_new(e, "protocol", json_string(p->path));
        qc_ledger_append(lb, e);
    }
}

json_t *qc_lint_columns_json(const qc_protocol *p)
{
    static const qc_step_id steps[] = {QC_STEP_ENQUEUE, QC_STEP_CLAIM, QC_STEP_COMPLETE,
                                       QC_STEP_RENEW,   QC_STEP_FAIL,  QC_STEP_REAP,
                                       QC_STEP_SNAPSHOT, QC_STEP_MONITOR, QC_STEP_MONITOR_LIVE};
    json_t *o = json_object();

    for (size_t i = 0; o != NULL && i < sizeof steps / sizeof steps[0]; i++) {
        char buf[256];
        json_t *arr;

        if (!p->steps[steps[i]].present)
            continue;
        qc_protocol_columns(p, steps[i], buf, sizeof buf);
        arr = json_array();
        for (char *c = buf, *end; arr != NULL && *c; c = *end ? end + 1 : end) {
            end = c + strcspn(c, ",");
            json_array_append_new(arr, json_stringn(c, (size_t)(end - c)));
        }
        json_object_set_new(o, qc_step_name(steps[i]), arr);
    }
    return o;
}
