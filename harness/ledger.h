/*
 * ledger.h - the append-only record of a run (JSON Lines), writer side.
 * The format is documented in history.h, which reads it back.
 *
 * Design: every thread that records events owns a qc_lbuf.  Appending
 * formats the event into that buffer under the buffer's own mutex, which only
 * the writer thread ever contends for (to swap the buffer out), so a worker
 * never waits on another worker.  One writer thread drains all buffers to
 * the file every 20 ms.  Sequence numbers come from one atomic counter taken
 * at append time, so seq order is consistent with real time; lines in the file
 * may be out of seq order across threads and the reader sorts them.
 */
#ifndef QC_LEDGER_H
#define QC_LEDGER_H

#include <jansson.h>
#include <stdint.h>
#include "err.h"

typedef struct qc_ledger qc_ledger;
typedef struct qc_lbuf qc_lbuf;

/* Creates path (truncating), writes header (borrowed; "type":"header" is
 * added) as the first line and starts the writer thread.  t0 is the run's
 * monotonic origin (qc_clock_ms()) for the events' "t".
 * Errors: QC_EIO naming the path. */
int qc_ledger_open(const char *path, json_t *header, double t0, qc_ledger **out, qc_err *err);

/* A new buffer for one thread, owned by the ledger (freed at close).
 * Thread-safe.  Returns NULL on out of memory. */
qc_lbuf *qc_ledger_buf(qc_ledger *l);

/* Appends ev (reference stolen) with "seq" and "t" added last (ms since t0,
 * to the microsecond, 3 decimals; members of ev with those names are
 * replaced); returns the seq.  The line is ev's members in insertion order,
 * written by ledger.c's own serializer (strings escaped as jansson escapes
 * them; a real that is a whole number of thousandths, such as a server
 * epoch ms, with 3 decimals, any other in the shortest form that reads back
 * as the same double; nested values through json_dumps), so history.c reads
 * back exactly the values appended.  Called only by the thread owning b;
 * it allocates only when the line outgrows b's scratch space.  Out of
 * memory: the event is dropped and qc_ledger_close reports QC_EIO. */
int64_t qc_ledger_append(qc_lbuf *b, json_t *ev);

/* An event built on the caller's stack without allocating (issue 16: the
 * workers' hot path built a jansson object per event, a malloc per member
 * and a free per member after it, about half of the append's cost).  The
 * members keep the order they were first set in, and setting a key again
 * replaces its value in place, as json_object_set_new does; strings are
 * copied in (an inline arena, the heap past it), so the caller's buffers
 * may go before the append.  Keys are borrowed: string literals, or alive
 * until the append.  qc_ev_append writes the same line qc_ledger_append
 * writes for the jansson object with the same members in the same order
 * (one serializer: tests/check_ledger.c).  Not thread-safe: one builder
 * per thread, as a qc_lbuf.  Out of memory or more than QC_EV_MEMBERS
 * members: the event is dropped at append and qc_ledger_close reports
 * QC_EIO, as for qc_ledger_append. */
#define QC_EV_MEMBERS 32
#define QC_EV_ARENA 768

typedef struct qc_ev_member {
    const char *key;
    int kind;          /* QC_EVK_* (ledger.c) */
    int64_t i;         /* integer, boolean */
    double d;          /* real */
    uint32_t off, n;   /* string: text at arena (or heap) offset off, n bytes */
    json_t *j;         /* nested value (owned until append) */
} qc_ev_member;

typedef struct qc_ev {
    int n, oom;
    qc_ev_member m[QC_EV_MEMBERS];
    char *heap;        /* strings past the arena (malloc'ed, freed by append / reset) */
    size_t used, cap;  /* bytes of the string store in use, its size */
    char arena[QC_EV_ARENA];
} qc_ev;

/* Starts an empty event in e (caller-allocated; no fini needed after
 * qc_ev_append, qc_ev_reset frees one that is never appended). */
void qc_ev_init(qc_ev *e);

/* Members: a string (copied; as json_object_set_new given json_string(s),
 * a NULL or a text that is not UTF-8 sets nothing and leaves an earlier
 * value of key), an integer, a real (JSON real: 3 decimals when a whole
 * number of thousandths), a boolean, null, a nested value (reference
 * stolen: notes' arrays and objects). */
void qc_ev_str(qc_ev *e, const char *key, const char *s);
void qc_ev_strn(qc_ev *e, const char *key, const char *s, size_t n);
void qc_ev_int(qc_ev *e, const char *key, int64_t v);
void qc_ev_real(qc_ev *e, const char *key, double v);
void qc_ev_bool(qc_ev *e, const char *key, int v);
void qc_ev_null(qc_ev *e, const char *key);
void qc_ev_json(qc_ev *e, const char *key, json_t *v);

/* The string value of key in e (NUL-terminated, valid until the next
 * change of e), NULL when e has no such string member. */
const char *qc_ev_get_str(const qc_ev *e, const char *key);

/* Drops e's members and frees what it holds (nested values, heap). */
void qc_ev_reset(qc_ev *e);

/* Appends e as qc_ledger_append appends a jansson object ("seq" and "t"
 * last) and resets it; returns the seq.  Called only by the thread owning
 * b. */
int64_t qc_ev_append(qc_lbuf *b, qc_ev *e);

/* Writes v's decimal text and a NUL into buf (at least 21 bytes); returns
 * its length.  What the ledger writes integers with, for the hot paths
 * that format numbers (snprintf's %ld costs ten times as much).  Pure. */
size_t qc_fmt_i64(char *buf, int64_t v);

/* Number of events appended so far (all buffers).  Thread-safe. */
int64_t qc_ledger_count(qc_ledger *l);

/* Stops the writer, writes everything still buffered, fsyncs and closes.
 * All threads using buffers must have stopped.  Accepts NULL.
 * Errors: QC_EIO when a write failed at any time during the run. */
int qc_ledger_close(qc_ledger *l, qc_err *err);

#endif
