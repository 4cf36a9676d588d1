/*
 * history.c - reads ledgers (JSON Lines, format in history.h) back into a
 * qc_history, the only input of the checkers.
 *
 * Design: each ledger is read in blocks of whole lines (16 MiB) and cut into
 * lines; every
 * line is parsed on its own with jansson (json_loadb), so one bad line is
 * named by file:line and a torn tail (the harness was killed mid-write) costs
 * only that line.  jansson's parse is most of the cost of a load (about 3 us
 * a line here), so a big ledger is cut at line boundaries into one part per
 * CPU, parsed by a thread each, and the parts are merged back in file order.
 * Strings are interned: each part owns a string table (the tables together
 * are the history's one string store, freed at once), so a part interns
 * without a lock.  Events are then sorted by seq (lines of one ledger may be
 * out of seq order across writer buffers; several ledgers merge, ties
 * keeping load order), and each completion is paired with its invoke
 * through a hash table keyed by (ledger, worker, inc, req).
 *
 * Invariants:
 *   - after a successful load, h->ev[0..n) is sorted by seq and every string
 *     pointer and string id (qc_str) in it points into h->strings, whose
 *     chunks hold their slots of qc__str_slot until qc_history_fini;
 *   - the only line skipped (and counted in h->torn) is the last
 *     line of a ledger that does not end with '\n' and is not a JSON object;
 *     any other bad line fails the whole load with QC_EINVAL, and h is left
 *     empty (fini-safe);
 *   - all headers of one load agree on the seed; the first header fills
 *     h->info, missing values keep the documented defaults;
 *   - work is O(n log n) in the number of lines (O(n) when already sorted).
 */
#include "history.h"
#include "flatjson.h"
#include "input.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- interned strings ------------------------------------------------- */

#define CHUNK_SIZE 65536
/* A strtab's later chunks: as big as a string id's offset reaches. */
#define CHUNK_BIG ((size_t)1 << QC_STR_SLOT_BITS)

/* Every chunk holds a slot of qc__str_slot (its base), so that a string in
 * it has a 32-bit id: slot << QC_STR_SLOT_BITS | offset (history.h). */
typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    size_t slot; /* a size_t: data stays 8-byte aligned (arena_put) */
    char data[];
} chunk;

/* ---- string slots: the process's table of chunk bases ----------------- */

const char *qc__str_slot[QC_STR_SLOTS];
static pthread_mutex_t slot_mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t slot_next = 1; /* slot 0 is never handed out: id 0 is NULL */
static uint32_t slot_free[QC_STR_SLOTS];
static uint32_t nslot_free;

/* A new chunk of cap data bytes with a slot of its own; NULL when out of
 * memory or of slots (4095 chunks held at once by all live histories). */
static chunk *chunk_new(size_t cap)
{
    chunk *c = malloc(sizeof *c + cap);
    size_t k = 0;

    if (c == NULL)
        return NULL;
    pthread_mutex_lock(&slot_mu);
    if (nslot_free > 0)
        k = slot_free[--nslot_free];
    else if (slot_next < (uint32_t)QC_STR_SLOTS)
        k = slot_next++;
    if (k != 0)
        qc__str_slot[k] = c->data;
    pthread_mutex_unlock(&slot_mu);
    if (k == 0) {
        free(c);
        return NULL;
    }
    c->used = 0;
    c->cap = cap;
    c->slot = k;
    c->next = NULL;
    return c;
}

static void chunk_free(chunk *c)
{
    pthread_mutex_lock(&slot_mu);
    qc__str_slot[c->slot] = NULL;
    slot_free[nslot_free++] = (uint32_t)c->slot;
    pthread_mutex_unlock(&slot_mu);
    free(c);
}

typedef struct strtab {
    chunk *chunks;     /* newest first; strings never move */
    const char **slot; /* open addressing, NULL = empty */
    uint32_t *id;      /* slot[i]'s string id (qc_str) */
    uint64_t *hash;    /* slot[i]'s hash << 32 | its length (compared before
                          its bytes, which memcmp then reads knowing both
                          lengths are equal) */
    size_t cap, count; /* cap is a power of two; count <= cap / 2 */
} strtab;

/* A hash of s[0..len), eight bytes a step (issue 16: byte-wise FNV-1a
 * over every token was a tenth of a load).  Only the table's speed depends
 * on it: which pointer a string gets never changes a result. */
static uint32_t str_hash(const char *s, size_t len)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)len, w;

    for (; len >= 8; s += 8, len -= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    if (len > 0) {
        w = 0;
        memcpy(&w, s, len);
        h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    }
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return (uint32_t)h;
}

static void strtab_free(strtab *st)
{
    if (st == NULL)
        return;
    for (chunk *c = st->chunks, *next; c != NULL; c = next) {
        next = c->next;
        chunk_free(c);
    }
    free(st->slot);
    free(st->id);
    free(st->hash);
    free(st);
}

/* Frees st's lookup table, keeping its strings (they live until the
 * history's fini): a part's table is only needed while the part is
 * parsed (issue 16: the tables of a 1M-event load were 10 MB kept to the
 * end for nothing).  Interning into st again starts a new table. */
static void strtab_drop_index(strtab *st)
{
    free(st->slot);
    free(st->id);
    free(st->hash);
    st->slot = NULL;
    st->id = NULL;
    st->hash = NULL;
    st->cap = st->count = 0;
}

static int strtab_grow(strtab *st)
{
    size_t cap = st->cap ? st->cap * 2 : 1024;
    const char **slot = calloc(cap, sizeof *slot);
    uint32_t *id = calloc(cap, sizeof *id);
    uint64_t *hash = calloc(cap, sizeof *hash);

    if (slot == NULL || id == NULL || hash == NULL) {
        free(slot);
        free(id);
        free(hash);
        return QC_ENOMEM;
    }
    for (size_t i = 0; i < st->cap; i++) {
        if (st->slot[i] == NULL)
            continue;
        size_t j = (size_t)(st->hash[i] >> 32) & (cap - 1);
        while (slot[j] != NULL)
            j = (j + 1) & (cap - 1);
        slot[j] = st->slot[i];
        id[j] = st->id[i];
        hash[j] = st->hash[i];
    }
    free(st->slot);
    free(st->id);
    free(st->hash);
    st->slot = slot;
    st->id = id;
    st->hash = hash;
    st->cap = cap;
    return 0;
}

/* Copies s[0..len) (no NUL inside) into the arena; *id its string id. */
static const char *arena_copy(strtab *st, const char *s, size_t len, uint32_t *id)
{
    chunk *c = st->chunks;

    if (c == NULL || c->cap - c->used < len + 1) {
        /* the first chunk small (a test's history), the next ones as big
         * as an id's offset reaches; a longer string gets its own, at 0 */
        size_t want = c == NULL ? CHUNK_SIZE : CHUNK_BIG;
        size_t cap = len + 1 > want ? len + 1 : want;
        chunk *n = chunk_new(cap);
        if (n == NULL)
            return NULL;
        if (c != NULL && len + 1 > want) {
            /* A big string gets its own chunk behind the current one, so
             * the current chunk's free space is not wasted. */
            n->next = c->next;
            c->next = n;
        } else {
            n->next = c;
            st->chunks = n;
        }
        c = n;
    }
    char *p = c->data + c->used;
    memcpy(p, s, len);
    p[len] = '\0';
    *id = (uint32_t)c->slot << QC_STR_SLOT_BITS | (uint32_t)c->used;
    c->used += len + 1;
    return p;
}

/* Returns the interned copy of s[0..len) and its id in *id, or NULL when
 * out of memory. */
static const char *intern_id(strtab *st, const char *s, size_t len, uint32_t *id)
{
    uint32_t h = str_hash(s, len);
    uint64_t meta = (uint64_t)h << 32 | (uint32_t)len;

    if ((st->count + 1) * 2 > st->cap && strtab_grow(st) != 0)
        return NULL;
    size_t j = h & (st->cap - 1);
    while (st->slot[j] != NULL) {
        if (st->hash[j] == meta && memcmp(st->slot[j], s, len) == 0) {
            *id = st->id[j];
            return st->slot[j];
        }
        j = (j + 1) & (st->cap - 1);
    }
    const char *p = arena_copy(st, s, len, id);
    if (p == NULL)
        return NULL;
    st->slot[j] = p;
    st->id[j] = *id;
    st->hash[j] = meta;
    st->count++;
    return p;
}

/* intern without the id (the strings of qc_event_x and the header). */
static const char *intern(strtab *st, const char *s, size_t len)
{
    uint32_t id;
    return intern_id(st, s, len, &id);
}

/* ---- loading ---------------------------------------------------------- */

/* All string storage of one history: one strtab per parsed part, so parts
 * can be parsed in parallel without a lock.  Equal strings from different
 * parts may be different pointers: compare strings with strcmp. */
typedef struct strpool {
    strtab **tab;
    size_t n, cap;
} strpool;

/* Where a line came from, for messages. */
typedef struct where {
    const char *file;
    int line;
} where;

/* One header line, parsed by a part and applied in file order. */
typedef struct hdr_rec {
    where w;
    int have_seed;
    uint64_t seed;
    int shard_index;  /* header "shard".index; -1 none */
    qc_run_info info; /* documented defaults where the header is silent */
} hdr_rec;

/* A run of whole lines of one ledger, parsed by one thread. */
typedef struct part {
    const char *buf; /* borrowed; ends after a '\n' unless it is the file's end */
    size_t len;
    const char *name; /* ledger name for messages (borrowed) */
    int file;         /* ledger index */
    int line0;        /* lines of the file before buf */
    strtab *st;       /* owned by the pool */
    qc_event *ev;     /* its slice of h->ev (borrowed), one slot per line */
    size_t n, cap;
    hdr_rec *hdr; /* owned until merged */
    size_t nhdr;
    size_t torn;
    int jansson_only; /* QC_LEDGER_PARSER=jansson: no fast path (tests compare both) */
    char *scratch;    /* decoded strings of the fast path (owned), scratch_cap bytes */
    size_t scratch_cap;
    size_t fast, slow; /* lines read by the flat scanner / by jansson */
    int rc;
    qc_err err;
} part;

typedef struct loader {
    qc_history *h;
    strpool *pool;
    size_t cap;      /* capacity of h->ev */
    int have_header; /* h->info was filled from a header */
    size_t headers;  /* header lines applied, over every file */
    int have_seed;
    uint64_t seed;
    where seed_at; /* the header the seed came from */
    unsigned char shard_seen[1024 / 8]; /* shard indexes of the headers applied */
} loader;

static int bad_field(qc_err *err, where w, const char *key, const char *what)
{
    return qc_err_set(err, QC_EINVAL, "%s:%d: field \"%s\" is not %s", w.file, w.line, key, what);
}

/* Integer field: JSON integer, or a real with an integral value.
 * Returns 1 set, 0 absent (null), <0 error. */
static int get_int64(json_t *v, int64_t *out)
{
    if (json_is_null(v))
        return 0;
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return 1;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d == floor(d) && d >= -9.2e18 && d <= 9.2e18) {
            *out = (int64_t)d;
            return 1;
        }
    }
    return QC_EINVAL;
}

static int get_double(json_t *v, double *out)
{
    if (json_is_null(v))
        return 0;
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return 1;
    }
    return QC_EINVAL;
}

static int get_bool(json_t *v, int *out)
{
    if (json_is_null(v))
        return 0;
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return 1;
    }
    if (json_is_integer(v)) {
        *out = json_integer_value(v) != 0;
        return 1;
    }
    return QC_EINVAL;
}

/* String field; a number (a token some protocols return as an integer) is
 * kept as its decimal text.  Returns 1 set, 0 absent, QC_EINVAL, QC_ENOMEM. */
static int get_str(strtab *st, json_t *v, const char **out, qc_str *sid)
{
    char buf[32];
    const char *s;
    size_t len;

    if (json_is_null(v))
        return 0;
    if (json_is_string(v)) {
        s = json_string_value(v);
        len = json_string_length(v);
        if (memchr(s, '\0', len) != NULL)
            return QC_EINVAL;
    } else if (json_is_integer(v)) {
        len = (size_t)snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        s = buf;
    } else {
        return QC_EINVAL;
    }
    if (sid != NULL) {
        const char *p = intern_id(st, s, len, &sid->id);
        return p != NULL ? 1 : QC_ENOMEM;
    }
    *out = intern(st, s, len);
    return *out != NULL ? 1 : QC_ENOMEM;
}

static int get_int(json_t *v, int *out)
{
    int64_t x;
    int rc = get_int64(v, &x);

    if (rc == 1) {
        if (x < -2147483647 - 1 || x > 2147483647)
            return QC_EINVAL;
        *out = (int)x;
    }
    return rc;
}

static qc_ev_type parse_type(const char *s)
{
    static const struct {
        const char *name;
        qc_ev_type type;
    } map[] = {
        {"invoke", QC_EV_INVOKE},     {"ok", QC_EV_OK},           {"fail", QC_EV_FAIL},
        {"info", QC_EV_INFO},         {"effect", QC_EV_EFFECT},   {"fault", QC_EV_FAULT},
        {"snapshot", QC_EV_SNAPSHOT}, {"monitor", QC_EV_MONITOR}, {"end", QC_EV_END},
        {"note", QC_EV_NOTE},         {"witness", QC_EV_WITNESS},   {"session", QC_EV_SESSION},
        {"switch_snapshot", QC_EV_SWITCH_SNAPSHOT},
    };
    for (size_t i = 0; s != NULL && i < sizeof map / sizeof map[0]; i++)
        if (strcmp(s, map[i].name) == 0)
            return map[i].type;
    return QC_EV_OTHER;
}

static qc_op parse_op(const char *s)
{
    for (int op = QC_OP_ENQUEUE; s != NULL && op <= QC_OP_DEDUP; op++)
        if (strcmp(s, qc_op_name((qc_op)op)) == 0)
            return (qc_op)op;
    return QC_OP_NONE;
}

/* A header number: integer or real (truncated).  1 set, 0 absent, <0 bad. */
static int get_long_num(json_t *v, long *out)
{
    if (v == NULL || json_is_null(v))
        return 0;
    if (json_is_integer(v)) {
        *out = (long)json_integer_value(v);
        return 1;
    }
    if (json_is_real(v) && fabs(json_real_value(v)) < 9.2e18) {
        *out = (long)json_real_value(v);
        return 1;
    }
    return QC_EINVAL;
}

static void info_defaults(qc_run_info *info)
{
    memset(info, 0, sizeof *info);
    info->max_attempts = -1;
    info->batch = -1;
    info->heartbeat = -1;
    info->stop_heartbeat_first = -1;
    info->lease_deadline = -1;
    info->claim_reads_lease_ms = -1;
    info->fail_reads_delay_ms = -1;
    info->renew_reads_lease_ms = -1;
    info->sink_plain = -1;
    snprintf(info->model, sizeof info->model, "lease");
}

/* Header "checkers": a JSON array of checker names (a single string is
 * taken as it is), stored joined with ",".  1 set, 0 absent, <0 bad. */
static int get_checkers(json_t *v, char *out, size_t size)
{
    size_t len = 0, i;
    json_t *name;

    if (v == NULL || json_is_null(v))
        return 0;
    if (json_is_string(v)) {
        if (json_string_length(v) >= size)
            return QC_EINVAL;
        snprintf(out, size, "%s", json_string_value(v));
        return 1;
    }
    if (!json_is_array(v))
        return QC_EINVAL;
    out[0] = '\0';
    json_array_foreach(v, i, name)
    {
        size_t n;
        if (!json_is_string(name))
            return QC_EINVAL;
        n = json_string_length(name);
        if (n == 0 || strchr(json_string_value(name), ',') != NULL)
            return QC_EINVAL;
        if (len + (len > 0) + n >= size)
            return QC_EINVAL;
        if (len > 0)
            out[len++] = ',';
        memcpy(out + len, json_string_value(name), n);
        len += n;
        out[len] = '\0';
    }
    return 1;
}

/* Steps of the header's "columns" that qc_run_info keeps. */
static const char *const col_steps[] = {"enqueue", "claim", "complete", "renew",
                                        "fail",    "reap",  "snapshot"};

/* info's column list of step (one of col_steps), or NULL. */
static char *step_cols(qc_run_info *info, const char *step)
{
    char *const lists[] = {info->enqueue_cols, info->claim_cols, info->complete_cols,
                           info->renew_cols,   info->fail_cols,  info->reap_cols,
                           info->snapshot_cols};
    for (size_t i = 0; i < sizeof col_steps / sizeof col_steps[0]; i++)
        if (strcmp(step, col_steps[i]) == 0)
            return lists[i];
    return NULL;
}

int qc_run_info_returns(const qc_run_info *info, const char *step, const char *column)
{
    const char *list, *s;
    size_t n;

    if (info == NULL || step == NULL || column == NULL || !info->has_columns)
        return -1;
    list = step_cols((qc_run_info *)info, step);
    if (list == NULL)
        return -1;
    n = strlen(column);
    for (s = list; *s; s += *s == ',') {
        size_t w = strcspn(s, ",");
        if (w == n && strncmp(s, column, n) == 0)
            return 1;
        s += w;
    }
    return 0;
}

/* Parses a header line into a record (applied later, in file order). */
static int parse_header(part *pt, json_t *o, where w, qc_err *err)
{
    static const char *const nums[] = {"lease_ms",          "max_attempts", "reaper_interval_ms",
                                       "recovery_slack_ms", "workers",      "jobs",
                                       "batch",             "idle_base_ms", "idle_cap_ms",
                                       "max_idle_pause_ms", "max_pickup_ms", "max_wedged_ms"};
    hdr_rec r;
    long *dst[] = {&r.info.lease_ms,          &r.info.max_attempts, &r.info.reaper_interval_ms,
                   &r.info.recovery_slack_ms, &r.info.workers,      &r.info.jobs,
                   &r.info.batch,             &r.info.idle_base_ms, &r.info.idle_cap_ms,
                   &r.info.max_idle_pause_ms, &r.info.max_pickup_ms, &r.info.max_wedged_ms};
    json_t *v;

    memset(&r, 0, sizeof r);
    r.w = w;
    info_defaults(&r.info);
    v = json_object_get(o, "seed");
    if (v != NULL && !json_is_null(v)) {
        if (json_is_integer(v)) {
            /* A writer may store a uint64 seed as its int64 bit pattern. */
            r.seed = (uint64_t)json_integer_value(v);
        } else if (json_is_string(v)) {
            const char *s = json_string_value(v);
            char *end;
            errno = 0;
            r.seed = strtoull(s, &end, 10);
            if (*s == '\0' || *s == '-' || *end != '\0' || errno != 0)
                return bad_field(err, w, "seed", "an unsigned integer");
        } else {
            return bad_field(err, w, "seed", "an unsigned integer");
        }
        r.have_seed = 1;
        r.info.seed = r.seed;
    }
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        if (get_long_num(json_object_get(o, nums[i]), dst[i]) < 0)
            return bad_field(err, w, nums[i], "a number");
    static const char *const reals[] = {"idle_jitter", "max_idle_polls_per_s"};
    double *rdst[] = {&r.info.idle_jitter, &r.info.max_idle_polls_per_s};
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
        v = json_object_get(o, reals[i]);
        if (v == NULL || json_is_null(v))
            continue;
        if (!json_is_number(v))
            return bad_field(err, w, reals[i], "a number");
        *rdst[i] = json_number_value(v);
    }
    v = json_object_get(o, "model");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_string(v) || json_string_length(v) >= sizeof r.info.model ||
            json_string_length(v) == 0)
            return bad_field(err, w, "model", "a short string (\"lease\" or \"transaction\")");
        snprintf(r.info.model, sizeof r.info.model, "%s", json_string_value(v));
    }
    r.shard_index = -1;
    v = json_object_get(o, "shard");
    if (v != NULL && !json_is_null(v)) {
        json_t *vi = json_object_get(v, "index"), *vn = json_object_get(v, "count");
        if (!json_is_object(v) || !json_is_integer(vi) || !json_is_integer(vn) ||
            json_integer_value(vn) < 1 || json_integer_value(vn) > 1024 ||
            json_integer_value(vi) < 0 || json_integer_value(vi) >= json_integer_value(vn))
            return bad_field(err, w, "shard",
                             "an object {\"index\":I,\"count\":N} with 0 <= I < N <= 1024");
        r.shard_index = (int)json_integer_value(vi);
        r.info.shard_count = (int)json_integer_value(vn);
    }
    v = json_object_get(o, "poison_mode");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_string(v))
            return bad_field(err, w, "poison_mode", "a string (\"fail\" or \"crash\")");
        r.info.poison_crash = strcmp(json_string_value(v), "crash") == 0;
    }
    v = json_object_get(o, "sink");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_string(v))
            return bad_field(err, w, "sink", "a string (\"idempotent\" or \"plain\")");
        r.info.sink_plain = strcmp(json_string_value(v), "plain") == 0;
    }
    v = json_object_get(o, "heartbeat");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_boolean(v))
            return bad_field(err, w, "heartbeat", "a boolean");
        r.info.heartbeat = json_is_true(v);
    }
    v = json_object_get(o, "stop_heartbeat_first");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_boolean(v))
            return bad_field(err, w, "stop_heartbeat_first", "a boolean");
        r.info.stop_heartbeat_first = json_is_true(v);
    }
    v = json_object_get(o, "lease_deadline");
    if (v != NULL && !json_is_null(v)) {
        const char *dl = json_is_string(v) ? json_string_value(v) : "";
        r.info.lease_deadline = !strcmp(dl, "sent") ? 1 : !strcmp(dl, "answer") ? 2
                                : !strcmp(dl, "none") ? 0 : -2;
        if (r.info.lease_deadline == -2)
            return bad_field(err, w, "lease_deadline", "\"sent\", \"answer\" or \"none\"");
    }
    v = json_object_get(o, "claim_reads_lease_ms");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_boolean(v))
            return bad_field(err, w, "claim_reads_lease_ms", "a boolean");
        r.info.claim_reads_lease_ms = json_is_true(v);
    }
    v = json_object_get(o, "renew_reads_lease_ms");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_boolean(v))
            return bad_field(err, w, "renew_reads_lease_ms", "a boolean");
        r.info.renew_reads_lease_ms = json_is_true(v);
    }
    v = json_object_get(o, "fail_reads_delay_ms");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_boolean(v))
            return bad_field(err, w, "fail_reads_delay_ms", "a boolean");
        r.info.fail_reads_delay_ms = json_is_true(v);
    }
    if (get_checkers(json_object_get(o, "checkers"), r.info.checkers, sizeof r.info.checkers) < 0)
        return bad_field(err, w, "checkers",
                         "an array of checker names (together under 1024 characters)");
    v = json_object_get(o, "witness");
    if (v != NULL && !json_is_null(v)) {
        json_t *t = json_object_get(v, "table");
        if (!json_is_object(v) || !json_is_string(t))
            return bad_field(err, w, "witness", "an object with the witness's \"table\"");
        r.info.witness = 1;
        snprintf(r.info.witness_table, sizeof r.info.witness_table, "%s", json_string_value(t));
        r.info.witness_token = json_is_string(json_object_get(v, "token"));
        r.info.witness_owner = json_is_string(json_object_get(v, "owner"));
        t = json_object_get(v, "library");
        if (t != NULL && !json_is_null(t)) {
            if (!json_is_string(t))
                return bad_field(err, w, "witness", "\"library\" a string of OLD>NEW changes");
            snprintf(r.info.witness_library, sizeof r.info.witness_library, "%s",
                     json_string_value(t));
        }
    }
    v = json_object_get(o, "adapter");
    if (json_is_object(v)) {
        json_t *lib = json_object_get(v, "library"), *ver = json_object_get(v, "version");
        if (json_is_string(lib))
            snprintf(r.info.adapter_library, sizeof r.info.adapter_library, "%s",
                     json_string_value(lib));
        if (json_is_string(ver))
            snprintf(r.info.adapter_version, sizeof r.info.adapter_version, "%s",
                     json_string_value(ver));
    }
    v = json_object_get(o, "missing");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_string(v) || (strcmp(json_string_value(v), "done") != 0 &&
                                   strcmp(json_string_value(v), "dead") != 0))
            return bad_field(err, w, "missing", "\"done\" or \"dead\"");
        snprintf(r.info.missing, sizeof r.info.missing, "%s", json_string_value(v));
    }
    v = json_object_get(o, "columns");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_object(v))
            return bad_field(err, w, "columns", "an object of step name: column names");
        r.info.has_columns = 1;
        for (size_t i = 0; i < sizeof col_steps / sizeof col_steps[0]; i++) {
            char *dstc = step_cols(&r.info, col_steps[i]);
            if (get_checkers(json_object_get(v, col_steps[i]), dstc, 128) < 0)
                return bad_field(err, w, "columns",
                                 "an object of step name: array of column names");
        }
    }
    if (pt->nhdr % 4 == 0) {
        hdr_rec *n = realloc(pt->hdr, (pt->nhdr + 4) * sizeof *n);
        if (n == NULL)
            return qc_err_set(err, QC_ENOMEM, "%s:%d: out of memory", w.file, w.line);
        pt->hdr = n;
    }
    pt->hdr[pt->nhdr++] = r;
    return 0;
}

/* The first header describes the run; every header must agree on the seed. */
static int apply_header(loader *ld, const hdr_rec *r, qc_err *err)
{
    if (r->have_seed && ld->have_seed && r->seed != ld->seed)
        return qc_err_set(err, QC_EINVAL,
                          "%s:%d: header seed %" PRIu64 " differs from seed %" PRIu64
                          " of %s:%d (ledgers of different runs)",
                          r->w.file, r->w.line, r->seed, ld->seed, ld->seed_at.file,
                          ld->seed_at.line);
    ld->headers++;
    if (!ld->have_header) {
        ld->h->info = r->info;
        ld->h->info.shard_ledgers = 0;
        ld->have_header = 1;
    }
    if (r->shard_index >= 0) {
        unsigned char bit = (unsigned char)(1u << (r->shard_index % 8));
        if (ld->shard_seen[r->shard_index / 8] & bit)
            ld->h->info.shard_dup = 1;
        else
            ld->h->info.shard_ledgers++;
        ld->shard_seen[r->shard_index / 8] |= bit;
        if (r->info.shard_count > ld->h->info.shard_count)
            ld->h->info.shard_count = r->info.shard_count;
    }
    if (r->have_seed && !ld->have_seed) {
        ld->have_seed = 1;
        ld->seed = r->seed;
        ld->seed_at = r->w;
        ld->h->info.seed = r->seed;
    }
    return 0;
}

const qc_event_x qc_event_x_none = {
    .ready = -1,
    .inflight = -1,
    .expired = -1,
    .dead = -1,
    .done = -1,
    .oldest_ready_age_ms = -1.0,
    .calls = -1,
    .planned = -1,
    .exclusive = -1,
    .complete = -1,
    .pid = -1,
    .xact_ms = QC_NO_TIME,
    .state_ms = QC_NO_TIME,
    .sent_t = QC_NO_TIME,
    .wait_t = QC_NO_TIME,
    .wait_ms = QC_NO_TIME,
    .notify_t = QC_NO_TIME,
    .w_id = -1,
    .w_job = QC_NO_JOB,
    .w_txid = -1,
    .w_worker = -1,
    .w_now = QC_NO_TIME,
    .until_t = QC_NO_TIME,
    .target = -1,
    .run = -1,
    .discarded_rows = -1,
};

static void event_init(qc_event *e)
{
    memset(e, 0, sizeof *e);
    e->t = QC_NO_TIME;
    e->worker = -1;
    e->req = -1;
    e->job = QC_NO_JOB;
    e->rows = -1;
    e->now = QC_NO_TIME;
    e->lease_until = QC_NO_TIME;
    e->attempt = -1;
    e->invoke = -1;
    e->counted = -1;
    e->delay_ms = 0;
    e->pause_ms = QC_NO_TIME;
    e->work_ms = QC_NO_TIME;
    e->x.id = 0; /* qc_event_x_none */
    e->w_ev = -1;
    e->w_resolved = -1;
}

/* Copies s[0..size) into the arena, 8-byte aligned (an event's qc_event_x);
 * *id its id (as a string's: slot and offset). */
static void *arena_put(strtab *st, const void *src, size_t size, uint32_t *id)
{
    chunk *c = st->chunks;
    size_t at = c != NULL ? (c->used + 7) & ~(size_t)7 : 0;

    if (c == NULL || at + size > c->cap) {
        chunk *n = chunk_new(c == NULL ? CHUNK_SIZE : CHUNK_BIG);
        if (n == NULL)
            return NULL;
        n->next = c;
        st->chunks = n;
        c = n;
        at = 0;
    }
    memcpy(c->data + at, src, size);
    c->used = at + size;
    *id = (uint32_t)c->slot << QC_STR_SLOT_BITS | (uint32_t)at;
    return c->data + at;
}

/* e's own qc_event_x, made from qc_event_x_none on first use; NULL when
 * out of memory. */
static qc_event_x *ensure_x(strtab *st, qc_event *e)
{
    if (e->x.id == 0 &&
        arena_put(st, &qc_event_x_none, sizeof qc_event_x_none, &e->x.id) == NULL)
        return NULL;
    return (qc_event_x *)qc_x(e->x);
}

/* F_BOOL is an int, F_BOOL8 an int8_t, F_OP a uint8_t (qc_op); F_STR a
 * const char * (qc_event_x), F_SID a qc_str (qc_event). */
enum field_kind { F_INT64, F_INT, F_LONG, F_DOUBLE, F_BOOL, F_BOOL8, F_STR, F_SID, F_OP };

/* The event fields a ledger line may carry ("type" is read before). */
struct field {
    const char *key;
    enum field_kind kind;
    size_t off; /* in qc_event, or in qc_event_x when ext */
    int ext;
};

/* An ext field: its offset in qc_event_x (the event gets its own copy of
 * qc_event_x_none when the first one is set: ensure_x). */
#define XF(name) offsetof(qc_event_x, name), 1

static const struct field fields[] = {
    {"seq", F_INT64, offsetof(qc_event, seq), 0},
    {"t", F_DOUBLE, offsetof(qc_event, t), 0},
    {"op", F_OP, offsetof(qc_event, op), 0},
    {"worker", F_INT, offsetof(qc_event, worker), 0},
    {"inc", F_INT, offsetof(qc_event, inc), 0},
    {"req", F_INT, offsetof(qc_event, req), 0},
    {"job", F_INT64, offsetof(qc_event, job), 0},
    {"rows", F_INT, offsetof(qc_event, rows), 0},
    {"now", F_DOUBLE, offsetof(qc_event, now), 0},
    {"lease_until", F_DOUBLE, offsetof(qc_event, lease_until), 0},
    {"attempt", F_INT, offsetof(qc_event, attempt), 0},
    {"applied", F_BOOL8, offsetof(qc_event, applied), 0},
    {"drained", F_BOOL8, XF(drained)},
    {"interrupted", F_BOOL8, XF(interrupted)},
    {"timed_out", F_BOOL8, XF(timed_out)},
    {"token", F_SID, offsetof(qc_event, token), 0},
    {"lib_id", F_STR, XF(lib_id)},
    {"new_token", F_SID, offsetof(qc_event, new_token), 0},
    {"op_key", F_SID, offsetof(qc_event, op_key), 0},
    {"state", F_SID, offsetof(qc_event, state), 0},
    {"fault", F_STR, XF(fault)},
    {"error", F_SID, offsetof(qc_event, error), 0},
    {"ready", F_LONG, XF(ready)},
    {"inflight", F_LONG, XF(inflight)},
    {"expired", F_LONG, XF(expired)},
    {"dead", F_LONG, XF(dead)},
    {"done", F_LONG, XF(done)},
    {"oldest_ready_age_ms", F_DOUBLE, XF(oldest_ready_age_ms)},
    {"until_t", F_DOUBLE, XF(until_t)},
    {"counted", F_BOOL8, offsetof(qc_event, counted), 0},
    {"note", F_STR, XF(note)},
    {"calls", F_INT64, XF(calls)},
    {"delay_ms", F_INT, offsetof(qc_event, delay_ms), 0},
    {"group", F_SID, offsetof(qc_event, group), 0},
    {"pause_ms", F_DOUBLE, offsetof(qc_event, pause_ms), 0},
    {"work_ms", F_DOUBLE, offsetof(qc_event, work_ms), 0},
    {"wake", F_STR, XF(wake)},
    {"wait_t", F_DOUBLE, XF(wait_t)},
    {"wait_ms", F_DOUBLE, XF(wait_ms)},
    {"notify", F_STR, XF(notify)},
    {"notify_t", F_DOUBLE, XF(notify_t)},
    {"exclusive", F_BOOL, XF(exclusive)},
    {"complete", F_BOOL, XF(complete)},
    {"planned", F_LONG, XF(planned)},
    {"target", F_INT, XF(target)},
    {"pid", F_INT, XF(pid)},
    {"xact_ms", F_DOUBLE, XF(xact_ms)},
    {"state_ms", F_DOUBLE, XF(state_ms)},
    {"sent_t", F_DOUBLE, XF(sent_t)},
    {"message", F_STR, XF(message)},
    {"run", F_BOOL, XF(run)},
    {"discarded_rows", F_INT, XF(discarded_rows)},
};

/* The fields of a witness line (QC_EV_WITNESS): only these, and seq / t. */
static const struct field wfields[] = {
    {"seq", F_INT64, offsetof(qc_event, seq), 0},
    {"t", F_DOUBLE, offsetof(qc_event, t), 0},
    {"wid", F_INT64, XF(w_id)},
    {"txid", F_INT64, XF(w_txid)},
    {"session", F_STR, XF(w_session)},
    {"row", F_STR, XF(w_row)},
    {"old_state", F_STR, XF(w_old_state)},
    {"new_state", F_STR, XF(w_state)},
    {"old_token", F_STR, XF(w_old_token)},
    {"new_token", F_STR, XF(w_token)},
    {"old_owner", F_STR, XF(w_old_owner)},
    {"new_owner", F_STR, XF(w_owner)},
    {"server_ms", F_DOUBLE, XF(w_now)},
};

static int set_field(part *pt, const struct field *f, json_t *v, qc_event *e, const char **what)
{
    char *dst;
    int64_t i64;
    int rc;

    if (json_is_null(v))
        return 0; /* absent: nothing to set (every kind reads null so) */
    if (f->ext) {
        qc_event_x *x = ensure_x(pt->st, e);
        if (x == NULL)
            return QC_ENOMEM;
        dst = (char *)x + f->off;
    } else {
        dst = (char *)e + f->off;
    }

    switch (f->kind) {
    case F_INT64:
        *what = "an integer";
        return get_int64(v, (int64_t *)(void *)dst);
    case F_INT:
        *what = "an integer in -2147483648..2147483647";
        return get_int(v, (int *)(void *)dst);
    case F_LONG:
        *what = "an integer";
        rc = get_int64(v, &i64);
        if (rc == 1)
            *(long *)(void *)dst = (long)i64;
        return rc;
    case F_DOUBLE:
        *what = "a number";
        return get_double(v, (double *)(void *)dst);
    case F_BOOL:
        *what = "a boolean";
        return get_bool(v, (int *)(void *)dst);
    case F_BOOL8: {
        int b = 0;
        *what = "a boolean";
        rc = get_bool(v, &b);
        if (rc == 1)
            *(int8_t *)(void *)dst = (int8_t)b;
        return rc;
    }
    case F_STR:
        *what = "a string";
        return get_str(pt->st, v, (const char **)(void *)dst, NULL);
    case F_SID:
        *what = "a string";
        return get_str(pt->st, v, NULL, (qc_str *)(void *)dst);
    case F_OP:
        *what = "a string";
        if (json_is_string(v))
            *(uint8_t *)(void *)dst = (uint8_t)parse_op(json_string_value(v));
        return json_is_string(v) || json_is_null(v) ? 0 : QC_EINVAL;
    }
    return 0;
}

/* Fills e from the members of o.  Unknown keys are ignored, so writers may
 * add fields. */
static int parse_event(part *pt, json_t *o, qc_event *e, where w, qc_err *err)
{
    const char *key;
    json_t *v;
    int have_seq = 0;
    const struct field *fl = e->type == QC_EV_WITNESS ? wfields : fields;
    size_t nf = e->type == QC_EV_WITNESS ? sizeof wfields / sizeof wfields[0]
                                         : sizeof fields / sizeof fields[0];

    json_object_foreach(o, key, v)
    {
        if (e->type == QC_EV_WITNESS && !strcmp(key, "change")) {
            if (!json_is_string(v) && !json_is_null(v))
                return bad_field(err, w, key, "a string (insert, update, delete)");
            ((qc_event_x *)qc_x(e->x))->w_change = json_is_string(v) ? json_string_value(v)[0] : 0;
            continue;
        }
        for (size_t k = 0; k < nf; k++) {
            const char *what = "";
            int rc;
            if (fl[k].key[0] != key[0] || strcmp(fl[k].key, key) != 0)
                continue;
            rc = set_field(pt, &fl[k], v, e, &what);
            if (rc == QC_ENOMEM)
                return qc_err_set(err, QC_ENOMEM, "%s:%d: out of memory", w.file, w.line);
            if (rc < 0)
                return bad_field(err, w, key, what);
            if (k == 0)
                have_seq = rc == 1;
            break;
        }
    }
    if (!have_seq)
        return qc_err_set(err, QC_EINVAL, "%s:%d: event without \"seq\"", w.file, w.line);
    return 0;
}

/* A part has one slot per line of its text (its slice of h->ev), so it
 * never grows. */
static int push_event(part *pt, const qc_event *e)
{
    if (pt->n == pt->cap)
        return QC_ENOMEM; /* cannot happen: one event per line at most */
    pt->ev[pt->n++] = *e;
    return 0;
}

/* ---- the fast path: the ledger's own flat lines ------------------------ */

/* Key lookup for the two field tables: open addressing over 128 slots,
 * built once (pthread_once), so a member costs a hash and one compare
 * instead of a walk over 49 names. */
#define KEY_SLOTS 128
static signed char key_slot[2][KEY_SLOTS];
static unsigned char key_len[2][64]; /* strlen of each table's keys (< 256) */
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static unsigned key_hash(const char *k, size_t n)
{
    return (unsigned)(n * 31u + (unsigned char)k[0] * 7u + (unsigned char)k[n - 1] * 3u +
                      (n > 2 ? (unsigned char)k[n / 2] : 0u)) &
           (KEY_SLOTS - 1);
}

static void key_tables_build(void)
{
    const struct field *tab[2] = {fields, wfields};
    size_t nt[2] = {sizeof fields / sizeof fields[0], sizeof wfields / sizeof wfields[0]};

    memset(key_slot, -1, sizeof key_slot);
    for (int t = 0; t < 2; t++)
        for (size_t k = 0; k < nt[t]; k++) {
            size_t len = strlen(tab[t][k].key);
            unsigned j = key_hash(tab[t][k].key, len);
            key_len[t][k] = (unsigned char)len;
            while (key_slot[t][j] >= 0)
                j = (j + 1) & (KEY_SLOTS - 1);
            key_slot[t][j] = (signed char)k;
        }
}

/* Index in fl (table t: 0 fields, 1 wfields) of key[0..n), or -1. */
static int key_find(int t, const struct field *fl, const char *key, size_t n)
{
    if (n == 0)
        return -1;
    for (unsigned j = key_hash(key, n); key_slot[t][j] >= 0; j = (j + 1) & (KEY_SLOTS - 1)) {
        int k = key_slot[t][j];
        if (key_len[t][k] == n && memcmp(fl[k].key, key, n) == 0)
            return k;
    }
    return -1;
}

static int span_is(const char *s, size_t n, const char *word)
{
    return strncmp(s, word, n) == 0 && word[n] == '\0';
}

static qc_ev_type parse_type_span(const char *s, size_t n)
{
    char buf[24];

    if (n >= sizeof buf)
        return QC_EV_OTHER;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return parse_type(buf);
}

/* The same conversions as get_int64 / get_int / get_double / get_bool /
 * get_str / F_OP on a jansson value: 1 set, 0 absent (null), QC_EINVAL
 * (the caller gives the line to jansson, which names the error),
 * QC_ENOMEM. */
static int fast_set(part *pt, const struct field *f, const qc_flat_member *m, qc_event *e)
{
    char *dst;
    int64_t i64 = 0;
    int rc;

    if (m->kind == QC_FLAT_NULL)
        return 0;
    if (f->ext) {
        qc_event_x *x = ensure_x(pt->st, e);
        if (x == NULL)
            return QC_ENOMEM;
        dst = (char *)x + f->off;
    } else {
        dst = (char *)e + f->off;
    }
    switch (f->kind) {
    case F_INT64:
    case F_INT:
    case F_LONG:
        if (m->kind == QC_FLAT_INT)
            i64 = m->i;
        else if (m->kind == QC_FLAT_REAL && m->d == floor(m->d) && m->d >= -9.2e18 &&
                 m->d <= 9.2e18)
            i64 = (int64_t)m->d;
        else
            return QC_EINVAL;
        if (f->kind == F_INT64) {
            *(int64_t *)(void *)dst = i64;
        } else if (f->kind == F_LONG) {
            *(long *)(void *)dst = (long)i64;
        } else {
            if (i64 < -2147483647 - 1 || i64 > 2147483647)
                return QC_EINVAL;
            *(int *)(void *)dst = (int)i64;
        }
        return 1;
    case F_DOUBLE:
        if (m->kind != QC_FLAT_INT && m->kind != QC_FLAT_REAL)
            return QC_EINVAL;
        *(double *)(void *)dst = m->d;
        return 1;
    case F_BOOL:
    case F_BOOL8: {
        int b;
        if (m->kind == QC_FLAT_TRUE || m->kind == QC_FLAT_FALSE)
            b = m->kind == QC_FLAT_TRUE;
        else if (m->kind == QC_FLAT_INT)
            b = m->i != 0;
        else
            return QC_EINVAL;
        if (f->kind == F_BOOL8)
            *(int8_t *)(void *)dst = (int8_t)b;
        else
            *(int *)(void *)dst = b;
        return 1;
    }
    case F_STR:
    case F_SID: {
        const char *s = m->s;
        size_t n = m->slen;
        char num[32];
        if (m->kind == QC_FLAT_INT) {
            n = (size_t)snprintf(num, sizeof num, "%" PRId64, m->i);
            s = num;
        } else if (m->kind != QC_FLAT_STR) {
            return QC_EINVAL;
        } else if (m->esc) {
            if (pt->scratch_cap < n) {
                size_t cap = n < 4096 ? 4096 : n;
                char *b = realloc(pt->scratch, cap);
                if (b == NULL)
                    return QC_ENOMEM;
                pt->scratch = b;
                pt->scratch_cap = cap;
            }
            n = qc__flat_unescape(s, n, pt->scratch);
            s = pt->scratch;
        }
        if (f->kind == F_SID)
            return intern_id(pt->st, s, n, &((qc_str *)(void *)dst)->id) != NULL ? 1 : QC_ENOMEM;
        *(const char **)(void *)dst = intern(pt->st, s, n);
        return *(const char **)(void *)dst != NULL ? 1 : QC_ENOMEM;
    }
    case F_OP:
        if (m->kind != QC_FLAT_STR || m->esc)
            return QC_EINVAL; /* an escaped op: jansson decodes it */
        rc = QC_OP_NONE;
        for (int op = QC_OP_ENQUEUE; op <= QC_OP_DEDUP; op++) {
            const char *name = qc_op_name((qc_op)op); /* the names differ: one matches */
            if (m->slen > 0 && name[0] == m->s[0] && span_is(m->s, m->slen, name)) {
                rc = op;
                break;
            }
        }
        *(uint8_t *)(void *)dst = (uint8_t)rc;
        return 0;
    }
    return QC_EINVAL;
}

/* Reads an event line with the flat scanner (flatjson.h), with the same
 * result as the jansson path (parse_event) on every line it takes.
 * Returns 1 done (the event pushed), 0 not taken (a header, a line the
 * scanner does not read, a duplicate key jansson resolves, or any bad
 * field, so that jansson names the error), QC_ENOMEM. */
static int fast_line(part *pt, const char *p, size_t len, where w)
{
    qc_flat_member m[QC_FLAT_MAX];
    int n = qc__flat_scan(p, len, m, QC_FLAT_MAX), ti = -1, change = -1, have_seq = 0;
    uint64_t seen = 0;
    qc_event *e;

    if (n < 0)
        return 0;
    for (int i = 0; i < n; i++)
        if (m[i].klen == 4 && memcmp(m[i].key, "type", 4) == 0) {
            if (ti >= 0)
                return 0; /* jansson keeps the last: let it */
            ti = i;
        }
    /* parsed in place, into the part's next slot (counted only when taken) */
    if (pt->n == pt->cap)
        return 0; /* cannot happen: one event per line at most */
    e = &pt->ev[pt->n];
    event_init(e);
    if (ti >= 0 && m[ti].kind == QC_FLAT_STR) {
        if (m[ti].esc || span_is(m[ti].s, m[ti].slen, "header"))
            return 0;
        e->type = parse_type_span(m[ti].s, m[ti].slen);
    }
    e->line = w.line;
    e->file = pt->file;
    int t = e->type == QC_EV_WITNESS;
    if (t && ensure_x(pt->st, e) == NULL)
        return QC_ENOMEM;
    const struct field *fl = t ? wfields : fields;
    pthread_once(&key_once, key_tables_build);
    for (int i = 0; i < n; i++) {
        int k, rc;
        if (i == ti)
            continue;
        if (t && m[i].klen == 6 && memcmp(m[i].key, "change", 6) == 0) {
            if (change >= 0 || (m[i].kind != QC_FLAT_STR && m[i].kind != QC_FLAT_NULL) ||
                m[i].esc)
                return 0;
            change = i;
            ((qc_event_x *)qc_x(e->x))->w_change =
                m[i].kind == QC_FLAT_STR && m[i].slen > 0 ? m[i].s[0] : 0;
            continue;
        }
        k = key_find(t, fl, m[i].key, m[i].klen);
        if (k < 0)
            continue; /* unknown keys are ignored, as parse_event does */
        if (seen & (1ull << k))
            return 0; /* a duplicate: jansson keeps the last value */
        seen |= 1ull << k;
        rc = fast_set(pt, &fl[k], &m[i], e);
        if (rc == QC_ENOMEM)
            return rc;
        if (rc < 0)
            return 0;
        if (k == 0)
            have_seq = rc == 1;
    }
    if (!have_seq)
        return 0;
    pt->n++;
    return 1;
}

/* Parses one line; torn says it is the unterminated last line of its file. */
static int parse_line(part *pt, const char *p, size_t len, int torn, where w, qc_err *err)
{
    json_error_t jerr;
    json_t *o, *type;
    qc_event e;
    int rc;

    if (!pt->jansson_only) {
        rc = fast_line(pt, p, len, w);
        if (rc == QC_ENOMEM)
            return qc_err_set(err, QC_ENOMEM, "%s:%d: out of memory", w.file, w.line);
        if (rc == 1) {
            pt->fast++;
            return 0;
        }
    }
    pt->slow++;
    o = json_loadb(p, len, 0, &jerr);
    if (o == NULL || !json_is_object(o)) {
        if (torn) {
            pt->torn++;
            rc = 0;
        } else if (o == NULL) {
            rc = qc_err_set(err, QC_EINVAL, "%s:%d: invalid JSON: %s", w.file, w.line, jerr.text);
        } else {
            rc = qc_err_set(err, QC_EINVAL, "%s:%d: invalid JSON: not an object", w.file, w.line);
        }
        goto out;
    }
    type = json_object_get(o, "type");
    if (json_is_string(type) && strcmp(json_string_value(type), "header") == 0) {
        rc = parse_header(pt, o, w, err);
        goto out;
    }
    event_init(&e);
    e.type = json_is_string(type) ? parse_type(json_string_value(type)) : QC_EV_OTHER;
    e.line = w.line;
    e.file = pt->file;
    /* witness rows always own their x (witness_merge.c sets w_actor ... on them) */
    if (e.type == QC_EV_WITNESS && ensure_x(pt->st, &e) == NULL) {
        rc = qc_err_set(err, QC_ENOMEM, "%s:%d: out of memory", w.file, w.line);
        goto out;
    }
    rc = parse_event(pt, o, &e, w, err);
    if (rc == 0 && push_event(pt, &e) != 0)
        rc = qc_err_set(err, QC_ENOMEM, "%s:%d: out of memory", w.file, w.line);
out:
    json_decref(o);
    return rc;
}

static int is_blank(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return 0;
    return 1;
}

static void *parse_part(void *arg)
{
    part *pt = arg;
    const char *p = pt->buf, *end = pt->buf + pt->len;
    where w = {pt->name, pt->line0};

    while (p < end && pt->rc == 0) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl != NULL ? nl : end) - p);

        w.line++;
        if (n > 0 && p[n - 1] == '\r')
            n--;
        if (!is_blank(p, n))
            pt->rc = parse_line(pt, p, n, nl == NULL, w, &pt->err);
        p = nl != NULL ? nl + 1 : end;
    }
    return NULL;
}

static strtab *pool_add(strpool *pool)
{
    if (pool->n == pool->cap) {
        size_t cap = pool->cap ? pool->cap * 2 : 8;
        strtab **tab = realloc(pool->tab, cap * sizeof *tab);
        if (tab == NULL)
            return NULL;
        pool->tab = tab;
        pool->cap = cap;
    }
    strtab *st = calloc(1, sizeof *st);
    if (st != NULL)
        pool->tab[pool->n++] = st;
    return st;
}

static void pool_free(strpool *pool)
{
    if (pool == NULL)
        return;
    for (size_t i = 0; i < pool->n; i++)
        strtab_free(pool->tab[i]);
    free(pool->tab);
    free(pool);
}

static size_t count_lines(const char *p, const char *end)
{
    size_t n = 0;

    while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        n++;
        p++;
    }
    return n;
}

/* How many parts to cut a ledger of len bytes into: one per online CPU (at
 * most MAX_PARTS), each at least MIN_PART bytes, since jansson's per-line
 * parse is most of the cost of a load. */
#define MIN_PART (1u << 20)
#define MAX_PARTS 8

static int part_count(size_t len)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    size_t n = len / MIN_PART;

    if (ncpu < 1)
        ncpu = 1;
    if (n > (size_t)ncpu)
        n = (size_t)ncpu;
    if (n > MAX_PARTS)
        n = MAX_PARTS;
    return n < 1 ? 1 : (int)n;
}

/* Appends a parsed part to the history: its headers, then its events,
 * which the part wrote into its own slice of h->ev at or after h->n (a
 * header, blank or torn line leaves its slot unused): moved down to h->n,
 * so h->ev is filled in file order without a second array. */
static int merge_part(loader *ld, part *pt, qc_err *err)
{
    qc_history *h = ld->h;

    for (size_t i = 0; i < pt->nhdr; i++) {
        int rc = apply_header(ld, &pt->hdr[i], err);
        if (rc != 0)
            return rc;
    }
    if (pt->n > 0 && pt->ev != h->ev + h->n)
        memmove(h->ev + h->n, pt->ev, pt->n * sizeof *pt->ev);
    pt->ev = NULL;
    h->n += pt->n;
    h->torn += pt->torn;
    return 0;
}

/* Parses one ledger's text, cut at line boundaries into parts that are
 * parsed in parallel and merged in file order (so the first bad line in the
 * file is the one reported). */
static int parse_buffer(loader *ld, const char *buf, size_t len, const char *name, int file,
                        int line_base, qc_err *err)
{
    int np = part_count(len), rc = 0;
    part *pts = calloc((size_t)np, sizeof *pts);
    pthread_t *tid = calloc((size_t)np, sizeof *tid);
    int *started = calloc((size_t)np, sizeof *started);
    size_t off = 0, lines = 0;
    const char *parser = getenv("QC_LEDGER_PARSER");
    int jansson_only = parser != NULL && strcmp(parser, "jansson") == 0;

    if (pts == NULL || tid == NULL || started == NULL) {
        rc = qc_err_set(err, QC_ENOMEM, "%s: out of memory", name);
        goto out;
    }
    for (int k = 0; k < np; k++) {
        size_t stop = len;
        if (k < np - 1) {
            const char *nl = memchr(buf + len / (size_t)np * (size_t)(k + 1), '\n',
                                    len - len / (size_t)np * (size_t)(k + 1));
            stop = nl != NULL ? (size_t)(nl - buf) + 1 : len;
            if (stop < off)
                stop = off;
        }
        pts[k].buf = buf + off;
        pts[k].len = stop - off;
        pts[k].name = name;
        pts[k].file = file;
        pts[k].line0 = line_base + (int)lines;
        pts[k].jansson_only = jansson_only;
        pts[k].st = pool_add(ld->pool);
        if (pts[k].st == NULL) {
            rc = qc_err_set(err, QC_ENOMEM, "%s: out of memory", name);
            goto out;
        }
        size_t here = count_lines(buf + off, buf + stop) +
                      (stop > off && buf[stop - 1] != '\n');
        pts[k].cap = here;
        lines += here;
        off = stop;
    }
    /* One event slot per line, allocated once for the whole text (the
     * parts' line counts): each part parses into its own slice,
     * merge_part closes the gaps. */
    if (ld->h->n + lines > ld->cap) {
        qc_event *ev = realloc(ld->h->ev, (ld->h->n + lines) * sizeof *ev);
        if (ev == NULL) {
            rc = qc_err_set(err, QC_ENOMEM, "%s: out of memory", name);
            goto out;
        }
        ld->h->ev = ev;
        ld->cap = ld->h->n + lines;
    }
    size_t at = 0;
    for (int k = 0; k < np; k++) {
        /* no events at all (an empty ledger): no array to point into */
        pts[k].ev = ld->h->ev != NULL ? ld->h->ev + ld->h->n + at : NULL;
        at += pts[k].cap;
    }
    /* jansson seeds its hash function on first use; do that here, before
     * the parts run, rather than rely on its atomic first-use path. */
    json_decref(json_object());
    for (int k = 1; k < np; k++)
        started[k] = pthread_create(&tid[k], NULL, parse_part, &pts[k]) == 0;
    parse_part(&pts[0]);
    for (int k = 1; k < np; k++) {
        if (started[k])
            pthread_join(tid[k], NULL);
        else
            parse_part(&pts[k]);
    }
    for (int k = 0; k < np; k++)
        strtab_drop_index(pts[k].st);
    for (int k = 0; k < np && rc == 0; k++) {
        if (pts[k].rc != 0) {
            rc = pts[k].rc;
            if (err != NULL)
                *err = pts[k].err;
        } else {
            rc = merge_part(ld, &pts[k], err);
            ld->h->fast_lines += pts[k].fast;
            ld->h->jansson_lines += pts[k].slow;
        }
    }
out:
    for (int k = 0; pts != NULL && k < np; k++) {
        free(pts[k].hdr);
        free(pts[k].scratch);
    }
    free(pts);
    free(tid);
    free(started);
    return rc;
}

/* Reads and parses a ledger in blocks of whole lines (READ_BLOCK bytes, or
 * the file's size when smaller), so the text in memory at once is one block
 * however big the ledger (issue 16: the whole file stayed in memory beside
 * its events).  Only a regular file (a FIFO or a device is refused without
 * blocking); a line longer than QC_MAX_LEDGER_LINE is an error as soon as it
 * is seen ("file:line: line longer than N bytes"), so /dev/zero-like input
 * cannot eat the memory.  *total gets the file's length. */
#define READ_BLOCK ((size_t)16 << 20)

/* READ_BLOCK, or QC_LEDGER_READ_BLOCK bytes (at least 2 x the longest line
 * allowed) when set: tests read small ledgers in many blocks with it. */
static size_t read_block(void)
{
    const char *v = getenv("QC_LEDGER_READ_BLOCK");
    long long n = v != NULL ? atoll(v) : 0;
    return n >= 2LL * QC_MAX_LEDGER_LINE + 2 ? (size_t)n : READ_BLOCK;
}

static int load_file(loader *ld, const char *path, int file, size_t *total, qc_err *err)
{
    FILE *f = NULL;
    char *buf = NULL;
    size_t len = 0, cap = read_block(), line_start = 0, scanned = 0;
    int lineno = 1, parsed_lines = 0;
    int rc = qc_open_input(path, "ledger", &f, err);

    *total = 0;
    if (rc != 0)
        return rc;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && st.st_size >= 0 && (uint64_t)st.st_size + 1 < cap)
        cap = (size_t)st.st_size + 1;
    if (cap < 2 * (size_t)QC_MAX_LEDGER_LINE + 2)
        cap = 2 * (size_t)QC_MAX_LEDGER_LINE + 2; /* a block holds a whole longest line */
    buf = malloc(cap);
    if (buf == NULL) {
        rc = qc_err_set(err, QC_ENOMEM, "reading ledger '%s': out of memory", path);
        goto out;
    }
    for (;;) {
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        *total += got;
        /* line lengths, over the bytes not yet scanned */
        int too_long = 0;
        while (scanned < len) {
            const char *nl = memchr(buf + scanned, '\n', len - scanned);
            size_t end = nl != NULL ? (size_t)(nl - buf) : len;
            if (end - line_start > QC_MAX_LEDGER_LINE) {
                too_long = 1;
                break;
            }
            if (nl == NULL) {
                scanned = len;
                break;
            }
            line_start = end + 1;
            scanned = line_start;
            lineno++;
        }
        if (too_long) {
            rc = qc_err_set(err, QC_EINVAL, "%s:%d: line longer than %d bytes", path, lineno,
                            QC_MAX_LEDGER_LINE);
            goto out;
        }
        if (got == 0) {
            if (ferror(f)) {
                rc = qc_err_set(err, QC_EIO, "cannot read ledger '%s'", path);
                goto out;
            }
            /* the end: the rest, a torn last line included */
            if (len > 0)
                rc = parse_buffer(ld, buf, len, path, file, parsed_lines, err);
            goto out;
        }
        if (len < cap)
            continue;
        /* a full block: parse its whole lines, keep the partial last one */
        if (line_start == 0) {
            /* cannot happen: a block holds more than one longest line */
            rc = qc_err_set(err, QC_EINVAL, "%s:%d: line longer than %d bytes", path, lineno,
                            QC_MAX_LEDGER_LINE);
            goto out;
        }
        rc = parse_buffer(ld, buf, line_start, path, file, parsed_lines, err);
        if (rc != 0)
            goto out;
        parsed_lines = lineno - 1;
        memmove(buf, buf + line_start, len - line_start);
        len -= line_start;
        scanned -= line_start;
        line_start = 0;
    }
out:
    fclose(f);
    free(buf);
    return rc;
}

/* ---- ordering and pairing --------------------------------------------- */

typedef struct seq_key {
    int64_t seq;
    size_t pos; /* load order: ties keep it, so the sort is stable */
} seq_key;

static int cmp_seq_key(const void *pa, const void *pb)
{
    const seq_key *a = pa, *b = pb;

    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Sorts h->ev by seq, ties in load order: sorts small keys, then applies
 * the permutation in place, cycle by cycle (one event of scratch), so a
 * sort needs 16 bytes an event and not a second copy of the events.  Does
 * nothing to a ledger already in order. */
static int sort_events(qc_history *h)
{
    size_t n = h->n, i;
    seq_key *key = NULL;

    for (i = 1; i < n && h->ev[i - 1].seq <= h->ev[i].seq; i++)
        ;
    if (i >= n)
        return 0;
    key = malloc(n * sizeof *key);
    if (key == NULL)
        return QC_ENOMEM;
    for (i = 0; i < n; i++) {
        key[i].seq = h->ev[i].seq;
        key[i].pos = i;
    }
    qsort(key, n, sizeof *key, cmp_seq_key);
    /* Position i must receive the event now at key[i].pos.  Follow each
     * cycle once; a done position gets pos = i. */
    for (i = 0; i < n; i++) {
        if (key[i].pos == i)
            continue;
        qc_event tmp = h->ev[i];
        size_t j = i;
        while (key[j].pos != i) {
            size_t from = key[j].pos;
            h->ev[j] = h->ev[from];
            key[j].pos = j;
            j = from;
        }
        h->ev[j] = tmp;
        key[j].pos = j;
    }
    free(key);
    return 0;
}

/* 24 bytes: the table is up to 4 slots an invoke, allocated beside the
 * whole history (a load of 2^31 events or more is refused before). */
typedef struct inv_slot {
    int64_t req;
    int worker, inc, file;
    int32_t idx; /* -1 empty */
} inv_slot;

static size_t inv_hash(int64_t req, int worker, int inc, int file, size_t mask)
{
    uint64_t x = (uint64_t)req * 0x9E3779B97F4A7C15ull;
    x ^= ((uint64_t)(uint32_t)worker << 32 | (uint32_t)inc) * 0xC2B2AE3D27D4EB4Full;
    x ^= (uint64_t)(uint32_t)file * 0x165667B19E3779F9ull;
    x ^= x >> 29;
    return (size_t)x & mask;
}

static inv_slot *inv_find(inv_slot *tab, size_t mask, const qc_event *e)
{
    int64_t req = e->req >= 0 ? e->req : -1;
    size_t j = inv_hash(req, e->worker, e->inc, e->file, mask);

    while (tab[j].idx >= 0 && !(tab[j].req == req && tab[j].worker == e->worker &&
                                tab[j].inc == e->inc && tab[j].file == e->file))
        j = (j + 1) & mask;
    return &tab[j];
}

/* Sets ev[i].invoke for every completion.  A worker incarnation sends one
 * request at a time, so without req its latest invoke is the one answered. */
static int pair_invokes(qc_history *h)
{
    size_t ninv = 0, cap = 16;

    for (size_t i = 0; i < h->n; i++)
        ninv += h->ev[i].type == QC_EV_INVOKE;
    if (ninv == 0)
        return 0;
    while (cap < ninv * 2)
        cap *= 2;
    inv_slot *tab = malloc(cap * sizeof *tab);
    if (tab == NULL)
        return QC_ENOMEM;
    for (size_t j = 0; j < cap; j++)
        tab[j].idx = -1;
    for (size_t i = 0; i < h->n; i++) {
        qc_event *e = &h->ev[i];
        if (e->type == QC_EV_INVOKE) {
            inv_slot *s = inv_find(tab, cap - 1, e);
            s->req = e->req >= 0 ? e->req : -1;
            s->worker = e->worker;
            s->inc = e->inc;
            s->file = e->file;
            s->idx = (int32_t)i;
        } else if (e->type == QC_EV_OK || e->type == QC_EV_FAIL || e->type == QC_EV_INFO) {
            inv_slot *s = inv_find(tab, cap - 1, e);
            if (s->idx >= 0 && h->ev[s->idx].op == e->op)
                e->invoke = s->idx;
        }
    }
    free(tab);
    return 0;
}

/* ---- public ----------------------------------------------------------- */

static int loader_start(loader *ld, qc_history *h, qc_err *err)
{
    memset(h, 0, sizeof *h);
    memset(ld, 0, sizeof *ld);
    info_defaults(&h->info);
    ld->h = h;
    ld->pool = calloc(1, sizeof *ld->pool);
    if (ld->pool == NULL)
        return qc_err_set(err, QC_ENOMEM, "loading ledger: out of memory");
    h->strings = ld->pool;
    return 0;
}

static int loader_finish(loader *ld, int rc, qc_err *err)
{
    /* invoke and w_ev are 32-bit indexes of h->ev (qc_event) */
    if (rc == 0 && ld->h->n > (size_t)INT32_MAX)
        rc = qc_err_set(err, QC_EINVAL,
                        "the ledgers hold %zu events, more than the %d one audit reads", ld->h->n,
                        INT32_MAX);
    if (rc == 0 && (sort_events(ld->h) != 0 || pair_invokes(ld->h) != 0 ||
                    qc__witness_merge(ld->h) != 0))
        rc = qc_err_set(err, QC_ENOMEM, "ordering ledger events: out of memory");
    if (rc != 0)
        qc_history_fini(ld->h);
    return rc;
}

/* ---- one kept history (parse a run's ledger once) --------------------- */

/* The history qc_history_keep was given, with what identifies its files;
 * kept_mu protects all of it. */
#define KEEP_MAX 16
static pthread_mutex_t kept_mu = PTHREAD_MUTEX_INITIALIZER;
static qc_history kept;
static int kept_n; /* 0: nothing kept */
static char *kept_path[KEEP_MAX];
static struct stat kept_st[KEEP_MAX];

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Drops what is kept; kept_mu held. */
static void kept_clear(void)
{
    qc_history_fini(&kept);
    for (int i = 0; i < kept_n; i++)
        free(kept_path[i]);
    kept_n = 0;
}

void qc_history_keep(qc_history *h, const char *const *paths, int npaths)
{
    struct stat st[KEEP_MAX];
    int ok = npaths > 0 && npaths <= KEEP_MAX;

    for (int i = 0; ok && i < npaths; i++)
        ok = stat(paths[i], &st[i]) == 0 && S_ISREG(st[i].st_mode);
    pthread_mutex_lock(&kept_mu);
    kept_clear();
    if (ok) {
        for (int i = 0; i < npaths; i++) {
            kept_path[i] = strdup(paths[i]);
            kept_st[i] = st[i];
            ok = ok && kept_path[i] != NULL;
            kept_n = i + 1;
        }
    }
    if (ok) {
        kept = *h;
        memset(h, 0, sizeof *h);
    } else {
        kept_clear();
    }
    pthread_mutex_unlock(&kept_mu);
    qc_history_fini(h); /* not kept: freed now */
}

/* Moves the kept history into h when it was loaded from exactly paths and
 * none of those files changed since (device, inode, size, mtime); 1 taken.
 * Anything else kept is freed (its memory is not held past the next load). */
static int kept_take(qc_history *h, const char *const *paths, int npaths)
{
    int hit;

    pthread_mutex_lock(&kept_mu);
    hit = kept_n > 0 && kept_n == npaths;
    for (int i = 0; hit && i < npaths; i++) {
        struct stat st;
        hit = strcmp(kept_path[i], paths[i]) == 0 && stat(paths[i], &st) == 0 &&
              same_file(&st, &kept_st[i]);
    }
    if (hit) {
        *h = kept;
        memset(&kept, 0, sizeof kept);
    }
    kept_clear();
    pthread_mutex_unlock(&kept_mu);
    return hit;
}

int qc_history_load(qc_history *h, const char *const *paths, int npaths, qc_err *err)
{
    loader ld;

    if (npaths > INT16_MAX) /* qc_event.file is an int16_t */
        return qc_err_set(err, QC_EINVAL, "%d ledgers given, at most %d can be judged together",
                          npaths, INT16_MAX);
    if (kept_take(h, paths, npaths))
        return 0;
    int rc = loader_start(&ld, h, err);

    for (int i = 0; rc == 0 && i < npaths; i++) {
        size_t len = 0;
        size_t headers = ld.headers;
        rc = load_file(&ld, paths[i], i, &len, err);
        if (rc == 0 && len == 0)
            rc = qc_err_set(err, QC_EINVAL, "ledger '%s' is empty", paths[i]);
        /* Without a header nothing says what the run was (seed, lease,
         * batch, judged checkers): every verdict would be a guess. */
        if (rc == 0 && ld.headers == headers)
            rc = qc_err_set(err, QC_EINVAL,
                            "ledger '%s' has no header line (is it a qchaos ledger?)", paths[i]);
    }
    return loader_finish(&ld, rc, err);
}

int qc_history_parse(qc_history *h, const char *text, qc_err *err)
{
    loader ld;
    int rc = loader_start(&ld, h, err);

    if (rc == 0)
        rc = parse_buffer(&ld, text, strlen(text), "(text)", 0, 0, err);
    return loader_finish(&ld, rc, err);
}

void qc_history_fini(qc_history *h)
{
    if (h == NULL)
        return;
    free(h->ev);
    pool_free(h->strings);
    free(h->memo_answered);
    free(h->memo_snapshot);
    memset(h, 0, sizeof *h);
}

const char *qc_op_name(qc_op op)
{
    switch (op) {
    case QC_OP_NONE:
        return "none";
    case QC_OP_ENQUEUE:
        return "enqueue";
    case QC_OP_CLAIM:
        return "claim";
    case QC_OP_COMPLETE:
        return "complete";
    case QC_OP_RENEW:
        return "renew";
    case QC_OP_FAIL:
        return "fail";
    case QC_OP_REAP:
        return "reap";
    case QC_OP_HEARTBEAT:
        return "heartbeat";
    case QC_OP_DEDUP:
        return "dedup";
    }
    return "unknown";
}
