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

struct qc_replay_search {
    qc_sched_entry *base;  /* the best order so far */
    qc_sched_entry *cur;   /* the order of the attempt running */
    int n;
    long base_progress;    /* the place of the entry the base diverged at; -1: not run */
    long base_seq;         /* and that entry's seq */
    move cand[MAX_CANDS];
    int ncand, next;
    int attempts, max_attempts;
    int cur_is_base;
};

qc_replay_search *qc_replay_search_new(const qc_sched_entry *e, int n, int max_attempts)
{
    qc_replay_search *rs = calloc(1, sizeof *rs);
    if (rs == NULL)
        return NULL;
    rs->n = n;
    rs->base = malloc((size_t)(n > 0 ? n : 1) * sizeof *e);
    rs->cur = malloc((size_t)(n > 0 ? n : 1) * sizeof *e);
    if (rs->base == NULL || rs->cur == NULL) {
        qc_replay_search_free(rs);
        return NULL;
    }
    if (n > 0) {
        memcpy(rs->base, e, (size_t)n * sizeof *e);
        memcpy(rs->cur, e, (size_t)n * sizeof *e);
    }
    rs->base_progress = -1;
    rs->max_attempts = max_attempts > 0 ? max_attempts : 1;
    rs->cur_is_base = 1;
    return rs;
}

void qc_replay_search_free(qc_replay_search *rs)
{
    if (rs == NULL)
        return;
    free(rs->base);
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

static void describe(const qc_replay_search *rs, move m, char *buf, size_t n)
{
    const qc_sched_entry *x = &rs->base[m.from];
    char who[16], other[16];
    qc_actor_name(x->actor, who, sizeof who);
    /* the entry it now comes before (to is an index without it) */
    int before = m.to < m.from ? m.to : m.to + 1;
    if (before < rs->n) {
        const qc_sched_entry *y = &rs->base[before];
        qc_actor_name(y->actor, other, sizeof other);
        snprintf(buf, n, "%s %s (seq %ld) now before %s %s (seq %ld)", who, x->point, x->where,
                 other, y->point, y->where);
    } else {
        snprintf(buf, n, "%s %s (seq %ld) now last", who, x->point, x->where);
    }
}

/* The moves to try at the base's entry d (see replay.h). */
static void candidates(qc_replay_search *rs, int d)
{
    const qc_sched_entry *b = rs->base;
    int actor = b[d].actor;
    int pos[5], np = 0;

    rs->ncand = rs->next = 0;
    pos[np++] = d;
    for (int k = d - 1; k >= 0 && np < 5; k--)
        if (b[k].actor == actor)
            pos[np++] = k;
    /* an action ahead of what ended while it ran: entry pos[j] right after
     * its actor's previous point pos[j+1] (the start of an actor's first
     * action is its start: index 0) */
    for (int j = 0; j < np && rs->ncand < MAX_CANDS - 1; j++) {
        int from = pos[j], start = j + 1 < np ? pos[j + 1] + 1 : 0;
        if (j + 1 >= np && np == 5)
            break; /* four actions back is far enough */
        if (start < from)
            rs->cand[rs->ncand++] = (move){from, start};
    }
    /* the diverging action one place later: behind the next entry of
     * another actor */
    if (d + 1 < rs->n && b[d + 1].actor != actor)
        rs->cand[rs->ncand++] = (move){d, d + 1};
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
    int diverged = qc_replay_divergence(ledger, &seq, &consumed);
    if (!diverged) {
        if (!rs->cur_is_base)
            snprintf(msg, msgn, "the replay did not diverge, and it did not fail the same way");
        return 0;
    }
    /* how far the attempt got: the place of the diverging entry in its
     * order (a move shifts entries by a place or so; the count of entries
     * consumed varies with blocked actions, the place does not) */
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
    /* further: another entry diverged, at a later place (the same entry
     * moved one place later is no progress) */
    if (rs->cur_is_base || (seq != rs->base_seq && d > rs->base_progress)) {
        if (!rs->cur_is_base)
            memcpy(rs->base, rs->cur, (size_t)rs->n * sizeof *rs->cur);
        rs->base_progress = d;
        rs->base_seq = seq;
        candidates(rs, d);
    }
    if (rs->next >= rs->ncand) {
        snprintf(msg, msgn, "no other order of the overlapping actions is left to try");
        return 0;
    }
    if (rs->attempts >= rs->max_attempts) {
        snprintf(msg, msgn, "%d attempts made", rs->attempts);
        return 0;
    }
    move m = rs->cand[rs->next++];
    apply(rs->cur, rs->base, rs->n, m);
    rs->cur_is_base = 0;
    describe(rs, m, what, sizeof what);
    snprintf(msg, msgn, "diverged at seq %ld (entry %d of %d, %ld carried out); attempt %d: %s",
             seq, d + 1, rs->n, consumed, rs->attempts + 1, what);
    return 1;
}
