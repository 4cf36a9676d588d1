/*
 * history.h - a run's ledger read back into memory, the only input of the
 * checkers (a checker never talks to the database).
 *
 * Ledger line format (JSON Lines, one object per line; see README "Ledger"):
 *
 *   {"type":"header","seed":42,"scenario":"default","protocol":"...",
 *    "model":"lease","lease_ms":5000,"max_attempts":3,"workers":16,"jobs":20000,
 *    "reaper_interval_ms":500,"recovery_slack_ms":2000,"qchaos":"0.1.0","server":"..."}
 *   {"seq":7,"t":12.345,"type":"invoke","op":"claim","worker":3,"inc":0,"req":55,
 *    "pause_ms":200.5}
 *   {"seq":9,"t":13.001,"type":"ok","op":"claim","worker":3,"inc":0,"req":55,
 *    "rows":1,"job":17,"token":"5b1e...","lease_until":1764470000123.0,
 *    "now":1764469995123.0,"attempt":1,"op_key":"17"}
 *   {"seq":10,"type":"effect","job":17,"op_key":"17","token":"..","worker":3,"inc":0,"applied":true,
 *    "work_ms":3}
 *   {"seq":11,"type":"invoke","op":"complete","job":17,"token":"..",...}
 *   {"seq":12,"type":"ok","op":"complete","job":17,"token":"..","rows":1,"now":...,
 *    "counted":true}
 *   {"seq":13,"type":"fail","op":"complete",...,"error":"40001 ..."}
 *   {"seq":14,"type":"info","op":"complete",...,"error":"connection lost"}
 *   {"seq":15,"type":"fault","fault":"kill_after_claim","job":17,"worker":3,"inc":0}
 *   {"seq":16,"type":"snapshot","job":17,"state":"done","attempt":1,"token":".."}
 * and, with [workload] copies (shared/cases.md C23), the message on each
 * enqueue and the outbox check's answer:
 *   {"seq":3,"type":"ok","op":"enqueue","worker":-1,"job":18,"message":"5b1e..","copy":1}
 *   {"seq":9,"type":"ok","op":"dedup","job":18,"token":"..","worker":2,"inc":0,"req":40,
 *    "run":false}
 *   {"seq":17,"type":"end","drained":true}
 * and, when a replicated topology's primary is switched (nemesis.c):
 *   {"type":"fault","fault":"failover","worker":-2,"command":"..","until_t":..}
 *   {"type":"switch_snapshot","fault":"failover","note":"read begins"}   (the marker)
 *   {"type":"switch_snapshot","fault":"failover","job":17,"state":"inflight"}
 *   {"type":"fail","op":"claim",..,"sqlstate":"25006","read_only":true}
 *
 * The header's "columns" says which result columns the protocol's steps
 * return (the loader's reading of each step's last statement, among the
 * columns the harness reads: README "Which columns each rule needs"):
 *   "columns":{"claim":["job_id","token","lease_until_ms","now_ms",...],
 *              "complete":["now_ms"],"renew":[...],"fail":[...],
 *              "reap":["job_id","token","state","now_ms"],
 *              "snapshot":["job_id","state","attempt","token","error"],
 *              "enqueue":["job_id"]}
 * A step the protocol lacks is absent; other keys are ignored.  A checker
 * asks qc_run_info_returns before calling a missing column a violation.
 *
 * "seq" is a global order consistent with real time (assigned when an event
 * is appended); "t" is the client's CLOCK_MONOTONIC in milliseconds since the
 * run started; "now" and "lease_until" are epoch milliseconds of the database
 * server's clock.  A claim's completion is one line per claimed job, each
 * carrying "rows" = number of jobs that claim returned; an empty claim is one
 * line with rows 0 and no job.  The reaper is worker -1.
 *
 * Absent fields read back as: t QC_NO_TIME, worker -1, inc 0, req -1,
 * job QC_NO_JOB, rows -1, now / lease_until QC_NO_TIME, attempt -1,
 * applied / drained 0, counted -1, strings NULL; JSON null counts as absent.  Strings
 * are interned, but equal strings may still be distinct pointers and ids (ledgers
 * are parsed in parallel parts): compare them with strcmp.  The record's
 * strings are 32-bit ids (qc_str): read them with qc_s(e->token).  Every
 * event but the header must carry "seq".  Header defaults: seed 0,
 * lease_ms 0, max_attempts -1, batch -1, model "lease", poison_crash 0,
 * checkers "" (all), other numbers 0.
 */
#ifndef QC_HISTORY_H
#define QC_HISTORY_H

#include <stdint.h>
#include <stddef.h>
#include "err.h"

typedef enum {
    QC_EV_OTHER = 0,
    QC_EV_INVOKE,   /* a request was sent */
    QC_EV_OK,       /* it completed and the answer arrived */
    QC_EV_FAIL,     /* it definitely did not take effect (statement error) */
    QC_EV_INFO,     /* unknown: connection lost / answer thrown away */
    QC_EV_EFFECT,   /* an effect delivered to the sink */
    QC_EV_FAULT,    /* the harness injected a fault */
    QC_EV_SNAPSHOT, /* one row of the final snapshot */
    QC_EV_MONITOR,  /* a monitor sample */
    QC_EV_END,      /* end of run marker */
    QC_EV_NOTE,     /* a remark: fault plan, server_count, connect failures */
    QC_EV_WITNESS,  /* a committed row change the server's witness recorded (witness.h) */
    QC_EV_SWITCH_SNAPSHOT, /* one row of the state a promoted replica starts from, read
                              before its promotion (nemesis.c; fault = the switch kind) */
    QC_EV_SESSION   /* a sample of a worker's server session (pg_stat_activity,
                       innodb_trx): check_wedged.c */
} qc_ev_type;

/* Who made a witness row change, from its session name (witness.h). */
typedef enum {
    QC_ACTOR_OTHER = 0, /* a session qchaos did not name */
    QC_ACTOR_WORKER,    /* "qchaos-w<worker>.<inc>" */
    QC_ACTOR_REAPER,    /* "qchaos-reaper" */
    QC_ACTOR_CONTROL    /* "qchaos-control" (setup, enqueue), "qchaos-feeder" */
} qc_actor;

typedef enum {
    QC_OP_NONE = 0,
    QC_OP_ENQUEUE,
    QC_OP_CLAIM,
    QC_OP_COMPLETE,
    QC_OP_RENEW,
    QC_OP_FAIL,
    QC_OP_REAP,
    QC_OP_HEARTBEAT, /* the protocol's per-worker heartbeat step (no job: it names the
                        worker, and extends none of the leases a checker knows) */
    QC_OP_DEDUP     /* the protocol's outbox check between claim and work (shared/cases.md
                       C23): its ok event says "run" true (the handler runs) or false (a
                       duplicate copy, completed without its work and effect) */
} qc_op;

#define QC_NO_JOB INT64_MIN  /* job field absent */
#define QC_NO_TIME (-1.0)    /* server time absent (times are >= 0) */

/* An interned string of a history's event record, 4 bytes instead of a
 * pointer (issue 16: the audit's memory per event): qc_s gives its text,
 * NULL when absent.  Id 0 is absent; any other is a slot of the process's
 * string slot table (the high QC_STR_SLOT_BITS-complement bits) and an
 * offset into that slot's block (the low QC_STR_SLOT_BITS bits).  A slot
 * belongs to one history's string store until qc_history_fini frees it; a
 * block is at most 2^QC_STR_SLOT_BITS bytes unless it holds one longer
 * string at offset 0.  A distinct struct, so that a reader cannot take an
 * id for a pointer: every read goes through qc_s. */
typedef struct qc_str {
    uint32_t id;
} qc_str;

#define QC_STR_SLOT_BITS 20
#define QC_STR_SLOTS 4096 /* 2^(32 - QC_STR_SLOT_BITS) */
extern const char *qc__str_slot[QC_STR_SLOTS];

static inline const char *qc_s(qc_str s)
{
    return s.id == 0 ? NULL
                     : qc__str_slot[s.id >> QC_STR_SLOT_BITS] +
                           (s.id & ((1u << QC_STR_SLOT_BITS) - 1u));
}

/* The fields of the rarer kinds of event (monitor samples, notes, session
 * samples, LISTEN wake-ups and notifies, witness rows), kept out of the
 * record every event has (issue 16: the audit's memory per event).  An
 * event whose line has none of them points at qc_event_x_none, which holds
 * the absent values documented below; the others own one copy each in the
 * history's arena.  Read them as qc_x(e->x)->FIELD: never NULL in a history the
 * loader built; read-only outside history.c and witness_merge.c. */
typedef struct qc_event_x {
    /* Monitor sample (QC_EV_MONITOR): queue depth by state (rows) and the
     * age of the oldest ready job (ms); -1 when absent. */
    long ready, inflight, expired, dead, done;
    double oldest_ready_age_ms;
    const char *note;   /* note: what it is ("server_count", "fault plan" ...) */
    int64_t calls;      /* note server_count: the server's count of claim
                           statements (pg_stat_statements); -1 absent */
    long planned;       /* note "fault plan": jobs the plan gave the fault;
                           -1 absent (read by the reports) */
    int exclusive;      /* note server_count: 1 the server ran only this run's
                           sessions (qchaos started it), 0 shared, -1 absent */
    int complete;       /* note witness: 1 the side table was read to its end,
                           0 in part; -1 absent */
    int pid;            /* note "session" (a worker's connect) and session samples:
                           the server session id; -1 absent */
    double xact_ms;     /* session sample: age of its open transaction on the server
                           clock (now - xact_start, ms); QC_NO_TIME none open */
    double state_ms;    /* session sample: time in its state (now - state_change, ms);
                           QC_NO_TIME unknown */
    double sent_t;      /* session sample: client ms (like t) the sampling query was
                           sent; ok enqueue with a delay_ms: when the first request of
                           its transaction was sent (it ran later); QC_NO_TIME absent */
    const char *wake;   /* invoke claim after a LISTEN wait (issue 17): how the wait
                           ended: "notify", "poll" (its fallback timer ran out),
                           "lost" (the listen connection died), "listen" (right
                           after a (re-)LISTEN); NULL: no listen wait */
    double wait_t;      /* that wait's start, client ms like t; QC_NO_TIME */
    double wait_ms;     /* its planned fallback timer (ms); QC_NO_TIME: none */
    const char *notify; /* ok enqueue with a notify step: "commit", "lost" or
                           "early"; NULL: the protocol sends none */
    double notify_t;    /* ok enqueue: when its notify was sent, client ms like t;
                           QC_NO_TIME: not sent */
    /* Witness row (QC_EV_WITNESS): its own fields, never the generic ones
     * above (job, worker, token ... stay absent, so that no checker takes a
     * row change for a request).  Strings interned, NULL for SQL NULL. */
    int64_t w_id;        /* "wid": its number in the side table (per row, the
                            order of that row's changes) */
    int64_t w_job;       /* "row" read as an integer; QC_NO_JOB when it is not one */
    int64_t w_txid;      /* "txid": the server transaction; -1 unknown (MariaDB) */
    char w_change;       /* 'i' insert, 'u' update, 'd' delete; 0 unknown */
    qc_actor w_actor;    /* from "session" (set when the history is built) */
    int w_worker, w_inc; /* QC_ACTOR_WORKER: the ledger's worker and inc */
    const char *w_session, *w_row, *w_old_state, *w_state, *w_old_token, *w_token, *w_old_owner,
        *w_owner;
    double w_now; /* "server_ms": clock_timestamp() of the change, server epoch ms */
    /* fault events and adapters' ids */
    const char *fault;  /* fault kind */
    double until_t;     /* fault: client ms (like t) its window ends;
                           QC_NO_TIME when absent (an instant fault) */
    int target;         /* fault terminate_session: the worker whose session
                           the nemesis ended; -1 absent */
    const char *lib_id; /* adapter ok enqueue / ok claim: the library's own id of
                           the job (its table's id column, as text); NULL absent */
    /* [workload] copies (shared/cases.md C23) */
    const char *message; /* ok enqueue: the logical message the job is a copy of (its
                            :message_id, a UUID); NULL: the run enqueued no copies */
    int run;             /* ok dedup: 1 the copy ran its handler, 0 it was suppressed;
                            -1 absent */
    int discarded_rows;  /* info of a client-side lost ack (worker.c do_update): the rows
                            the server's answer reported before qchaos threw it away, the
                            step's transaction committed; -1 absent (decision 1101) */
    /* the end event (QC_EV_END) */
    int8_t drained;     /* 1 when every job reached done/dead */
    int8_t interrupted; /* 1 when the run was stopped (SIGINT/SIGTERM) before the drain */
    int8_t timed_out;   /* 1 when the drain timed out with jobs left */
} qc_event_x;

/* The absent values of every qc_event_x field (the loader's defaults). */
extern const qc_event_x qc_event_x_none;

/* An event's qc_event_x, 4 bytes in the record (issue 16): id 0 is
 * qc_event_x_none, any other is a string id's slot and offset (qc_str)
 * where the loader put the event's own copy. */
typedef struct qc_xref {
    uint32_t id;
} qc_xref;

static inline const qc_event_x *qc_x(qc_xref r)
{
    return r.id == 0 ? &qc_event_x_none
                     : (const qc_event_x *)(const void *)(qc__str_slot[r.id >> QC_STR_SLOT_BITS] +
                                                          (r.id & ((1u << QC_STR_SLOT_BITS) - 1u)));
}

/* One event of the ledger, as every checker reads it (by field name).
 * Compact (issue 16: the audit's memory per event), 128 bytes: 8-byte
 * fields first, then 32-bit, then 16- and 8-bit ones; strings as 32-bit
 * ids (qc_s) and the rarer kinds' fields behind a 32-bit reference
 * (qc_x).  The 32-bit fields hold what a ledger line can say within their
 * range (req, rows, delay_ms: -2^31..2^31-1, a line outside it is refused
 * with file:line), and h->ev indexes (invoke, w_ev: a history holds fewer
 * than 2^31 events, refused otherwise). */
typedef struct qc_event {
    int64_t seq;
    double t;             /* client monotonic ms since run start */
    int64_t job;          /* QC_NO_JOB when absent */
    double now;           /* server epoch ms, QC_NO_TIME when absent */
    double lease_until;   /* server epoch ms, QC_NO_TIME when absent */
    qc_str token;         /* interned strings (qc_s), owned by the history; NULL absent */
    qc_str new_token;     /* renew that rotated the token */
    qc_str op_key;
    qc_str state;         /* snapshot: ready|inflight|done|dead */
    qc_str error;         /* error text of fail/info, or kept error of snapshot */
    qc_str group;         /* ok enqueue / ok claim: the job's group key
                             (conversation group, lock); NULL: no group */
    double pause_ms;      /* invoke claim: the pause (ms) the worker's idle
                             policy planned before sending it, after an
                             empty claim; QC_NO_TIME when absent (a first
                             claim, or a worker whose sleeps qchaos does
                             not plan: an adapter's own loop) */
    double work_ms;       /* effect: the work (ms) the worker planned between
                             the claim's answer and the effect; QC_NO_TIME */
    qc_xref x;            /* the rarer kinds' fields (above): qc_x(e->x) */
    int32_t req;          /* request id pairing invoke and completion; -1 none */
    int worker;           /* -1 reaper / control */
    int inc;              /* incarnation of the worker */
    int32_t rows;         /* affected / returned rows; -1 when absent */
    int attempt;          /* -1 when absent */
    int line;             /* line in its ledger file */
    int32_t invoke;       /* completion (ok/fail/info) of a request: index in
                             h->ev of its invoke event (same ledger, worker,
                             inc and req; without req, that worker
                             incarnation's latest invoke; the op must match);
                             -1 when none or not a completion */
    int32_t delay_ms;     /* ok enqueue: scheduled this far ahead (ms); ok
                             fail: the retry delay it asked for (ms); 0 */
    /* Set when the history is built (witness_merge.c), on requests: */
    int32_t w_ev;       /* ok / info completion, or an invoke never answered: index
                           in h->ev of the witness row its request made; -1 none */
    int16_t file;       /* index of its ledger in the paths given to
                           qc_history_load (at most INT16_MAX of them);
                           0 for qc_history_parse */
    uint8_t type;       /* a qc_ev_type */
    uint8_t op;         /* a qc_op */
    int8_t applied;     /* effect: 1 applied by the sink, 0 deduplicated */
    int8_t counted;     /* ok complete: 1 the worker counted it as a
                           success, 0 it did not; -1 when absent */
    int8_t w_resolved;  /* info completion of complete / renew / fail: 1 the witness
                           shows it committed, 0 it shows it did not, -1 unknown
                           (no witness, or one read in part) */
} qc_event;

/* Header values the checkers need (from the first line of the ledger). */
typedef struct qc_run_info {
    uint64_t seed;
    long lease_ms;
    long max_attempts;       /* -1 when unknown */
    long reaper_interval_ms;
    long recovery_slack_ms;
    long workers;
    long jobs;
    char model[32];          /* "lease" or "transaction" */
    long batch;              /* jobs asked for per claim; -1 when unknown */
    int poison_crash;        /* 1: header "poison_mode":"crash" (a poison job
                                kills its worker, leaving a live lease) */
    char checkers[1024];     /* header "checkers" (JSON array of names the
                                scenario judges) joined with ","; "" = all */
    long idle_base_ms, idle_cap_ms; /* the declared idle policy; 0 unknown */
    double idle_jitter;
    double max_idle_polls_per_s;    /* bounded_idle_polling bounds; 0 unknown */
    long max_idle_pause_ms, max_pickup_ms;
    long max_wedged_ms;      /* worker_progress's bound (header "max_wedged_ms"); 0 unknown */
    int claim_reads_lease_ms; /* header "claim_reads_lease_ms": 1 the claim step binds
                                 :lease_ms, 0 not, -1 unknown (an older ledger) */
    int renew_reads_lease_ms; /* header "renew_reads_lease_ms": as claim_reads_lease_ms,
                                 for the renew step (decision 962) */
    int fail_reads_delay_ms;  /* header "fail_reads_delay_ms": 1 the fail step binds
                                 :delay_ms, 0 not (the delay asked for is ignored:
                                 retry_delay judges the fails all the same), -1
                                 unknown (an older ledger) */
    int heartbeat;           /* header "heartbeat": 1 workers renew every lease/3
                                while working, 0 not; -1 unknown */
    int stop_heartbeat_first; /* header "stop_heartbeat_first": 1 a worker asked to stop
                                 gracefully (fault graceful_stop) renews no more from
                                 then on (a policy mutant, C07), 0 it renews until its
                                 jobs are done; -1 unknown (an older ledger) */
    int lease_deadline;      /* header "lease_deadline": 1 "sent", 2 "answer" (the
                                workers keep a lease deadline of their own, measured
                                from the claim's send or its answer), 0 "none"; -1
                                unknown (an older ledger) */
    int sink_plain;          /* header "sink": 1 "plain" (every delivery applied),
                                0 "idempotent" (dedup by op key); -1 unknown */
    /* Header "columns": per step, the result columns its last statement
     * mentions among those the harness reads (joined with ","; "" when
     * the step returns none of them or the protocol has no such step). */
    int has_columns;         /* 1: the header had "columns"; 0: an older
                                ledger, the columns are unknown */
    char enqueue_cols[128], claim_cols[128], complete_cols[128], renew_cols[128],
        fail_cols[128], reap_cols[128], snapshot_cols[128];
    /* Header "witness" (the server-side witness was on): its table and
     * columns; witness_complete from its note. */
    int witness;             /* 1: the run had the witness */
    int witness_token;       /* 1: the witness records a token column */
    int witness_owner;       /* 1: ... an owner column */
    int witness_complete;    /* 1: every row change was read; 0 in part or no note */
    char witness_table[128];
    char adapter_library[64];  /* header adapter "library" / "version" (an adapter's
                                  hello): "pg-boss", "10.4.2"; "" no adapter */
    char adapter_version[32];
    char witness_library[256]; /* header witness "library": the library's own state
                                  changes, "OLD>NEW,..." (witness.h); "" none */
    char missing[16];        /* header "missing": the state of a job the snapshot
                                does not return ("done"), "" none */
    int shard_count;         /* header "shard" {"index":I,"count":N} (qchaos run --shard):
                                the greatest N among the loaded headers; 0 unsharded */
    int shard_ledgers;       /* distinct shard indexes among the loaded headers */
    int shard_dup;           /* 1: two loaded ledgers say the same shard index */
} qc_run_info;

typedef struct qc_history {
    qc_run_info info;
    qc_event *ev;     /* sorted by seq */
    size_t n;
    size_t torn;      /* torn / unparsable lines skipped (reported) */
    size_t fast_lines, jansson_lines; /* lines read by the flat scanner (flatjson.h) and
                                         by jansson (headers, lines it does not read;
                                         every line with QC_LEDGER_PARSER=jansson) */
    void *strings;    /* interned string storage (private) */
    void *memo_answered, *memo_snapshot; /* memos of qc__answered_invokes and
                                            qc__snapshot_build (checkers.c): NULL
                                            not yet computed; set once, atomically,
                                            freed by qc_history_fini */
    double clock_res; /* memo of qc__clock_resolution (checkers.c): 0 not yet
                         computed; written once, atomically, by the first
                         checker that asks (the history is otherwise read-only
                         to them) */
} qc_history;

/* Reads one or more ledgers (several harness processes merge by seq order,
 * ties by file order) into h, which the caller zero-initialises and frees
 * with qc_history_fini.  A torn last line is skipped and counted in h->torn;
 * a bad line elsewhere is QC_EINVAL "file:line: ...", and so is an empty
 * file ("ledger 'x' is empty") or one without a header line ("ledger 'x'
 * has no header line").  Errors: QC_EIO,
 * QC_EINVAL, QC_ENOMEM.  A history kept by qc_history_keep for the same
 * paths, unchanged on disk, is taken over instead of parsing again. */
int qc_history_load(qc_history *h, const char *const *paths, int npaths, qc_err *err);

/* Hands a loaded history over to be reused by the next qc_history_load of
 * exactly the same paths (same order), as long as none of those files
 * changed in between (device, inode, size, mtime), so a run's ledger is
 * parsed once although the audit and the reports each load it (issue 16).
 * Takes ownership of h's contents and leaves h empty (fini-safe); one
 * history is kept at a time: a new keep, or a load of other paths, frees the
 * one kept.  Thread-safe (a mutex guards the kept history; a history taken
 * back belongs to its caller alone).  A file that cannot be stat'ed, or
 * more than 16 paths: nothing is kept (h is freed). */
void qc_history_keep(qc_history *h, const char *const *paths, int npaths);

/* Builds a history from ledger text in memory (tests use this). */
int qc_history_parse(qc_history *h, const char *text, qc_err *err);

void qc_history_fini(qc_history *h);

/* Builds the witness's view of h (called by qc_history_load / _parse; a
 * no-op without witness rows): names each row's actor, links requests to
 * the row changes they made (w_ev) and resolves info outcomes
 * (w_resolved).  Matching (session, job, token): a claim made the row its
 * token was set to; a complete / fail the row that left the state with
 * the token it sent (or deleted it); a renew the row that kept the state
 * with its token; a reap the reaper's row leaving the state with the
 * reaped token; an enqueue the control session's insert.  OK answers with
 * rows > 0 take their rows first, then info outcomes.  Returns 0 or
 * QC_ENOMEM.  (witness_merge.c) */
int qc__witness_merge(qc_history *h);

/* 1 when witness row w is one of the state changes the library's file
 * declares as the library's own (h->info.witness_library, "OLD>NEW,...",
 * NULL for no row): its expiry or repair, made in one of its sessions
 * without a request an adapter can report.  0 otherwise (and always for a
 * protocol file).  Pure; thread-safe.  (witness_merge.c) */
int qc__witness_library_change(const qc_history *h, const qc_event *w);

const char *qc_op_name(qc_op op);

/* Whether the run's protocol returns column from step ("reap", "snapshot",
 * "claim", "complete", "renew", "fail", "enqueue"), by the header's
 * "columns": 1 yes, 0 no, -1 unknown (a ledger without "columns", or a
 * step name not listed above). */
int qc_run_info_returns(const qc_run_info *info, const char *step, const char *column);

#endif
