/*
 * replay.c - the replay search (replay.h).
 */
#define _XOPEN_SOURCE 700
#include "audit.h"
#include "replay.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A move: the entry at `from` is taken out and put back at `to` (an index
 * into the order without it).  A taker move (taker = 1, to < from): every
 * entry of from's actor at to..from goes, in its order, to just before the
 * entry at `to` (the action that took, in the earlier run, the job the
 * actor at `to` got in the replay, with its request's earlier points).  An
 * early-read move (taker = 2, to < from) puts from, and the first points of
 * the other requests that got the same job in the same way, right before
 * to (apply_early_reads; decision 1140). */
typedef struct move {
    int from, to;
    int taker;
} move;

#define MAX_CANDS 12

/* An order tried: where its attempt diverged, and the moves to try from it. */
typedef struct state {
    qc_sched_entry *order;
    double rank;           /* how far it got: the place of the diverging entry (the same
                              entry as its parent's, moved, is ranked below the parent) */
    long seq;              /* the diverging entry's seq; -1: not diverged */
    int place;
    char got_point[40];    /* the point its actor passed there instead ("" unknown) */
    int64_t got_job;       /* and the job it passed it for (INT64_MIN none) */
    int by_taker;          /* it was made by a taker move */
    move cand[MAX_CANDS];
    int ncand, next, expanded;
} state;

struct qc_replay_search {
    qc_sched_entry *cur;   /* the order of the attempt running */
    int n;
    state *st;             /* every attempt's order, max_attempts at most */
    int nst;
    int parent;            /* the state cur was made from, -1: the ledger's order */
    int taker;             /* cur was made by a taker move */
    int attempts, max_attempts;
    int *place;            /* per attempt: the entry it diverged at (0-based), n: it did
                              not diverge, -1: not known */
    int reproduced;        /* the attempt (1-based) that reproduced the run, 0: none */
    double best_rank;      /* the highest rank of an attempt so far */
    int stale;             /* attempts since the best rank last rose */
};

qc_replay_search *qc_replay_search_new(const qc_sched_entry *e, int n, int max_attempts)
{
    qc_replay_search *rs = calloc(1, sizeof *rs);
    if (rs == NULL)
        return NULL;
    rs->n = n;
    rs->max_attempts = max_attempts > 0 ? max_attempts : 1;
    rs->cur = malloc((size_t)(n > 0 ? n : 1) * sizeof *e);
    rs->st = calloc((size_t)rs->max_attempts, sizeof *rs->st);
    rs->place = calloc((size_t)rs->max_attempts, sizeof *rs->place);
    if (rs->cur == NULL || rs->st == NULL || rs->place == NULL) {
        qc_replay_search_free(rs);
        return NULL;
    }
    if (n > 0)
        memcpy(rs->cur, e, (size_t)n * sizeof *e);
    rs->parent = -1;
    rs->best_rank = -1e300;
    return rs;
}

int qc_replay_search_stale(const qc_replay_search *rs)
{
    return rs->stale;
}

void qc_replay_search_free(qc_replay_search *rs)
{
    if (rs == NULL)
        return;
    for (int i = 0; rs->st != NULL && i < rs->nst; i++)
        free(rs->st[i].order);
    free(rs->st);
    free(rs->place);
    free(rs->cur);
    free(rs);
}

const qc_sched_entry *qc_replay_search_order(const qc_replay_search *rs, int *n)
{
    *n = rs->n;
    return rs->cur;
}

int qc_replay_search_attempts(const qc_replay_search *rs)
{
    return rs->attempts;
}

int qc_replay_search_place(const qc_replay_search *rs, int attempt)
{
    if (attempt < 1 || attempt > rs->attempts || attempt > rs->max_attempts)
        return -1;
    return rs->place[attempt - 1];
}

int qc_replay_search_kept(const qc_replay_search *rs, int *reproduced, int *place)
{
    int best = 0;
    *reproduced = rs->reproduced > 0;
    if (rs->reproduced > 0)
        best = rs->reproduced - 1;
    else
        for (int i = 1; i < rs->attempts && i < rs->max_attempts; i++)
            if (rs->place[i] > rs->place[best])
                best = i; /* the earliest of those that got furthest */
    *place = rs->attempts > 0 ? rs->place[best] : -1;
    return rs->attempts > 0 ? best + 1 : 0;
}

int qc_replay_divergence(const char *ledger, long *seq, long *consumed, char *point,
                         size_t pointn, int64_t *job)
{
    FILE *f = fopen(ledger, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int found = 0;

    *seq = -1;
    *consumed = -1;
    if (point != NULL && pointn > 0)
        point[0] = '\0';
    if (job != NULL)
        *job = INT64_MIN;
    if (f == NULL)
        return 0;
    while (!found && (len = getline(&line, &cap, f)) > 0) {
        if (strstr(line, "\"replay_seq\"") == NULL)
            continue;
        json_t *e = json_loadb(line, (size_t)len, 0, NULL);
        json_t *s = json_object_get(e, "replay_seq");
        json_t *c = json_object_get(e, "replay_consumed");
        if (json_is_integer(s)) {
            const char *pt = json_string_value(json_object_get(e, "replay_point"));
            json_t *jb = json_object_get(e, "replay_job");
            *seq = (long)json_integer_value(s);
            *consumed = json_is_integer(c) ? (long)json_integer_value(c) : 0;
            if (point != NULL && pointn > 0 && pt != NULL)
                snprintf(point, pointn, "%s", pt);
            if (job != NULL && json_is_integer(jb))
                *job = (int64_t)json_integer_value(jb);
            found = 1;
        }
        json_decref(e);
    }
    free(line);
    fclose(f);
    return found;
}

static int is_before_point(const char *point)
{
    size_t pl = strlen(point);
    return pl > 7 && !strcmp(point + pl - 7, ".before");
}

/* The request of b[d]'s actor that d belongs to: its `.before` entry
 * (the return; -1 when none before d), and in *first the actor's first
 * entry after it (-1 when d is the only one; may be NULL). */
static int request_start(const qc_sched_entry *b, int d, int *first)
{
    int f = -1;
    for (int i = d - 1; i >= 0; i--)
        if (b[i].actor == b[d].actor) {
            if (is_before_point(b[i].point)) {
                if (first != NULL)
                    *first = f;
                return i;
            }
            f = i;
        }
    if (first != NULL)
        *first = f;
    return -1;
}

/* An early-read move (decision 1140): src[m.to] is the earlier run's first
 * taker of a job at its point; every request that got that job at the
 * same point later, begun (its `.before`) before the taker and with its
 * first point after it, has that first point put right before the taker,
 * in their order (m.from is one of them).  Returns 0, or -1 when out of
 * memory (dst untouched). */
static int apply_early_reads(qc_sched_entry *dst, const qc_sched_entry *src, int n, move m)
{
    int k = m.to, o = 0;
    unsigned char *mv = calloc((size_t)n, 1);
    if (mv == NULL)
        return -1;
    mv[m.from] = 1;
    for (int d = k + 1; d < n; d++) {
        if (src[d].actor == src[k].actor || src[d].job != src[k].job ||
            strcmp(src[d].point, src[k].point))
            continue;
        int first, inv = request_start(src, d, &first);
        if (inv >= 0 && inv < k && first > k)
            mv[first] = 1;
    }
    for (int i = 0; i < k; i++)
        dst[o++] = src[i];
    for (int i = k; i < n; i++)
        if (mv[i])
            dst[o++] = src[i];
    for (int i = k; i < n; i++)
        if (!mv[i])
            dst[o++] = src[i];
    free(mv);
    return 0;
}

static void apply(qc_sched_entry *dst, const qc_sched_entry *src, int n, move m)
{
    int o = 0, w = 0;
    if (m.taker == 2 && apply_early_reads(dst, src, n, m) == 0)
        return;
    if (m.taker == 1) {
        int actor = src[m.from].actor;
        for (int i = 0; i < m.to; i++)
            dst[o++] = src[i];
        for (int i = m.to; i <= m.from; i++)
            if (src[i].actor == actor)
                dst[o++] = src[i];
        for (int i = m.to; i <= m.from; i++)
            if (src[i].actor != actor)
                dst[o++] = src[i];
        for (int i = m.from + 1; i < n; i++)
            dst[o++] = src[i];
        return;
    } /* w: index in the order without the moved entry */
    for (int i = 0; i < n; i++) {
        if (i == m.from)
            continue;
        if (w == m.to)
            dst[o++] = src[m.from];
        dst[o++] = src[i];
        w++;
    }
    if (m.to >= w)
        dst[o++] = src[m.from];
}

static void describe(const qc_sched_entry *b, int n, move m, char *buf, size_t len)
{
    const qc_sched_entry *x = &b[m.from];
    char who[16], other[16];
    qc_actor_name(x->actor, who, sizeof who);
    if (m.taker == 2) {
        const qc_sched_entry *y = &b[m.to];
        qc_actor_name(y->actor, other, sizeof other);
        snprintf(buf, len,
                 "%s %s (seq %ld) now before %s %s (seq %ld): its read ran before the earlier "
                 "run's first taker of the job it was to get",
                 who, x->point, x->where, other, y->point, y->where);
        return;
    }
    if (m.taker) {
        const qc_sched_entry *y = &b[m.to];
        qc_actor_name(y->actor, other, sizeof other);
        snprintf(buf, len,
                 "%s %s (seq %ld), with its earlier points after %s's, now before %s %s (seq "
                 "%ld): the earlier run's taker of the job %s got",
                 who, x->point, x->where, other, other, y->point, y->where, other);
        return;
    }
    /* the entry it now comes before (to is an index without it) */
    int before = m.to < m.from ? m.to : m.to + 1;
    if (before < n) {
        const qc_sched_entry *y = &b[before];
        qc_actor_name(y->actor, other, sizeof other);
        snprintf(buf, len, "%s %s (seq %ld) now before %s %s (seq %ld)", who, x->point, x->where,
                 other, y->point, y->where);
    } else {
        snprintf(buf, len, "%s %s (seq %ld) now last", who, x->point, x->where);
    }
}

/* The moves to try from state t, diverged at its entry d (see replay.h). */
static void candidates(state *t, int n, int d)
{
    const qc_sched_entry *b = t->order;
    int actor = b[d].actor;
    int pos[5], np = 0;

    t->ncand = t->next = 0;
    t->expanded = 1;
    /* the taker first: the actor passed its point for another job than
     * the earlier run's (a claim answered job B, not A); the action that
     * took B in that run, later in this order, goes ahead of it, with its
     * request's earlier points after d (a claim's invoke, its first
     * statements): what took a job first there takes it first here.  A
     * claim answered on the server in one order and at the client in
     * another (answers queued behind a slow link, decision 1131) is put
     * back in the server's order one taker at a time. */
    /* the actor's read ran too late (decision 1140): the earlier run's
     * answer gave it job A, the replay's another, and another actor's same
     * point took A after the actor's request began (its `.before`) and
     * before d.  In the run the actor's read (a claim's SELECT) ran on the
     * server before that taker's write committed, although its point was
     * recorded after it (a client thread late to record the answer: a
     * loaded machine); replayed in the recorded order it reads after the
     * write and picks the next job.  The request's first point after the
     * earliest such taker goes right before it, with those of the other
     * requests that got the same job later in the same way (a read that
     * ran early is seldom alone on a loaded machine). */
    if (t->got_job != INT64_MIN && !strcmp(t->got_point, b[d].point) && b[d].job != t->got_job &&
        b[d].job > QC_SCHED_NO_JOB) {
        int inv = request_start(b, d, NULL);
        for (int k = inv + 1; inv >= 0 && k < d; k++) {
            if (b[k].actor == actor || b[k].job != b[d].job || strcmp(b[k].point, b[d].point))
                continue;
            for (int i = k + 1; i < d; i++)
                if (b[i].actor == actor) {
                    t->cand[t->ncand++] = (move){i, k, 2};
                    break;
                }
            break;
        }
    }
    if (t->got_job != INT64_MIN && !strcmp(t->got_point, b[d].point) && b[d].job != t->got_job)
        for (int k = d + 1; k < n; k++) {
            if (b[k].actor == actor || b[k].job != t->got_job || strcmp(b[k].point, b[d].point))
                continue;
            int own = 0;
            for (int i = d; i < k; i++)
                own += b[i].actor == b[k].actor;
            if (own <= 3)
                t->cand[t->ncand++] = (move){k, d, 1};
            break;
        }
    pos[np++] = d;
    for (int k = d - 1; k >= 0 && np < 5; k--)
        if (b[k].actor == actor)
            pos[np++] = k;
    /* an action ahead of what ended while it ran: entry pos[j] right after
     * its actor's previous point pos[j+1] (an actor's first action begins
     * at its start: index 0) */
    for (int j = 0; j < np && t->ncand < MAX_CANDS - 1; j++) {
        int from = pos[j], start = j + 1 < np ? pos[j + 1] + 1 : 0;
        if (j + 1 >= np && np == 5)
            break; /* four actions back is far enough */
        if (start < from)
            t->cand[t->ncand++] = (move){from, start, 0};
    }
    /* the diverging action one place later: behind the next entry of
     * another actor */
    if (d + 1 < n && b[d + 1].actor != actor && t->ncand < MAX_CANDS)
        t->cand[t->ncand++] = (move){d, d + 1, 0};
    /* one of its earlier actions as late as it goes (right before the
     * actor's next entry), then one place later: a claim's SELECT (claim.1)
     * that ran beside another's and ended first, although the other held
     * the row (SKIP LOCKED passed it), diverges only at the claim's
     * answer, where the job shows; run after the other's UPDATE it sees
     * the row taken and answers as it did (decision 68) */
    for (int j = 1; j < np && j < 4 && t->ncand < MAX_CANDS; j++)
        if (pos[j] + 2 < pos[j - 1])
            t->cand[t->ncand++] = (move){pos[j], pos[j - 1] - 1, 0};
    for (int j = 1; j < np && j < 4 && t->ncand < MAX_CANDS; j++)
        if (pos[j] + 1 < n && b[pos[j] + 1].actor != actor)
            t->cand[t->ncand++] = (move){pos[j], pos[j] + 1, 0};
}

/* Whether order o is one an attempt already ran. */
static int tried(const qc_replay_search *rs, const qc_sched_entry *o)
{
    for (int i = 0; i < rs->nst; i++) {
        int same = 1;
        for (int k = 0; k < rs->n && same; k++)
            same = rs->st[i].order[k].where == o[k].where;
        if (same)
            return 1;
    }
    return 0;
}

int qc_replay_search_next(qc_replay_search *rs, const char *ledger, int reproduced, char *msg,
                          size_t msgn)
{
    long seq, consumed;
    char what[400], got_point[40];
    int64_t got_job;

    msg[0] = '\0';
    int a = rs->attempts++;
    int diverged =
        qc_replay_divergence(ledger, &seq, &consumed, got_point, sizeof got_point, &got_job);
    if (a < rs->max_attempts) {
        rs->place[a] = diverged ? -1 : rs->n;
        for (int i = 0; diverged && i < rs->n; i++)
            if (rs->cur[i].where == seq) {
                rs->place[a] = i;
                break;
            }
    }
    if (reproduced) {
        rs->reproduced = a + 1;
        return 0;
    }
    if (!diverged) {
        if (rs->parent >= 0)
            snprintf(msg, msgn, "the replay did not diverge, and it did not fail the same way");
        return 0;
    }
    /* how far the attempt got: the place of the diverging entry in its
     * order (the count of entries carried out varies with blocked actions,
     * the place does not) */
    int d = -1;
    for (int i = 0; i < rs->n; i++)
        if (rs->cur[i].where == seq) {
            d = i;
            break;
        }
    if (d < 0) {
        snprintf(msg, msgn, "the diverging entry (seq %ld) is not in the order", seq);
        return 0;
    }
    if (rs->nst < rs->max_attempts) {
        state *t = &rs->st[rs->nst];
        t->order = malloc((size_t)(rs->n > 0 ? rs->n : 1) * sizeof *t->order);
        if (t->order == NULL) {
            snprintf(msg, msgn, "out of memory");
            return 0;
        }
        memcpy(t->order, rs->cur, (size_t)rs->n * sizeof *t->order);
        t->seq = seq;
        t->place = d;
        t->rank = d;
        snprintf(t->got_point, sizeof t->got_point, "%s", got_point);
        t->got_job = got_job;
        t->by_taker = rs->taker;
        if (rs->parent >= 0 && rs->st[rs->parent].seq == seq) {
            const state *p = &rs->st[rs->parent];
            if (rs->taker && got_job != p->got_job)
                /* a taker moved ahead and the same entry now gets
                 * another job: one overlapping claim put in its place,
                 * a little further (less than one entry) */
                t->rank = p->rank + 0.001;
            else
                t->rank = p->rank - 0.5; /* the same entry moved: not further */
        }
        rs->nst++;
        if (t->rank > rs->best_rank) {
            rs->best_rank = t->rank;
            rs->stale = 0;
        } else {
            rs->stale++;
        }
    }
    if (rs->attempts >= rs->max_attempts) {
        snprintf(msg, msgn, "%d attempts made", rs->attempts);
        return 0;
    }
    /* best first: the state that got furthest with a move left (the
     * latest among equals), its next move not tried yet */
    for (;;) {
        int best = -1;
        for (int i = 0; i < rs->nst; i++) {
            state *t = &rs->st[i];
            if (t->expanded && t->next >= t->ncand)
                continue;
            if (best < 0 || t->rank >= rs->st[best].rank)
                best = i;
        }
        if (best < 0) {
            snprintf(msg, msgn, "no other order of the overlapping actions is left to try");
            return 0;
        }
        state *t = &rs->st[best];
        if (!t->expanded)
            candidates(t, rs->n, t->place);
        if (t->next >= t->ncand)
            continue;
        move m = t->cand[t->next++];
        apply(rs->cur, t->order, rs->n, m);
        if (tried(rs, rs->cur))
            continue;
        rs->parent = best;
        rs->taker = m.taker;
        describe(t->order, rs->n, m, what, sizeof what);
        char from[48] = "";
        if (best != rs->nst - 1)
            snprintf(from, sizeof from, " (from attempt %d's order)", best + 1);
        snprintf(msg, msgn,
                 "attempt %d diverged at seq %ld (entry %d of %d, %ld carried out); attempt "
                 "%d%s: %s", rs->attempts, seq, d + 1, rs->n, consumed, rs->attempts + 1, from,
                 what);
        return 1;
    }
}

/* ---- the replay's folder: every attempt's run, and the one kept ---- */

void qc_replay_attempt_dir(const char *out, int attempt, char *buf, size_t n)
{
    if (attempt <= 1)
        snprintf(buf, n, "%s", out);
    else
        snprintf(buf, n, "%s/attempt-%d", out, attempt);
}

int qc_replay_clear_attempts(const char *out, qc_err *err)
{
    DIR *d = opendir(out);
    struct dirent *de;
    int n = 0;
    if (d == NULL)
        return 0; /* no folder yet: nothing to clear */
    while ((de = readdir(d)) != NULL) {
        char p[PATH_MAX];
        struct stat st;
        if (!qc_numbered_name(de->d_name, "attempt-"))
            continue;
        snprintf(p, sizeof p, "%s/%s", out, de->d_name);
        if (lstat(p, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        if (qc_remove_tree(p) != 0) {
            closedir(d);
            return qc_err_set(err, QC_EIO, "cannot remove %s (an earlier replay's attempt)", p);
        }
        n++;
    }
    closedir(d);
    return n;
}

/* Copies file from to to (a link could not be made). */
static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *o;
    char buf[65536];
    size_t k;
    int rc = 0;
    if (in == NULL)
        return -1;
    if ((o = fopen(to, "wb")) == NULL) {
        fclose(in);
        return -1;
    }
    while ((k = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, k, o) != k)
            rc = -1;
    if (ferror(in))
        rc = -1;
    fclose(in);
    if (fclose(o) != 0)
        rc = -1;
    return rc;
}

/* The regular files of folder dir: moved into to (mv = 1) or linked
 * (else copied) into it. */
static int files_to(const char *dir, const char *to, int mv, qc_err *err)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    if (d == NULL)
        return qc_err_set(err, QC_EIO, "cannot read folder %s", dir);
    while ((de = readdir(d)) != NULL) {
        char a[PATH_MAX], b[PATH_MAX];
        struct stat st;
        snprintf(a, sizeof a, "%s/%s", dir, de->d_name);
        if (lstat(a, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        snprintf(b, sizeof b, "%s/%s", to, de->d_name);
        unlink(b);
        if (mv ? rename(a, b) != 0 : (link(a, b) != 0 && copy_file(a, b) != 0)) {
            closedir(d);
            return qc_err_set(err, QC_EIO, "cannot %s %s to %s", mv ? "move" : "copy", a, b);
        }
    }
    closedir(d);
    return 0;
}

int qc_replay_keep(const char *out, int kept, int attempts, qc_err *err)
{
    char first[PATH_MAX], dir[PATH_MAX];
    if (attempts <= 1 || kept < 1)
        return 0;
    snprintf(first, sizeof first, "%s/attempt-1", out);
    if (mkdir(first, 0755) != 0 && errno != EEXIST)
        return qc_err_set(err, QC_EIO, "cannot create %s", first);
    if (files_to(out, first, 1, err) != 0)
        return -1;
    if (kept == 1)
        snprintf(dir, sizeof dir, "%s", first);
    else
        qc_replay_attempt_dir(out, kept, dir, sizeof dir);
    return files_to(dir, out, 0, err) != 0 ? -1 : 0;
}

int qc_replay_annotate(const char *out, const char *of, int kept, int attempts, int reproduced,
                       int same_way, int place, int entries, qc_err *err)
{
    char p[PATH_MAX], tmp[PATH_MAX + 8], dir[PATH_MAX];
    json_t *root, *r;
    snprintf(p, sizeof p, "%s/results.json", out);
    if ((root = json_load_file(p, 0, NULL)) == NULL || !json_is_object(root)) {
        json_decref(root);
        return qc_err_set(err, QC_EIO, "cannot read %s", p);
    }
    if (attempts > 1)
        snprintf(dir, sizeof dir, "%s/attempt-%d", out, kept);
    else
        snprintf(dir, sizeof dir, "%s", out);
    r = json_object();
    json_object_set_new(r, "of", json_string(of));
    json_object_set_new(r, "attempts", json_integer(attempts));
    json_object_set_new(r, "kept", json_integer(kept));
    json_object_set_new(r, "kept_dir", json_string(dir));
    json_object_set_new(r, "reproduced", json_boolean(reproduced));
    json_object_set_new(r, "same_way", json_boolean(reproduced || same_way));
    json_object_set_new(r, "why_kept",
                        json_string(reproduced ? "it reproduced the run"
                                    : same_way ? "none reproduced the run's order through its "
                                                 "evidence: it failed the same way"
                                               : "none reproduced the run: it got furthest"));
    json_object_set_new(r, "entries", json_integer(entries));
    if (place >= 0 && place < entries)
        json_object_set_new(r, "diverged_at_entry", json_integer(place + 1));
    else
        json_object_set_new(r, "diverged_at_entry", json_null());
    json_object_set_new(root, "replay", r);
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    int rc = json_dump_file(root, tmp, JSON_INDENT(2));
    json_decref(root);
    if (rc != 0 || rename(tmp, p) != 0) {
        unlink(tmp);
        return qc_err_set(err, QC_EIO, "cannot write %s", p);
    }
    return 0;
}
