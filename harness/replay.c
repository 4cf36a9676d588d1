/*
 * replay.c - the replay search (replay.h).
 */
#include "replay.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A move: the entry at `from` is taken out and put back at `to` (an index
 * into the order without it). */
typedef struct move {
    int from, to;
} move;

#define MAX_CANDS 8

/* An order tried: where its attempt diverged, and the moves to try from it. */
typedef struct state {
    qc_sched_entry *order;
    double rank;           /* how far it got: the place of the diverging entry (the same
                              entry as its parent's, moved, is ranked below the parent) */
    long seq;              /* the diverging entry's seq; -1: not diverged */
    int place;
    move cand[MAX_CANDS];
    int ncand, next, expanded;
} state;

struct qc_replay_search {
    qc_sched_entry *cur;   /* the order of the attempt running */
    int n;
    state *st;             /* every attempt's order, max_attempts at most */
    int nst;
    int parent;            /* the state cur was made from, -1: the ledger's order */
    int attempts, max_attempts;
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
    if (rs->cur == NULL || rs->st == NULL) {
        qc_replay_search_free(rs);
        return NULL;
    }
    if (n > 0)
        memcpy(rs->cur, e, (size_t)n * sizeof *e);
    rs->parent = -1;
    return rs;
}

void qc_replay_search_free(qc_replay_search *rs)
{
    if (rs == NULL)
        return;
    for (int i = 0; rs->st != NULL && i < rs->nst; i++)
        free(rs->st[i].order);
    free(rs->st);
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

int qc_replay_divergence(const char *ledger, long *seq, long *consumed)
{
    FILE *f = fopen(ledger, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int found = 0;

    *seq = -1;
    *consumed = -1;
    if (f == NULL)
        return 0;
    while (!found && (len = getline(&line, &cap, f)) > 0) {
        if (strstr(line, "\"replay_seq\"") == NULL)
            continue;
        json_t *e = json_loadb(line, (size_t)len, 0, NULL);
        json_t *s = json_object_get(e, "replay_seq");
        json_t *c = json_object_get(e, "replay_consumed");
        if (json_is_integer(s)) {
            *seq = (long)json_integer_value(s);
            *consumed = json_is_integer(c) ? (long)json_integer_value(c) : 0;
            found = 1;
        }
        json_decref(e);
    }
    free(line);
    fclose(f);
    return found;
}

static void apply(qc_sched_entry *dst, const qc_sched_entry *src, int n, move m)
{
    int o = 0, w = 0; /* w: index in the order without the moved entry */
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
            t->cand[t->ncand++] = (move){from, start};
    }
    /* the diverging action one place later: behind the next entry of
     * another actor */
    if (d + 1 < n && b[d + 1].actor != actor)
        t->cand[t->ncand++] = (move){d, d + 1};
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
    char what[400];

    msg[0] = '\0';
    rs->attempts++;
    if (reproduced)
        return 0;
    if (!qc_replay_divergence(ledger, &seq, &consumed)) {
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
        if (rs->parent >= 0 && rs->st[rs->parent].seq == seq)
            t->rank = rs->st[rs->parent].rank - 0.5; /* the same entry moved: not further */
        rs->nst++;
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
