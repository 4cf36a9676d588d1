/*
 * sched.c - the schedule over named points (sched.h).
 *
 * One mutex and one condition variable: an actor at a point waits on the
 * condition with a 5 ms timeout, and every waiter re-checks the two things
 * that let a schedule go on without the running actor's help: the running
 * action sent a statement that has no answer for block_ms (blocked: the
 * next action is granted), and nothing moved for hold_timeout_ms (the
 * schedule is abandoned).  A schedule never blocks an actor that it does
 * not name, and never holds its mutex across anything but bookkeeping.
 */
#include "sched.h"
#include "clock.h"
#include "fault.h"
#include "rng.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE (-1000)

typedef struct actor_state {
    int remaining;           /* script / replay: entries not yet consumed */
    int named;               /* script / replay: the schedule has entries for it */
    int arrived;             /* it called qc_sched_begin */
    int exited;
    int waiting;             /* at a point, waiting for a grant */
    int loose;               /* replay: its action was blocked in the ledger; its next point
                                consumes its next entry wherever the cursor is */
    int owes;                /* replay: it passed a point (or began) and has not yet been
                                granted its next action: it waits for the grant at its next
                                event or statement (qc_sched_turn), not at the point */
    int prio;                /* pct */
    int last;                /* replay: index of the entry it consumed last; -1 none */
    char at[40];             /* the last point passed, for messages */
    _Atomic double req_since;/* ms (qc_clock_ms) a statement was sent, 0: none in flight */
    atomic_int req_ends;     /* the statement in flight ends the actor's action (not a
                                leading setting): its answer on the server ends it */
} actor_state;

/* Jobs to doubles (a lease's end), open addressing. */
typedef struct jobmap {
    int64_t *job;
    double *val;
    size_t cap, n;
} jobmap;

struct qc_sched {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    qc_sched_mode mode;
    qc_sched_entry *e;
    unsigned char *state;    /* per entry: 0 open, 1 consumed, 2 pending (blocked), 3 on the
                                wire (replay: done on the server, the answer not yet in) */
    int n, cursor;
    int nact;                /* workers + the reaper (index workers) */
    actor_state *a;
    int granted;             /* actor index running its action, or NONE */
    double moved;            /* ms: last time the schedule went on */
    double created;          /* ms: qc_sched_new */
    long block_ms, hold_ms;
    int free;                /* everyone runs freely */
    int consumed, blocked;
    int on_wire;             /* replay: actions let go at their server answer */
    int wire_open;           /* of those, the ones whose answer has not come yet */
    /* replay: the replay's own leases by job (job -> lease_until, server
     * epoch ms) and the server clock's offset */
    jobmap leases;
    double clock_off;        /* min (client ms - server ms) of an answer; 0: none yet */
    int clock_known;
    /* pct */
    long actions;
    long change[8];
    int nchange, low;
    qc_rng rng;
    qc_lbuf *lb;
    qc_sched_lock_fn lock_fn;
    void *lock_ctx;
    double lock_asked;       /* ms: when the lock check last said "not waiting" */
    char source[512];
    char why[1024];
    char released[1024];     /* why the script's race could not be set up; "" */
    int div_entry;           /* replay: the entry at which it diverged, -1: none */
    char div_point[40];      /* replay: the point the actor passed there instead, "" */
    int64_t div_job;         /* replay: the job it passed it for, INT64_MIN: none */
    double anchor;           /* replay: ms (qc_clock_ms) the first entry was carried out, 0 */
};

static int lease_pending(qc_sched *s);

static const char *step_points[] = {"claim", "complete", "renew", "fail", "reap"};

/* The slot of job in m (open addressing; INT64_MIN marks a free slot, so
 * it is never a key); -1 when absent and !add, or out of memory. */
static long jobmap_slot(jobmap *m, int64_t job, int add)
{
    if (job == INT64_MIN)
        return -1;
    if (add && (m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        int64_t *nj = malloc(cap * sizeof *nj);
        double *nv = malloc(cap * sizeof *nv);
        if (nj == NULL || nv == NULL) {
            free(nj);
            free(nv);
            return -1;
        }
        for (size_t k = 0; k < cap; k++)
            nj[k] = INT64_MIN;
        for (size_t k = 0; k < m->cap; k++) {
            if (m->job[k] == INT64_MIN)
                continue;
            size_t h = (size_t)((uint64_t)m->job[k] * 0x9E3779B97F4A7C15ULL) & (cap - 1);
            while (nj[h] != INT64_MIN)
                h = (h + 1) & (cap - 1);
            nj[h] = m->job[k];
            nv[h] = m->val[k];
        }
        free(m->job);
        free(m->val);
        m->job = nj;
        m->val = nv;
        m->cap = cap;
    }
    if (m->cap == 0)
        return -1;
    size_t h = (size_t)((uint64_t)job * 0x9E3779B97F4A7C15ULL) & (m->cap - 1);
    while (m->job[h] != INT64_MIN) {
        if (m->job[h] == job)
            return (long)h;
        h = (h + 1) & (m->cap - 1);
    }
    if (!add)
        return -1;
    m->job[h] = job;
    m->n++;
    return (long)h;
}

static void jobmap_fini(jobmap *m)
{
    free(m->job);
    free(m->val);
    memset(m, 0, sizeof *m);
}

int qc_point_check(const char *point, char *msg, size_t n)
{
    const char *dot = strchr(point, '.');
    char step[16];
    size_t k;

    if (!strcmp(point, "effect.after"))
        return 0;
    if (!strncmp(point, "fault.", 6)) {
        if (qc_fault_from_name(point + 6) != QC_FAULT_NONE)
            return 0;
        snprintf(msg, n, "unknown fault in point '%s' (expected fault.KIND, KIND one of the "
                         "[faults] keys)", point);
        return -1;
    }
    if (dot == NULL || (size_t)(dot - point) >= sizeof step)
        goto bad;
    memcpy(step, point, (size_t)(dot - point));
    step[dot - point] = '\0';
    for (k = 0; k < sizeof step_points / sizeof step_points[0]; k++)
        if (!strcmp(step, step_points[k]))
            break;
    if (k == sizeof step_points / sizeof step_points[0])
        goto bad;
    dot++;
    if (!strcmp(dot, "before") || !strcmp(dot, "after") || !strcmp(dot, "commit"))
        return 0;
    if (*dot >= '1' && *dot <= '9') {
        char *end;
        long v = strtol(dot, &end, 10);
        if (*end == '\0' && v >= 1 && v < 100)
            return 0;
    }
bad:
    snprintf(msg, n,
             "unknown point '%s' (expected STEP.before, STEP.after, STEP.N (after statement N "
             "of a step of several), STEP.commit, with STEP one of claim, complete, renew, "
             "fail, reap; or effect.after, or fault.KIND)",
             point);
    return -1;
}

static qc_step_id step_of(const char *point, size_t len)
{
    static const qc_step_id ids[] = {QC_STEP_CLAIM, QC_STEP_COMPLETE, QC_STEP_RENEW,
                                     QC_STEP_FAIL, QC_STEP_REAP};
    for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++)
        if (strlen(step_points[k]) == len && !strncmp(point, step_points[k], len))
            return ids[k];
    return QC_STEP_COUNT;
}

int qc_claim_commit_held(const qc_protocol *p, int txn_model, int hold_claim_commit)
{
    const qc_step *st = &p->steps[QC_STEP_CLAIM];
    return hold_claim_commit && !txn_model && st->present && st->nstmts == 1;
}

int qc_complete_commit_held(const qc_protocol *p, int txn_model, int hold_complete_commit)
{
    const qc_step *st = &p->steps[QC_STEP_COMPLETE];
    return hold_complete_commit && !txn_model && st->present && st->nstmts == 1;
}

int qc_reap_commit_held(const qc_protocol *p, int hold_reap_commit)
{
    const qc_step *st = &p->steps[QC_STEP_REAP];
    return hold_reap_commit && st->present && st->nstmts == 1;
}

int qc_point_in_protocol(const char *point, const qc_protocol *p, int txn_model, int hold)
{
    const char *dot = strchr(point, '.');
    qc_step_id id;
    const qc_step *st;

    if (!strncmp(point, "fault.", 6) || !strcmp(point, "effect.after"))
        return 1;
    if (dot == NULL || (id = step_of(point, (size_t)(dot - point))) == QC_STEP_COUNT)
        return 0;
    st = &p->steps[id];
    if (!st->present)
        return 0;
    dot++;
    if (!strcmp(dot, "before") || !strcmp(dot, "after"))
        return 1;
    if (!strcmp(dot, "commit"))
        return (st->nstmts > 1 && !st->autocommit) ||
               (id == QC_STEP_CLAIM &&
                qc_claim_commit_held(p, txn_model, (hold & QC_HOLD_CLAIM_COMMIT) != 0)) ||
               (id == QC_STEP_COMPLETE &&
                qc_complete_commit_held(p, txn_model, (hold & QC_HOLD_COMPLETE_COMMIT) != 0)) ||
               (id == QC_STEP_REAP && qc_reap_commit_held(p, (hold & QC_HOLD_REAP_COMMIT) != 0)) ||
               (txn_model && (id == QC_STEP_COMPLETE || id == QC_STEP_FAIL));
    return atoi(dot) >= 1 && atoi(dot) < st->nstmts - st->nsettings;
}

int qc_actor_parse(const char *name, int *actor)
{
    char *end;
    long v;

    if (!strcmp(name, "reaper")) {
        *actor = QC_SCHED_REAPER;
        return 0;
    }
    if (name[0] != 'w' || name[1] < '0' || name[1] > '9')
        return -1;
    v = strtol(name + 1, &end, 10);
    if (*end || v < 0 || v > 100000)
        return -1;
    *actor = (int)v;
    return 0;
}

void qc_actor_name(int actor, char *buf, size_t n)
{
    if (actor == QC_SCHED_REAPER)
        snprintf(buf, n, "reaper");
    else
        snprintf(buf, n, "w%d", actor);
}

const char *qc_point_of_event(const char *type, const char *op, const char *point,
                              const char *fault, char *buf, size_t n)
{
    if (type == NULL)
        return NULL;
    if (!strcmp(type, "point"))
        return point;
    if (!strcmp(type, "effect"))
        return "effect.after";
    if (!strcmp(type, "fault") && fault != NULL) {
        snprintf(buf, n, "fault.%s", fault);
        return buf;
    }
    if (op == NULL || step_of(op, strlen(op)) == QC_STEP_COUNT)
        return NULL;
    if (!strcmp(type, "invoke")) {
        snprintf(buf, n, "%s.before", op);
        return buf;
    }
    if (!strcmp(type, "ok") || !strcmp(type, "fail") || !strcmp(type, "info")) {
        snprintf(buf, n, "%s.after", op);
        return buf;
    }
    return NULL;
}

/* A point between a step's statements, or before its COMMIT. */
static int mid_step(const char *point)
{
    const char *dot = strchr(point, '.');
    return dot != NULL && ((dot[1] >= '1' && dot[1] <= '9') || !strcmp(dot + 1, "commit"));
}

static int idx(const qc_sched *s, int actor)
{
    if (actor == QC_SCHED_REAPER)
        return s->nact - 1;
    return actor >= 0 && actor < s->nact - 1 ? actor : NONE;
}

static int actor_of(const qc_sched *s, int i)
{
    return i == s->nact - 1 ? QC_SCHED_REAPER : i;
}

qc_sched *qc_sched_new(qc_sched_mode mode, const qc_sched_entry *entries, int n, int workers,
                       uint64_t seed, int depth, long block_ms, long hold_timeout_ms,
                       qc_lbuf *lb, const char *source)
{
    qc_sched *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->nact = workers + 1;
    s->a = calloc((size_t)s->nact, sizeof *s->a);
    s->e = calloc((size_t)(n > 0 ? n : 1), sizeof *s->e);
    s->state = calloc((size_t)(n > 0 ? n : 1), 1);
    if (s->a == NULL || s->e == NULL || s->state == NULL) {
        qc_sched_free(s);
        return NULL;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->mode = mode;
    s->block_ms = block_ms > 0 ? block_ms : 300;
    s->hold_ms = hold_timeout_ms > 0 ? hold_timeout_ms : 10000;
    s->lb = lb;
    s->granted = NONE;
    s->div_entry = -1;
    s->div_job = INT64_MIN;
    s->moved = s->created = qc_clock_ms();
    snprintf(s->source, sizeof s->source, "%s", source ? source : "");
    for (int i = 0; i < n; i++) {
        int k = idx(s, entries[i].actor);
        if (k == NONE)
            continue; /* the caller checked actors; an unknown one is skipped */
        s->e[s->n] = entries[i];
        s->a[k].remaining++;
        s->a[k].named = 1;
        s->n++;
    }
    for (int i = 0; i < s->nact; i++) {
        snprintf(s->a[i].at, sizeof s->a[i].at, "its start");
        s->a[i].last = -1;
    }
    if (mode == QC_SCHED_PCT) {
        qc_rng_init(&s->rng, seed, 0x5c4ed);
        /* priorities depth .. depth+nact-1, a random permutation */
        for (int i = 0; i < s->nact; i++)
            s->a[i].prio = depth + i;
        for (int i = s->nact - 1; i > 0; i--) {
            int j = (int)qc_rng_range(&s->rng, 0, i);
            int t = s->a[i].prio;
            s->a[i].prio = s->a[j].prio;
            s->a[j].prio = t;
        }
        s->nchange = depth - 1 < 0 ? 0 : (depth - 1 > 8 ? 8 : depth - 1);
        for (int i = 0; i < s->nchange; i++)
            s->change[i] = (long)qc_rng_range(&s->rng, 1, 400);
        s->low = 0;
    } else if (s->n == 0) {
        s->free = 1;
    }
    return s;
}

void qc_sched_set_lock_check(qc_sched *s, qc_sched_lock_fn fn, void *ctx)
{
    if (s == NULL)
        return;
    s->lock_fn = fn;
    s->lock_ctx = ctx;
}

void qc_sched_free(qc_sched *s)
{
    if (s == NULL)
        return;
    if (s->a != NULL) {
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv);
    }
    free(s->a);
    free(s->e);
    free(s->state);
    jobmap_fini(&s->leases);
    free(s);
}

/* Records one of the schedule's own events (mutex held). */
static void record(qc_sched *s, json_t *e)
{
    if (s->lb != NULL)
        qc_ledger_append(s->lb, e);
    else
        json_decref(e);
}

static void abandon(qc_sched *s, const char *why)
{
    if (s->free)
        return;
    snprintf(s->why, sizeof s->why, "%s", why);
    s->free = 1;
    json_t *e = json_object();
    json_object_set_new(e, "type", json_string("note"));
    json_object_set_new(e, "note", json_string("schedule abandoned"));
    json_object_set_new(e, "worker", json_integer(-3));
    json_object_set_new(e, "error", json_string(why));
    if (s->div_entry >= 0) {
        /* where a replay diverged, for the replay search (replay.h) */
        json_object_set_new(e, "replay_entry", json_integer(s->div_entry));
        json_object_set_new(e, "replay_seq", json_integer(s->e[s->div_entry].where));
        json_object_set_new(e, "replay_consumed", json_integer(s->consumed));
        if (s->div_point[0] != '\0') {
            /* what the actor did instead: the search moves the action
             * that took this job in the earlier run ahead (replay.h) */
            json_object_set_new(e, "replay_point", json_string(s->div_point));
            if (s->div_job != INT64_MIN)
                json_object_set_new(e, "replay_job", json_integer(s->div_job));
        }
    }
    record(s, e);
    pthread_cond_broadcast(&s->cv);
}

/* The script's race cannot be set up on this protocol: everyone runs
 * freely, the ledger says why (a note "schedule released"), and the run
 * is judged as it ran (mutex held). */
static void release_unreachable(qc_sched *s, const char *why)
{
    if (s->free)
        return;
    snprintf(s->released, sizeof s->released, "%s", why);
    s->free = 1;
    json_t *e = json_object();
    json_object_set_new(e, "type", json_string("note"));
    json_object_set_new(e, "note", json_string("schedule released"));
    json_object_set_new(e, "worker", json_integer(-3));
    json_object_set_new(e, "error", json_string(why));
    record(s, e);
    pthread_cond_broadcast(&s->cv);
}

static void entry_text(const qc_sched *s, int k, char *buf, size_t n)
{
    char who[16];
    qc_actor_name(s->e[k].actor, who, sizeof who);
    if (s->mode == QC_SCHED_REPLAY)
        snprintf(buf, n, "%s: seq %ld: %s at %s", s->source, s->e[k].where, who, s->e[k].point);
    else
        snprintf(buf, n, "%s:%ld: step '%s %s'", s->source, s->e[k].where, who, s->e[k].point);
}

/* Moves the cursor past consumed and pending entries; frees the schedule
 * when no entry is left open. */
static void advance(qc_sched *s)
{
    while (s->cursor < s->n && s->state[s->cursor] != 0)
        s->cursor++;
    s->moved = qc_clock_ms();
    if (s->cursor >= s->n && s->consumed >= s->n && s->mode != QC_SCHED_PCT)
        s->free = 1; /* every step done (a blocked one too) */
    pthread_cond_broadcast(&s->cv);
}

static void consume(qc_sched *s, int k)
{
    int i = idx(s, s->e[k].actor);
    if (s->anchor == 0)
        s->anchor = qc_clock_ms(); /* the replay's clock starts at its first point */
    s->state[k] = 1;
    s->consumed++;
    if (i != NONE) {
        s->a[i].remaining--;
        s->a[i].last = k;
    }
}

/* Whether actor index i has an entry it passed the cursor of without
 * reaching its point (a blocked action): it owes that point. */
static int has_pending(const qc_sched *s, int i)
{
    for (int k = 0; k < s->cursor && k < s->n; k++)
        if (s->state[k] == 2 && idx(s, s->e[k].actor) == i)
            return 1;
    return 0;
}

/* The blocked and timeout rules, checked by every waiter (mutex held). */
static void watch(qc_sched *s)
{
    double now = qc_clock_ms();
    if (s->free)
        return;
    if (s->granted != NONE) {
        actor_state *g = &s->a[s->granted];
        double since = atomic_load(&g->req_since);
        int lock = -1;
        if (since > 0 && now - since > (double)s->block_ms && s->lock_fn != NULL) {
            if (now - s->lock_asked < (double)s->block_ms)
                lock = 0; /* asked a moment ago: not waiting then */
            else if ((lock = s->lock_fn(s->lock_ctx, actor_of(s, s->granted))) == 0)
                s->lock_asked = now;
        }
        if (since > 0 && now - since > (double)s->block_ms && lock != 0) {
            json_t *e = json_object();
            json_object_set_new(e, "type", json_string("blocked"));
            json_object_set_new(e, "worker", json_integer(actor_of(s, s->granted)));
            json_object_set_new(e, "point", json_string(g->at));
            json_object_set_new(e, "after_ms", json_real((double)(int64_t)(now - since)));
            record(s, e);
            s->blocked++;
            if (s->mode != QC_SCHED_PCT && s->cursor < s->n &&
                idx(s, s->e[s->cursor].actor) == s->granted)
                s->state[s->cursor] = 2; /* it passes the point when the lock goes */
            s->granted = NONE;
            advance(s);
            return;
        }
        if (s->mode == QC_SCHED_PCT && now - s->moved > (double)s->block_ms) {
            /* a long sleep (work, a stall) is not a reason to hold the others */
            s->granted = NONE;
            advance(s);
            return;
        }
    }
    if (s->mode != QC_SCHED_PCT && s->granted == NONE && s->cursor < s->n) {
        int k = s->cursor, i = idx(s, s->e[k].actor);
        if (i != NONE && !s->a[i].waiting && !s->a[i].exited && has_pending(s, i)) {
            /* the next step's actor is still inside a blocked action: its
             * step waits for it, the others go on (a lock holder among
             * them lets it finish) */
            s->state[k] = 2;
            advance(s);
            return;
        }
    }
    if (s->mode != QC_SCHED_PCT && s->cursor < s->n) {
        int k = s->cursor, i = idx(s, s->e[k].actor);
        char what[700], why[1024];
        if (i != NONE && s->a[i].exited) {
            entry_text(s, k, what, sizeof what);
            if (s->mode == QC_SCHED_REPLAY)
                s->div_entry = k; /* a divergence, for the search and "reproduced" */
            snprintf(why, sizeof why, "%s cannot come: the actor's thread ended (it was at %s)",
                     what, s->a[i].at);
            abandon(s, why);
        } else if (now - s->moved > (double)s->hold_ms) {
            /* "X claim.after job" / "X reap.after job" that X keeps
             * reaching empty-handed while another actor of the script is
             * held between the statements of a step (decision 963): that
             * actor may hold the job's row (a renew that writes first, a
             * reap that locks at its read), so the queue rightly keeps the
             * job back and the race the script sets up cannot happen on
             * this protocol: released, judged as it ran, as decision 61. */
            int held = NONE;
            for (int j = 0; s->mode == QC_SCHED_SCRIPT && i != NONE && j < s->nact; j++)
                if (j != i && s->a[j].waiting && !s->a[j].exited && mid_step(s->a[j].at))
                    held = j;
            /* the actor is polling: at any point of the same step (its
             * empty answer at .after, its next poll's .before, or between:
             * a reap that found nothing passes reap.commit, decision 1128) */
            const char *dot = strchr(s->e[k].point, '.');
            size_t plen = dot != NULL ? (size_t)(dot - s->e[k].point) + 1 : 0;
            if (held != NONE && s->e[k].job == QC_SCHED_ANY_JOB && plen > 0 &&
                !strncmp(s->a[i].at, s->e[k].point, plen) &&
                (!strcmp(s->e[k].point, "claim.after") || !strcmp(s->e[k].point, "reap.after"))) {
                char hn[16];
                entry_text(s, k, what, sizeof what);
                qc_actor_name(actor_of(s, held), hn, sizeof hn);
                snprintf(why, sizeof why,
                         "%s: no job within %ld ms while %s was held at %s (it may hold the "
                         "job's row), so the race it sets up cannot happen on this protocol",
                         what, s->hold_ms, hn, s->a[held].at);
                release_unreachable(s, why);
                return;
            }
            if (s->mode == QC_SCHED_REPLAY)
                s->div_entry = k; /* the replay search may try another order here */
            entry_text(s, k, what, sizeof what);
            snprintf(why, sizeof why, "%s did not come within %ld ms (%s was at %s)", what,
                     s->hold_ms, s->e[k].actor == QC_SCHED_REAPER ? "the reaper" : "the worker",
                     i != NONE ? s->a[i].at : "?");
            abandon(s, why);
        }
    }
}

/* Whether actor index i may start its next action now (mutex held). */
static int may_go(qc_sched *s, int i)
{
    if (s->free)
        return 1;
    if (s->mode == QC_SCHED_PCT) {
        if (s->granted != NONE)
            return 0;
        /* the first grant waits for every actor to arrive (the priorities
         * decide, not which thread started first), at most 2 s */
        if (qc_clock_ms() - s->created < 2000.0)
            for (int j = 0; j < s->nact; j++)
                if (!s->a[j].arrived && !s->a[j].exited)
                    return 0;
        for (int j = 0; j < s->nact; j++)
            if (j != i && s->a[j].waiting && !s->a[j].exited && s->a[j].prio > s->a[i].prio)
                return 0;
        return 1;
    }
    if (has_pending(s, i))
        return 1; /* it goes on to the points it owes */
    if (s->a[i].remaining == 0)
        /* an actor with no step left, or none at all, waits until the
         * script is done (isolationtester's sessions do nothing beyond
         * their steps); only the reaper, which time drives, runs freely
         * when a script does not name it */
        return !s->a[i].named && i == s->nact - 1 && s->mode == QC_SCHED_SCRIPT;
    if (s->granted != NONE || s->cursor >= s->n || idx(s, s->e[s->cursor].actor) != i)
        return 0;
    /* a replay does not run ahead of the earlier run's clock: an action
     * begins no earlier (after the first point) than it began there, so
     * a lease the earlier reaper found expired has expired, a delay has
     * passed (decision 64) */
    if (s->mode != QC_SCHED_REPLAY)
        return 1;
    if (s->anchor != 0 && qc_clock_ms() - s->anchor < s->e[s->cursor].start_ms)
        return 0;
    /* nor before a lease it found run out there has run out here: a
     * replay whose claims went out later than the run's would reap or
     * take over a lease still live (decision 1133) */
    return !lease_pending(s);
}

static void wait_turn(qc_sched *s, int i)
{
    s->a[i].waiting = 1;
    pthread_cond_broadcast(&s->cv);
    while (!may_go(s, i)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 5 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
        watch(s);
    }
    s->a[i].waiting = 0;
    if (!s->free && (s->mode == QC_SCHED_PCT || s->a[i].remaining > 0)) {
        s->granted = i;
        s->moved = qc_clock_ms();
    }
}

/* Replay: when the entry actor i was just granted is a `blocked` one of
 * the original run, its action is let go at once and the next entry is
 * granted; its point comes when the lock goes (mutex held). */
static void pass_blocked(qc_sched *s, int i)
{
    if (s->free || s->granted != i || s->cursor >= s->n || !s->e[s->cursor].nowait)
        return;
    consume(s, s->cursor);
    s->a[i].loose = 1;
    s->granted = NONE;
    advance(s);
}

void qc_sched_begin(qc_sched *s, int actor)
{
    int i;
    if (s == NULL || (i = idx(s, actor)) == NONE)
        return;
    pthread_mutex_lock(&s->mu);
    s->a[i].arrived = 1;
    if (s->mode == QC_SCHED_REPLAY) {
        s->a[i].owes = 1; /* its first action's sleep runs before its grant */
        pthread_cond_broadcast(&s->cv);
    } else {
        wait_turn(s, i);
        pass_blocked(s, i);
    }
    pthread_mutex_unlock(&s->mu);
}

/* Replay: the grant actor index i owes itself, before it records an event
 * or sends a statement (mutex held). */
static void take_turn(qc_sched *s, int i)
{
    if (!s->a[i].owes)
        return;
    s->a[i].owes = 0;
    if (s->free)
        return;
    wait_turn(s, i);
    pass_blocked(s, i);
}

void qc_sched_turn(qc_sched *s, int actor)
{
    int i;
    if (s == NULL || s->mode != QC_SCHED_REPLAY || (i = idx(s, actor)) == NONE)
        return;
    pthread_mutex_lock(&s->mu);
    take_turn(s, i);
    pthread_mutex_unlock(&s->mu);
}

/* Replay: actor index i's next entry, as qc_sched_point finds it: one it
 * owes (passed by the cursor, blocked or on the wire) first, else its next
 * open one; -1 none (mutex held). */
static int next_entry(const qc_sched *s, int i)
{
    for (int k = 0; k < s->cursor && k < s->n; k++)
        if ((s->state[k] == 2 || s->state[k] == 3) && idx(s, s->e[k].actor) == i)
            return k;
    for (int k = s->cursor; k < s->n; k++)
        if (s->state[k] == 0 && idx(s, s->e[k].actor) == i)
            return k;
    return -1;
}

int qc_sched_replay_next(qc_sched *s, int actor, char *point, size_t n, int64_t *job)
{
    int i, found = 0;
    if (s == NULL || s->mode != QC_SCHED_REPLAY || (i = idx(s, actor)) == NONE)
        return 0;
    pthread_mutex_lock(&s->mu);
    for (int k = 0; !s->free && k < s->n && !found; k++)
        if (s->state[k] == 0 && idx(s, s->e[k].actor) == i) {
            snprintf(point, n, "%s", s->e[k].point);
            *job = s->e[k].job;
            found = 1;
        }
    pthread_mutex_unlock(&s->mu);
    return found;
}

int qc_sched_replay_abort(qc_sched *s, int actor, char *msg, size_t n)
{
    int i;
    if (s == NULL || s->mode != QC_SCHED_REPLAY || (i = idx(s, actor)) == NONE)
        return 0;
    pthread_mutex_lock(&s->mu);
    int hit = next_entry(s, i);
    int r = !s->free && hit >= 0 && s->e[hit].abort_err[0] != '\0';
    if (r)
        snprintf(msg, n, "%s", s->e[hit].abort_err);
    pthread_mutex_unlock(&s->mu);
    return r;
}

int qc_sched_replay_reached(qc_sched *s, long seq)
{
    int r = 1;
    if (s == NULL || s->mode != QC_SCHED_REPLAY)
        return -1;
    pthread_mutex_lock(&s->mu);
    if (s->free)
        r = -1;
    for (int k = 0; r == 1 && k < s->n && s->e[k].where < seq; k++)
        if (s->state[k] == 0)
            r = 0;
    pthread_mutex_unlock(&s->mu);
    return r;
}

void qc_sched_point(qc_sched *s, int actor, const char *point, int64_t job)
{
    int i;
    if (s == NULL || point == NULL || (i = idx(s, actor)) == NONE)
        return;
    pthread_mutex_lock(&s->mu);
    if (s->mode == QC_SCHED_REPLAY)
        take_turn(s, i); /* an event recorded without its turn taken first */
    snprintf(s->a[i].at, sizeof s->a[i].at, "%s", point);
    if (s->free) {
        pthread_mutex_unlock(&s->mu);
        return;
    }
    if (s->mode == QC_SCHED_PCT) {
        s->actions++;
        for (int c = 0; c < s->nchange; c++)
            if (s->change[c] == s->actions)
                s->a[i].prio = --s->low; /* a priority change point: below everyone */
        if (job == INT64_MIN && (!strcmp(point, "claim.after") || !strcmp(point, "reap.after")))
            s->a[i].prio = --s->low; /* an idle poll yields */
        else if (mid_step(point) && qc_rng_unit(&s->rng) < 0.5)
            s->a[i].prio = --s->low; /* between a step's statements: where races are */
        if (s->granted == i)
            s->granted = NONE;
        s->moved = qc_clock_ms();
        wait_turn(s, i);
        pthread_mutex_unlock(&s->mu);
        return;
    }
    /* script / replay: a pending (blocked, on the wire) entry of this
     * actor first */
    int hit = -1;
    for (int k = 0; k < s->cursor && k < s->n; k++)
        if ((s->state[k] == 2 || s->state[k] == 3) && idx(s, s->e[k].actor) == i) {
            hit = k;
            break;
        }
    if (hit < 0 && s->a[i].loose) {
        for (int k = s->cursor; k < s->n; k++)
            if (s->state[k] == 0 && idx(s, s->e[k].actor) == i) {
                hit = k;
                break;
            }
        s->a[i].loose = 0;
    } else if (hit < 0 && s->cursor < s->n && idx(s, s->e[s->cursor].actor) == i &&
               s->granted == i) {
        hit = s->cursor;
    } else if (hit < 0 && s->mode == QC_SCHED_SCRIPT && s->a[i].remaining > 0 &&
               s->granted == i) {
        /* a point on the way to its entry */
        pthread_mutex_unlock(&s->mu);
        return;
    }
    if (hit >= 0) {
        const qc_sched_entry *e = &s->e[hit];
        int same = !strcmp(e->point, point) &&
                   (e->job == INT64_MIN || e->job == job ||
                    (e->job == QC_SCHED_ANY_JOB && job != INT64_MIN) ||
                    (e->job == QC_SCHED_NO_JOB && job == INT64_MIN));
        if (!same && s->mode == QC_SCHED_SCRIPT && hit == s->cursor && s->granted == i &&
            e->job == QC_SCHED_ANY_JOB && job == INT64_MIN && !strcmp(e->point, point) &&
            !strcmp(point, "claim.after")) {
            /* "ACTOR claim.after job" met an empty claim: at this point of
             * the script the queue does not hand the job to ACTOR (another
             * actor, held mid-step, has it locked; the protocol keeps it
             * back).  The race the script sets up cannot happen on this
             * protocol: the schedule is released and the run is judged as
             * it ran, never INCONCLUSIVE for it, never a false alarm from
             * a job the schedule held. */
            char what[700], why[1024], who[16];
            entry_text(s, hit, what, sizeof what);
            qc_actor_name(s->e[hit].actor, who, sizeof who);
            snprintf(why, sizeof why,
                     "%s met an empty claim: the queue did not hand %s a job at this point of "
                     "the script, so the race it sets up cannot happen on this protocol",
                     what, who);
            release_unreachable(s, why);
            pthread_mutex_unlock(&s->mu);
            return;
        }
        if (!same && s->mode == QC_SCHED_SCRIPT && hit == s->cursor && s->granted == i &&
            job == INT64_MIN && !strcmp(point, "claim.after") &&
            !strncmp(e->point, "claim.", 6) && mid_step(e->point)) {
            /* "ACTOR claim.N" met a claim that ended empty before its
             * statement N+1 (decision 965): an earlier statement of the
             * claim returned no row, so the step ended there (a locking
             * read that skipped the row another actor of the script holds:
             * SELECT ... FOR UPDATE SKIP LOCKED, then UPDATE).  The queue
             * does not hand the job out at this point; the race cannot
             * happen on this protocol: released, as decision 61. */
            char what[700], why[1024], who[16];
            entry_text(s, hit, what, sizeof what);
            qc_actor_name(s->e[hit].actor, who, sizeof who);
            snprintf(why, sizeof why,
                     "%s met a claim that ended empty before that point (an earlier statement "
                     "returned no row): the queue did not hand %s a job there, so the race it "
                     "sets up cannot happen on this protocol",
                     what, who);
            release_unreachable(s, why);
            pthread_mutex_unlock(&s->mu);
            return;
        }
        if (!same && s->mode == QC_SCHED_SCRIPT) {
            /* script: the entry lets the actor run until its point */
            pthread_mutex_unlock(&s->mu);
            return;
        }
        if (!same) {
            char what[700], why[1024], jb[32] = "";
            entry_text(s, hit, what, sizeof what);
            if (job != INT64_MIN)
                snprintf(jb, sizeof jb, " (job %lld)", (long long)job);
            if (e->job == QC_SCHED_NO_JOB)
                snprintf(why, sizeof why,
                         "replay diverged: %s (no job) expected, the %s passed %s%s", what,
                         e->actor == QC_SCHED_REAPER ? "reaper" : "worker", point, jb);
            else if (e->job != INT64_MIN)
                snprintf(why, sizeof why,
                         "replay diverged: %s (job %lld) expected, the worker passed %s%s", what,
                         (long long)e->job, point, jb);
            else
                snprintf(why, sizeof why, "replay diverged: %s expected, the worker passed %s%s",
                         what, point, jb);
            s->div_entry = hit;
            snprintf(s->div_point, sizeof s->div_point, "%s", point);
            s->div_job = job;
            abandon(s, why);
            pthread_mutex_unlock(&s->mu);
            return;
        }
        if (s->state[hit] == 3)
            s->wire_open--;
        consume(s, hit);
        if (s->granted == i)
            s->granted = NONE;
        advance(s);
    } else if (s->a[i].remaining == 0) {
        ; /* nothing left for it: it waits until the schedule is done */
    } else if (s->mode == QC_SCHED_REPLAY) {
        char why[1024];
        snprintf(why, sizeof why,
                 "replay diverged: %s: w%d passed %s out of turn (the ledger has it later)",
                 s->source, actor, point);
        for (int k = s->cursor; k < s->n; k++)
            if (s->state[k] == 0 && idx(s, s->e[k].actor) == i) {
                s->div_entry = k; /* the entry it should have waited for */
                break;
            }
        abandon(s, why);
        pthread_mutex_unlock(&s->mu);
        return;
    }
    if (s->mode == QC_SCHED_REPLAY) {
        /* its next action begins now, as in the earlier run; it is
         * granted at its next event or statement (qc_sched_turn), so a
         * sleep it begins with overlaps the others' actions */
        s->a[i].owes = 1;
        pthread_mutex_unlock(&s->mu);
        return;
    }
    wait_turn(s, i);
    pass_blocked(s, i);
    pthread_mutex_unlock(&s->mu);
}

/* Replay: whether actor index i's statement (in: qc_sched_request's)
 * goes out without waiting for its answer's turn, because the earlier run
 * sent it right after the point the actor passed last (an entry of a run
 * without a schedule, decision 1148; a script or PCT held the actor
 * there) and holding it back changes what the server does (mutex held):
 *  - a statement the run's server aborted (decisions 1144, 1147): the
 *    server rolled its victim back when it found the deadlock, before the
 *    survivor's answer; hook_abort answers it at once and its `fail`
 *    event waits for its turn;
 *  - a COMMIT right after its `.commit` point (decision 1145): held until
 *    its answer's turn, its locks made another actor's statement that the
 *    run's server answered in between wait (a lock wait the run did not
 *    have, the blocked rule, the order lost); its answer waits for its
 *    turn.  Not when that answer found a lease run out: its turn waits for
 *    the replay's lease to run out first, while it is still the old one
 *    (decision 1133). */
static int send_at_once(const qc_sched *s, int i, int in)
{
    int last = s->a[i].last;
    if (in != 1 || last < 0 || !s->e[last].at_once)
        return 0;
    int k = next_entry(s, i);
    if (k >= 0 && s->e[k].abort_err[0] != '\0')
        return 1;
    const char *dot = strrchr(s->a[i].at, '.');
    return dot != NULL && !strcmp(dot, ".commit") && !(k >= 0 && s->e[k].expiry);
}

void qc_sched_request(qc_sched *s, int actor, int in)
{
    int i;
    if (s == NULL || (i = idx(s, actor)) == NONE)
        return;
    if (in && s->mode == QC_SCHED_REPLAY) {
        pthread_mutex_lock(&s->mu);
        if (!send_at_once(s, i, in))
            take_turn(s, i); /* a statement goes out only in its turn */
        pthread_mutex_unlock(&s->mu);
    }
    atomic_store(&s->a[i].req_ends, in == 1);
    atomic_store(&s->a[i].req_since, in ? qc_clock_ms() : 0.0);
}


void qc_sched_lease(qc_sched *s, int64_t job, double lease_until, double now)
{
    if (s == NULL || s->mode != QC_SCHED_REPLAY)
        return;
    double client = qc_clock_ms();
    pthread_mutex_lock(&s->mu);
    if (now > 0 && (!s->clock_known || client - now < s->clock_off)) {
        s->clock_off = client - now;
        s->clock_known = 1;
    }
    long k;
    if (lease_until > 0 && (k = jobmap_slot(&s->leases, job, 1)) >= 0)
        s->leases.val[k] = lease_until;
    pthread_mutex_unlock(&s->mu);
}

/* Replay: whether the entry at the cursor waits for a lease of the
 * replay to run out (decision 1133; mutex held). */
static int lease_pending(qc_sched *s)
{
    const qc_sched_entry *e = &s->e[s->cursor];
    long k;
    if (!e->expiry || !s->clock_known)
        return 0;
    if ((k = jobmap_slot(&s->leases, e->expired_job, 0)) < 0)
        /* no lease of that job yet: its claim's answer may be on the
         * wire (then it waits for it; the hold timeout bounds it), or
         * the replay took another way (then the entry's own check says so) */
        return s->wire_open > 0;
    /* its end on the client's clock, and a millisecond for the clocks'
     * resolution and the offset's error (an answer's own delay only makes
     * the offset larger, so the wait errs long) */
    return qc_clock_ms() < s->leases.val[k] + s->clock_off + 1.0;
}

void qc_sched_server_answered(qc_sched *s, int actor)
{
    int i;
    if (s == NULL || s->mode != QC_SCHED_REPLAY || (i = idx(s, actor)) == NONE ||
        atomic_load(&s->a[i].req_since) <= 0 || !atomic_load(&s->a[i].req_ends))
        return;
    pthread_mutex_lock(&s->mu);
    if (!s->free && s->granted == i && s->cursor < s->n && idx(s, s->e[s->cursor].actor) == i &&
        s->state[s->cursor] == 0 && atomic_load(&s->a[i].req_since) > 0) {
        /* what its action does on the server is done; the rest is the
         * answer's time on the wire, which the earlier run overlapped with
         * the others' actions: the next entry goes, and the actor passes
         * this one when its answer comes (decision 1132).  Unlike a
         * blocked entry, its next entry waits for it at the cursor: only
         * the wire overlaps, never two of the actor's own actions */
        s->state[s->cursor] = 3;
        s->granted = NONE;
        s->on_wire++;
        s->wire_open++;
        advance(s);
    }
    pthread_mutex_unlock(&s->mu);
}

void qc_sched_exit(qc_sched *s, int actor)
{
    int i;
    if (s == NULL || (i = idx(s, actor)) == NONE)
        return;
    pthread_mutex_lock(&s->mu);
    s->a[i].exited = 1;
    if (s->granted == i)
        s->granted = NONE;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

int qc_sched_settled(qc_sched *s)
{
    int settled;
    if (s == NULL)
        return 1;
    pthread_mutex_lock(&s->mu);
    if (s->free)
        settled = 1;
    else if (s->mode != QC_SCHED_PCT)
        settled = 0; /* steps are left: the hold timeout bounds the wait */
    else
        settled = s->granted == NONE || atomic_load(&s->a[s->granted].req_since) <= 0;
    pthread_mutex_unlock(&s->mu);
    return settled;
}

void qc_sched_finish(qc_sched *s)
{
    if (s == NULL)
        return;
    pthread_mutex_lock(&s->mu);
    if (s->mode == QC_SCHED_REPLAY && !s->free && s->cursor < s->n) {
        char what[700], why[1024];
        entry_text(s, s->cursor, what, sizeof what);
        snprintf(why, sizeof why, "the run ended before %s (%d of %d entries carried out)", what,
                 s->consumed, s->n);
        s->div_entry = s->cursor;
        abandon(s, why);
    }
    s->free = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void qc_sched_release(qc_sched *s)
{
    if (s == NULL)
        return;
    pthread_mutex_lock(&s->mu);
    s->free = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

const char *qc_sched_released(const qc_sched *s)
{
    return s != NULL && s->released[0] ? s->released : NULL;
}

const char *qc_sched_abandoned(const qc_sched *s)
{
    return s != NULL && s->why[0] ? s->why : NULL;
}

void qc_sched_stats(const qc_sched *s, int *consumed, int *total, int *blocked, int *on_wire)
{
    *consumed = s ? s->consumed : 0;
    *total = s ? s->n : 0;
    *blocked = s ? s->blocked : 0;
    *on_wire = s ? s->on_wire : 0;
}

static int by_seq(const void *a, const void *b)
{
    json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "seq"));
    json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "seq"));
    return x < y ? -1 : x > y;
}

/* When the action ending at a point of actor (at t, ms of the earlier run)
 * began: the t of the actor's previous point, as ms after the run's first
 * point (0 for its first action, or when out of memory); then t is the
 * actor's last point. */
static double action_start(double **last_t, size_t *n, double *first_t, int actor, double t)
{
    size_t k = (size_t)(actor + 1);
    double start = 0;
    if (*first_t < 0)
        *first_t = t;
    if (k >= *n) {
        size_t nn = k + 64;
        double *v = realloc(*last_t, nn * sizeof *v);
        if (v == NULL)
            return 0;
        for (size_t i = *n; i < nn; i++)
            v[i] = -1;
        *last_t = v;
        *n = nn;
    }
    if ((*last_t)[k] >= 0)
        start = (*last_t)[k] - *first_t;
    (*last_t)[k] = t;
    return start > 0 ? start : 0;
}

/* Makes room for entry k in the loader's per-entry arrays.  0, or -1 when
 * out of memory (the arrays stay valid). */
static int side_grow(double **t, long long **req, unsigned char **kind, double **now, int k)
{
    if (k % 256 != 0)
        return 0;
    size_t nn = (size_t)k + 256;
    double *nw = realloc(*now, nn * sizeof *nw);
    if (nw == NULL)
        return -1;
    *now = nw;
    double *nt = realloc(*t, nn * sizeof *nt);
    if (nt == NULL)
        return -1;
    *t = nt;
    long long *nr = realloc(*req, nn * sizeof *nr);
    if (nr == NULL)
        return -1;
    *req = nr;
    unsigned char *nk = realloc(*kind, nn);
    if (nk == NULL)
        return -1;
    *kind = nk;
    return 0;
}

/* A request whose answer in the earlier run was `info` (the connection
 * was lost: a partition's TCP timeout, a cut session) after more than
 * QC_SCHED_SLOW_LOST_MS, with other actors' points between its invoke and
 * that answer: its time went to the network, not to the order.  A replay
 * that sent it only when its answer's entry came up, and held everyone
 * while it timed out again, would serialise what the run overlapped (a
 * second per partitioned worker, after which leases the run kept live have
 * expired: decision 997).  A `nowait` entry right after its invoke lets
 * the request go out in its turn and the next entries be granted, as a
 * `blocked` one does (isolationtester's waiting steps); the answer is
 * matched when it comes (the actor is loose).  Returns the new count; *v
 * may be reallocated (unchanged when out of memory). */
#define QC_SCHED_SLOW_LOST_MS 100.0
static int slow_lost_answers(qc_sched_entry **v, int cnt, const double *t,
                             const long long *req, const unsigned char *kind)
{
    int add = 0;
    unsigned char *after = calloc((size_t)(cnt > 0 ? cnt : 1), 1);
    if (after == NULL)
        return cnt;
    for (int y = 0; y < cnt; y++) {
        if (kind[y] != 2 || req[y] < 0)
            continue;
        int x = y - 1, others = 0;
        for (; x >= 0; x--) {
            if ((*v)[x].actor != (*v)[y].actor) {
                others++;
                continue;
            }
            if (kind[x] == 1 && req[x] == req[y])
                break;
        }
        if (x >= 0 && others > 0 && t[y] - t[x] > QC_SCHED_SLOW_LOST_MS && !after[x]) {
            after[x] = 1;
            add++;
        }
    }
    if (add == 0) {
        free(after);
        return cnt;
    }
    qc_sched_entry *nv = malloc((size_t)(cnt + add) * sizeof *nv);
    if (nv == NULL) {
        free(after);
        return cnt;
    }
    int m = 0;
    for (int k = 0; k < cnt; k++) {
        nv[m++] = (*v)[k];
        if (after[k]) {
            nv[m] = (*v)[k];
            nv[m].job = INT64_MIN;
            nv[m].nowait = 1;
            m++;
        }
    }
    free(after);
    free(*v);
    *v = nv;
    return m;
}

/* The server's order (decisions 1132, 1140).  The entries are the order
 * in which actions ENDED at the client: an answer that spent its time on
 * the wire (a slow link, latency) or waiting for its thread to run again
 * (a loaded machine) ends after the server ran its statement, behind
 * actions the server ran later; replayed in that order, a claim sent when
 * its answer's entry comes up runs after them and sees another queue (a
 * reap since, a complete since, another claim's row taken).  Each
 * worker's answer (an ok or fail with the server's `now`, N) moves
 * ahead, never past its own invoke or another point of its actor, past
 * every entry whose request the server provably ran later: an answer
 * whose now is above N + 0.1 ms, an answer without a now whose request
 * was sent (client t of its invoke, less the smallest answer delay seen,
 * client t - now: the clocks' offset) above N + 0.1 ms on the server's
 * clock, an invoke whose request's answer says the same (its now, else
 * its send), or a point of the client's alone (an effect, a fault).  It
 * stops at anything else: an invoke of a request the server ran before it
 * stays ahead of it, so claims answered in a burst go in the order the
 * server ran them.  Until decision 1140 only the workers behind a latency
 * or bandwidth toxic were ordered so; the replay search then found the
 * others' order one "taker" move, one whole run, at a time.  Under a
 * replay the proxy lets an action go at its server answer
 * (qc_sched_server_answered), so its answer's time on the wire overlaps
 * the next actions as in the run.  The side arrays move with the
 * entries. */
/* How much later on the server's clock (ms) a request must have run to
 * count as run later: clock_timestamp() is to the microsecond, and a
 * claim reads it a little after it took its row */
#define QC_SCHED_SERVER_MARGIN_MS 0.1

static void server_order(qc_sched_entry *v, int cnt, double *t, long long *req,
                         unsigned char *kind, double *now)
{
    double off = 0;
    int have_off = 0;
    for (int k = 0; k < cnt; k++) {
        if (kind[k] == 3 && now[k] > 0 && (!have_off || t[k] - now[k] < off)) {
            off = t[k] - now[k];
            have_off = 1;
        }
    }
    if (!have_off)
        return;
    /* per invoke: the now of its request's answer, -1 none (an answer
     * moved below stays after its invoke, so the pairing holds) */
    double *srv = malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof *srv);
    if (srv == NULL)
        return;
    for (int k = 0; k < cnt; k++) {
        srv[k] = -1;
        if (kind[k] != 1 || req[k] < 0)
            continue;
        for (int j = k + 1; j < cnt; j++)
            if (v[j].actor == v[k].actor && req[j] == req[k] && (kind[j] == 3 || kind[j] == 2)) {
                srv[k] = kind[j] == 3 ? now[j] : -1;
                break;
            }
    }
    for (int a = 0; a < cnt; a++) {
        int x = v[a].actor;
        if (kind[a] != 3 || now[a] <= 0 || req[a] < 0 || x < 0)
            continue;
        double na = now[a];
        int p = a;
        while (p > 0) {
            int b = p - 1;
            if (v[b].actor == x)
                break; /* its own invoke, or another point of its request */
            if (kind[b] == 4) {
                p = b;
                continue;
            }
            if (kind[b] == 1) {
                /* another's request: ran later on the server, by its
                 * answer's now, else by when it was sent */
                if (srv[b] > 0 ? srv[b] > na + QC_SCHED_SERVER_MARGIN_MS : t[b] - off > na + QC_SCHED_SERVER_MARGIN_MS) {
                    p = b;
                    continue;
                }
                break;
            }
            if (kind[b] == 3 && now[b] > 0) {
                if (now[b] > na + QC_SCHED_SERVER_MARGIN_MS) {
                    p = b;
                    continue;
                }
                break;
            }
            if ((kind[b] == 3 || kind[b] == 2) && req[b] >= 0) {
                /* when its request was sent: its invoke, before b */
                double sent = -1;
                for (int k = b - 1; k >= 0; k--)
                    if (v[k].actor == v[b].actor && kind[k] == 1 && req[k] == req[b]) {
                        sent = t[k];
                        break;
                    }
                if (sent >= 0 && sent - off > na + QC_SCHED_SERVER_MARGIN_MS) {
                    p = b;
                    continue;
                }
            }
            break;
        }
        if (p == a)
            continue;
        /* its invoke must be before p: the request is sent in its turn */
        qc_sched_entry ve = v[a];
        double tt = t[a], nn = now[a];
        long long rr = req[a];
        unsigned char kk = kind[a];
        memmove(&v[p + 1], &v[p], (size_t)(a - p) * sizeof *v);
        memmove(&t[p + 1], &t[p], (size_t)(a - p) * sizeof *t);
        memmove(&now[p + 1], &now[p], (size_t)(a - p) * sizeof *now);
        memmove(&req[p + 1], &req[p], (size_t)(a - p) * sizeof *req);
        memmove(&kind[p + 1], &kind[p], (size_t)(a - p));
        memmove(&srv[p + 1], &srv[p], (size_t)(a - p) * sizeof *srv);
        v[p] = ve;
        t[p] = tt;
        now[p] = nn;
        req[p] = rr;
        kind[p] = kk;
        srv[p] = -1;
    }
    free(srv);
}

/* A fail answer's error (the ledger's "error": "op: STATE message") when
 * its SQLSTATE says the server aborted the transaction by its own choice:
 * 40001 (serialization failure; MariaDB's and SQL Server's deadlock
 * victim through ODBC) or 40P01 (PostgreSQL's deadlock).  Copies
 * "STATE message" to out (size n), else leaves out "" (decision 1144). */
static void server_abort(const char *error, const char *op, char *out, size_t n)
{
    size_t ol = strlen(op);
    out[0] = '\0';
    if (error == NULL || strncmp(error, op, ol) != 0 || strncmp(error + ol, ": ", 2) != 0)
        return;
    const char *m = error + ol + 2;
    if ((!strncmp(m, "40001 ", 6) || !strncmp(m, "40P01 ", 6)))
        snprintf(out, n, "%s", m);
}

int qc_sched_load_replay(const char *path, qc_sched_entry **out, int *n, qc_err *err)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0, alloc = 0;
    ssize_t len;
    long lineno = 0;
    qc_sched_entry *v = NULL;
    int cnt = 0;
    /* (actor, req) of the last point recorded per actor: a claim answered
     * with several rows is one point (its entry: entry) */
    typedef struct last { long long req; int actor; int entry; } last;
    /* the earlier run's live leases by job (lease_until, server epoch ms;
     * -1 released): which lease a reap or a claim found run out
     * (decision 1133) */
    jobmap run_leases = {0};
    last *lasts = NULL;
    size_t nlast = 0;

    *out = NULL;
    *n = 0;
    if (f == NULL)
        return qc_err_set(err, QC_EIO, "cannot read %s", path);
    json_t **evs = NULL;
    size_t nev = 0, evcap = 0;
    long workers = -1; /* the header's, -1 unknown */
    int free_run = 0;  /* the header has no "schedule" (decision 1148) */
    while ((len = getline(&line, &cap, f)) > 0) {
        json_error_t je;
        char bad[200] = "";
        lineno++;
        json_t *e = json_loadb(line, (size_t)len, 0, &je);
        if (e == NULL || !json_is_object(e)) {
            json_decref(e);
            if (len > 0 && line[len - 1] != '\n')
                break; /* a torn last line (the run was killed) */
            snprintf(bad, sizeof bad, "not a ledger event (%s)", je.text);
        } else if (!strcmp(json_string_value(json_object_get(e, "type")) != NULL
                               ? json_string_value(json_object_get(e, "type"))
                               : "",
                           "header")) {
            json_t *hw = json_object_get(e, "workers");
            if (json_is_integer(hw))
                workers = (long)json_integer_value(hw);
            /* a run with a schedule held its actors at their points */
            free_run = json_object_get(e, "schedule") == NULL;
            json_decref(e);
            continue;
        } else {
            /* what a replay orders by must be what the run wrote: an
             * edited ledger is refused, not replayed as something else */
            json_t *sq = json_object_get(e, "seq"), *wk = json_object_get(e, "worker");
            if (!json_is_integer(sq) || json_integer_value(sq) < 0)
                snprintf(bad, sizeof bad, "\"seq\" is not a non-negative integer");
            else if (wk != NULL && (!json_is_integer(wk) || json_integer_value(wk) < -3 ||
                                    (workers >= 0 && json_integer_value(wk) >= workers)))
                snprintf(bad, sizeof bad,
                         "\"worker\" is not one of the run's actors (-3 .. %ld)", workers - 1);
            if (bad[0])
                json_decref(e);
        }
        if (bad[0]) {
            fclose(f);
            free(line);
            for (size_t i = 0; i < nev; i++)
                json_decref(evs[i]);
            free(evs);
            return qc_err_set(err, QC_EINVAL, "%s:%ld: %s", path, lineno, bad);
        }
        if (nev == evcap) {
            evcap = evcap ? evcap * 2 : 1024;
            json_t **nv = realloc(evs, evcap * sizeof *nv);
            if (nv == NULL) {
                json_decref(e);
                break;
            }
            evs = nv;
        }
        evs[nev++] = e;
    }
    fclose(f);
    free(line);
    /* lines may be out of seq order across threads */
    qsort(evs, nev, sizeof *evs, by_seq);
    /* what the run's stop made (decision 1135): its "run stopping" note,
     * in older ledgers the proxy's first "the run stopped" note; the
     * points after it are not ordered (a replay's own stop makes them) */
    long stop_seq = -1;
    for (size_t i = 0; i < nev && stop_seq < 0; i++) {
        const char *nt = json_string_value(json_object_get(evs[i], "note"));
        if (nt != NULL && (!strcmp(nt, "run stopping") || strstr(nt, "the run stopped") != NULL))
            stop_seq = (long)json_integer_value(json_object_get(evs[i], "seq"));
    }
    /* per entry: its event's t, req (-1 none), kind (1 invoke, 2 an info
     * answer, 3 an ok or fail answer, 4 the client's alone: an effect, a
     * fault; 0 else) and server time (now, -1 none), for the slow lost
     * answers and the server's order below */
    double *ev_t = NULL;
    long long *ev_req = NULL;
    unsigned char *ev_kind = NULL;
    double *ev_now = NULL;
    /* per actor (index actor + 1), the t of its last point: when its next
     * action began; the first point's t is the zero */
    double *last_t = NULL;
    size_t nlast_t = 0;
    double first_t = -1;
    for (size_t i = 0; i < nev; i++) {
        json_t *e = evs[i];
        const char *type = json_string_value(json_object_get(e, "type"));
        json_t *w = json_object_get(e, "worker");
        char buf[64];
        const char *pt;
        int actor;
        if (type == NULL || !json_is_integer(w))
            continue;
        if (stop_seq >= 0 && json_integer_value(json_object_get(e, "seq")) > stop_seq)
            break; /* sorted by seq: the rest came after the stop */
        actor = (int)json_integer_value(w);
        if (actor < QC_SCHED_REAPER)
            continue; /* the nemesis, the feeder, the schedule */
        if (!strcmp(type, "blocked")) {
            pt = json_string_value(json_object_get(e, "point"));
            if (alloc == (size_t)cnt) {
                alloc = alloc ? alloc * 2 : 256;
                qc_sched_entry *nv = realloc(v, alloc * sizeof *nv);
                if (nv == NULL)
                    break;
                v = nv;
            }
            if (side_grow(&ev_t, &ev_req, &ev_kind, &ev_now, cnt) != 0)
                break;
            memset(&v[cnt], 0, sizeof v[cnt]);
            ev_t[cnt] = json_number_value(json_object_get(e, "t"));
            ev_req[cnt] = -1;
            ev_kind[cnt] = 0;
            ev_now[cnt] = -1;
            v[cnt].actor = actor;
            snprintf(v[cnt].point, sizeof v[cnt].point, "%s", pt ? pt : "");
            v[cnt].job = INT64_MIN;
            v[cnt].nowait = 1;
            v[cnt].where = (long)json_integer_value(json_object_get(e, "seq"));
            v[cnt].start_ms = action_start(&last_t, &nlast_t, &first_t, actor,
                                           json_number_value(json_object_get(e, "t")));
            cnt++;
            continue;
        }
        pt = qc_point_of_event(type, json_string_value(json_object_get(e, "op")),
                               json_string_value(json_object_get(e, "point")),
                               json_string_value(json_object_get(e, "fault")), buf, sizeof buf);
        if (pt == NULL)
            continue;
        if (actor == QC_SCHED_REAPER && strncmp(pt, "reap.", 5) != 0)
            continue; /* worker -1 is also the enqueuer: its faults (a lost NOTIFY) are
                         no reaper's points (decision 1137) */
        json_t *rq = json_object_get(e, "req");
        /* the lease this answer's job had in the run, when the answer
         * shows it run out: a reap's row, or a claim of a job whose lease
         * was never given back (taken over once expired) */
        const char *op = json_string_value(json_object_get(e, "op"));
        json_t *jbv = json_object_get(e, "job");
        int64_t ejob = json_is_integer(jbv) ? (int64_t)json_integer_value(jbv) : INT64_MIN;
        double found_lease = -1;
        if (!strcmp(type, "ok") && op != NULL && ejob != INT64_MIN) {
            long rk = jobmap_slot(&run_leases, ejob, 0);
            double held = rk >= 0 ? run_leases.val[rk] : -1;
            double enow = json_number_value(json_object_get(e, "now"));
            double lu = json_number_value(json_object_get(e, "lease_until"));
            long long erows = json_integer_value(json_object_get(e, "rows"));
            if (!strcmp(op, "reap")) {
                /* only a lease that had run out by the reap's own time: a
                 * reap that took a live lease (a mutant's early reap) is
                 * what the replay must show again, not wait away */
                if (held > 0 && enow > 0 && enow >= held)
                    found_lease = held;
                if (rk >= 0)
                    run_leases.val[rk] = -1;
            } else if (!strcmp(op, "claim")) {
                if (held > 0 && enow > 0 && enow >= held)
                    found_lease = held;
                if (lu > 0 && (rk = jobmap_slot(&run_leases, ejob, 1)) >= 0)
                    run_leases.val[rk] = lu;
            } else if (!strcmp(op, "renew") && erows > 0 && lu > 0 && rk >= 0) {
                run_leases.val[rk] = lu;
            } else if ((!strcmp(op, "complete") || !strcmp(op, "fail")) && erows > 0 && rk >= 0) {
                run_leases.val[rk] = -1;
            }
        }
        if (json_is_integer(rq) && !strcmp(type, "ok")) {
            long long req = json_integer_value(rq);
            size_t k;
            for (k = 0; k < nlast; k++)
                if (lasts[k].actor == actor)
                    break;
            if (k < nlast && lasts[k].req == req) {
                /* another row of the same claim (or reap): its entry waits
                 * for the lease that ran out last */
                qc_sched_entry *le = &v[lasts[k].entry];
                if (found_lease > 0 && (!le->expiry || found_lease > le->start_lease)) {
                    le->expiry = 1;
                    le->expired_job = ejob;
                    le->start_lease = found_lease;
                }
                continue;
            }
            if (k == nlast) {
                last *nl = realloc(lasts, (nlast + 1) * sizeof *nl);
                if (nl == NULL)
                    break;
                lasts = nl;
                nlast++;
                lasts[k].actor = actor;
            }
            lasts[k].req = req;
            lasts[k].entry = cnt;
        }
        if (alloc == (size_t)cnt || side_grow(&ev_t, &ev_req, &ev_kind, &ev_now, cnt) != 0) {
            if (alloc == (size_t)cnt) {
                alloc = alloc ? alloc * 2 : 256;
                qc_sched_entry *nv = realloc(v, alloc * sizeof *nv);
                if (nv == NULL)
                    break;
                v = nv;
            }
            if (side_grow(&ev_t, &ev_req, &ev_kind, &ev_now, cnt) != 0)
                break;
        }
        memset(&v[cnt], 0, sizeof v[cnt]);
        ev_t[cnt] = json_number_value(json_object_get(e, "t"));
        ev_req[cnt] = json_is_integer(rq) ? (long long)json_integer_value(rq) : -1;
        ev_kind[cnt] = !strcmp(type, "invoke")                          ? 1
                       : !strcmp(type, "info")                          ? 2
                       : !strcmp(type, "ok") || !strcmp(type, "fail")   ? 3
                       : !strcmp(type, "effect") || !strcmp(type, "fault") ? 4
                                                                        : 0;
        json_t *nw = json_object_get(e, "now");
        ev_now[cnt] = json_is_number(nw) ? json_number_value(nw) : -1;
        v[cnt].actor = actor;
        snprintf(v[cnt].point, sizeof v[cnt].point, "%s", pt);
        json_t *jb = json_object_get(e, "job");
        v[cnt].job = json_is_integer(jb) ? (int64_t)json_integer_value(jb) : INT64_MIN;
        if (!strcmp(type, "ok") && op != NULL && !strcmp(op, "reap") &&
            json_integer_value(json_object_get(e, "rows")) == 0)
            /* an empty reap is replayed as one: the reaper's next point
             * (its next pass) says nothing of what it took (decision 1135) */
            v[cnt].job = QC_SCHED_NO_JOB;
        if (!strcmp(type, "ok") && json_integer_value(json_object_get(e, "rows")) > 1)
            v[cnt].job = INT64_MIN; /* a batch: the first row's job is enough to say */
        v[cnt].where = (long)json_integer_value(json_object_get(e, "seq"));
        v[cnt].start_ms = action_start(&last_t, &nlast_t, &first_t, actor,
                                       json_number_value(json_object_get(e, "t")));
        if (found_lease > 0) {
            v[cnt].expiry = 1;
            v[cnt].expired_job = ejob;
            v[cnt].start_lease = found_lease;
        }
        v[cnt].at_once = free_run;
        if (!strcmp(type, "fail") && op != NULL)
            server_abort(json_string_value(json_object_get(e, "error")), op, v[cnt].abort_err,
                         sizeof v[cnt].abort_err);
        cnt++;
    }
    jobmap_fini(&run_leases);
    free(last_t);
    for (size_t i = 0; i < nev; i++)
        json_decref(evs[i]);
    free(evs);
    free(lasts);
    /* a claim or reap of several statements read the lease it found run
     * out at its first statement (a SELECT ... FOR UPDATE, then its
     * UPDATE): that statement's answer waits for it too, not only the
     * request's (decision 1145) */
    for (int k = 0; v != NULL && k < cnt; k++) {
        if (!v[k].expiry)
            continue;
        /* its request's earlier entries: the points between its
         * statements, of the same step, back to its invoke */
        const char *dot = strchr(v[k].point, '.');
        size_t sl = dot != NULL ? (size_t)(dot - v[k].point) + 1 : 0;
        int first = -1;
        for (int j = k - 1; j >= 0 && sl > 0; j--) {
            if (v[j].actor != v[k].actor)
                continue;
            if (strncmp(v[j].point, v[k].point, sl) != 0 || !mid_step(v[j].point))
                break;
            first = j;
        }
        if (first >= 0 && !v[first].expiry) {
            v[first].expiry = 1;
            v[first].expired_job = v[k].expired_job;
            v[first].start_lease = v[k].start_lease;
        }
    }
    if (v != NULL && ev_t != NULL)
        server_order(v, cnt, ev_t, ev_req, ev_kind, ev_now);
    if (v != NULL && ev_t != NULL)
        cnt = slow_lost_answers(&v, cnt, ev_t, ev_req, ev_kind);
    free(ev_now);
    free(ev_t);
    free(ev_req);
    free(ev_kind);
    *out = v;
    *n = cnt;
    return 0;
}
