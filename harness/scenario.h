/*
 * scenario.h - a scenario file (INI, parsed with inih) plus CLI overrides.
 *
 * Sections and keys (README "Scenario files" is the reference):
 *   [scenario] name, description, protocol (path, relative to the scenario
 *              file's folder, then the current folder, then the data folder)
 *   [workload] workers, jobs, batch, payload_bytes, groups, work_ms (N or MIN-MAX),
 *              duration_s (chaos phase length; 0 = until drained), copies (physical
 *              copies of each message, 1..16), copies_rate (0..1: the fraction of
 *              messages enqueued once more)
 *   [lease]    lease_ms, max_attempts, reaper_interval_ms, retry_delay_ms,
 *              statement_timeout_ms (0 = none; default max(30000, 10 x lease_ms))
 *   [idle]     base_ms, cap_ms, jitter (0..1), listen_poll_ms (LISTEN fallback poll)
 *   [drain]    timeout_s, monitor_interval_ms, monitor_full_interval_ms, idle_tail_s
 *   [bounds]   recovery_slack_ms, max_idle_polls_per_s, max_idle_pause_ms, max_pickup_ms,
 *              max_wedged_ms
 *   [faults]   kill_after_claim, kill_after_effect, stall_beyond_lease, lost_ack,
 *              lost_request, poison, graceful_stop (each N jobs or R%), stall_factor,
 *              restart_delay_ms, poison_mode (fail|crash), clock_skew_ms (N or a
 *              comma list of ms, per worker id, cycling), session_time_zone (+HH:MM:
 *              every protocol connection's session time zone)
 *   [policy]   heartbeat (yes|no), heartbeat_every_ms, on_renew_refused (stop|continue:
 *              continue is a mutant), count_zero_row_complete (yes|no: a mutant),
 *              on_lost_ack (retry|fail: delayed_job's reaction, shared/cases.md C06),
 *              after_stall (complete|fail: what a stalled worker does on waking),
 *              tcp_user_timeout_ms (the workers' libpq tcp_user_timeout behind the proxy),
 *              lease_deadline (sent|answer|none: the worker's own lease clock; answer is
 *              a mutant), on_renew_lost (stop|continue: continue is a mutant),
 *              stop_heartbeat_first (yes|no: what a graceful stop does to the
 *              heartbeat; yes is a mutant, shared/cases.md C07)
 *   [sink]     idempotent (yes|no)
 *   [feed]     bursts, jobs (per burst), gap_ms, start_ms, delay_ms
 *   [nemesis]  terminate_every_ms, restart_at_s, restart_command, pause_at_s,
 *              pause_ms, pause_command, failover_at_s, switchover_at_s,
 *              unfenced_primary_at_s, unfenced_ms, replica_lag_ms,
 *              listen_close_every_ms, listen_terminate_every_ms
 *   [topology] pooler (none|pgbouncer), pool_size, kind (single|replicated),
 *              replication (async|sync), dir
 *   [network]  proxy (on|off), latency_ms, jitter_ms, bandwidth, targets, lost_ack
 *              (client|proxy), partition, partition_at_ms,
 *              partition_ms, partition_mode (silent|refuse): harness/proxy.h
 *   [checks]   judge (comma-separated checker names: their INCONCLUSIVE is exit 4;
 *              a FAIL of any checker is always exit 1), expect (policy mutants)
 *   [run]      seed
 *   [adapter]  command (workers are adapter processes: docs/adapters.md), start_timeout_ms,
 *              answer_timeout_ms, poll_ms, table, id_column, state_column, owner_column
 * An unknown section or key, or a value of the wrong shape, is an error
 * "file:line: ..." naming what was expected (QC_EINVAL, exit 2).
 */
#ifndef QC_SCENARIO_H
#define QC_SCENARIO_H

#include <stdint.h>
#include "err.h"
#include "fault.h"
#include "proxy.h"

#define QC_MAX_CLOCK_SKEWS 64

/* [workload] copies: at most this many physical copies of one message. */
#define QC_MAX_COPIES 16

/* [policy] lease_deadline (docs/decisions.md 950): the worker's own lease
 * deadline is lease_ms from when it SENT the claim (or its last renew that
 * was answered with rows > 0), by its monotonic clock; it starts no effect
 * and sends no complete unless more than QC_LEASE_MARGIN_MS are left.
 * ANSWER (a policy mutant) measures from when the answer arrived; NONE
 * keeps no deadline of its own (the server's lease alone, as before). */
/* [policy] worker_name: what :worker is (qc_scenario.worker_name_kept). */
#define QC_WORKER_NAME_INCARNATION 0
#define QC_WORKER_NAME_KEPT 1
#define QC_WORKER_NAME_HOST 2
#define QC_LEASE_DEADLINE_SENT 0
#define QC_LEASE_DEADLINE_ANSWER 1
#define QC_LEASE_DEADLINE_NONE 2
#define QC_LEASE_MARGIN_MS 50.0

/* [idle] listen_poll_ms when the scenario does not say (ms). */
#define QC_LISTEN_POLL_MS_DEFAULT 1000

typedef struct qc_scenario {
    char path[1024];         /* file it came from ("" for defaults only) */
    char name[128];
    char description[512];
    char protocol[1024];     /* resolved path of the protocol file */
    long workers;            /* worker threads, one connection each */
    long jobs;               /* jobs enqueued before the chaos phase */
    long batch;              /* jobs asked for per claim */
    long payload_bytes;
    long groups;             /* > 0: job i belongs to group "g<i mod groups>" */
    long copies;             /* physical copies of every message (shared/cases.md C23): each
                                its own job, adjacent in the enqueue order, all bound one
                                :message_id; 1 (default) = one job per message */
    double copies_rate;      /* 0..1: the fraction of messages (a seeded draw per message)
                                enqueued once more than copies; 0 (default) none */
    long work_ms_min, work_ms_max; /* simulated effect duration */
    double duration_s;       /* chaos phase; 0 = until drained */
    long lease_ms;
    long max_attempts;
    long reaper_interval_ms;
    long retry_delay_ms;
    long statement_timeout_ms; /* per statement; -1 = derived (qc_scenario_statement_timeout_ms) */
    long idle_base_ms, idle_cap_ms;
    double idle_jitter;
    double drain_timeout_s;
    double idle_tail_s;      /* after the drain, workers keep polling the empty queue */
    long monitor_interval_ms;
    long monitor_full_interval_ms; /* ms between full monitor samples when the protocol has
                                      a monitor_live step (issue 16); 5000 */
    long recovery_slack_ms;
    double max_idle_polls_per_s; /* per worker, during idle streaks; 0 = derived from [idle] */
    long max_idle_pause_ms;  /* longest pause after an empty claim; 0 = derived */
    long max_pickup_ms;      /* job due on an empty queue -> claimed; 0 = derived */
    long max_wedged_ms;      /* worker_progress: a failing streak or an open transaction
                                longer than this (ms) is a wedge; 0 = derived
                                (qc_scenario_max_wedged_ms) */
    /* [faults]: per-job plan (count or rate), see fault.h */
    qc_fault_spec faults[QC_FAULT_COUNT];
    double stall_factor;     /* stall = lease_ms * stall_factor */
    long restart_delay_ms;   /* a killed worker's new incarnation starts after this */
    int poison_crash;        /* 1: a poison job kills its worker (C12); 0: effect fails, fail() */
    /* [faults] clock_skew_ms: worker i's client clock offset (ms) is
     * clock_skew_ms[i mod nclock_skew] (0 for the reaper and the enqueuer);
     * nclock_skew 0 = no skew.  Bound into every step as :client_now_ms. */
    long clock_skew_ms[QC_MAX_CLOCK_SKEWS];
    int nclock_skew;
    /* [faults] session_time_zone: "" = the server's default; else a UTC
     * offset "+HH:MM" / "-HH:MM" (east positive, ISO 8601) that every
     * connection of the run is given at open (qc_driver_set_session_time_zone). */
    char session_time_zone[8];
    /* [faults] reaper_skew_ms: the reaper's client clock offset (ms; 0 =
     * none): a reaper on an application server whose clock is off the
     * database's (shared/cases.md C24), bound into reap as :client_now_ms. */
    long reaper_skew_ms;
    int heartbeat;           /* [policy] 1: renew every lease/3 while working */
    int count_zero_rows;     /* [policy] 1 (a policy mutant): a 0-row complete counts as success */
    int lost_ack_fail;       /* [policy] on_lost_ack = fail: call fail instead of retrying complete */
    int stall_then_fail;     /* [policy] after_stall = fail: the woken worker calls fail */
    long heartbeat_every_ms; /* [policy] heartbeat_every_ms: renew period; 0 = lease_ms / 3 */
    int renew_refused_continue; /* [policy] on_renew_refused = continue (a policy mutant: the
                                   worker keeps working after its lease was refused) */
    int renew_lost_continue; /* [policy] on_renew_lost = continue (a policy mutant: a renew
                                that got no answer is taken as granted, docs/decisions.md 950) */
    int lease_deadline;      /* [policy] lease_deadline: QC_LEASE_DEADLINE_* */
    int stop_heartbeat_first; /* [policy] stop_heartbeat_first = yes (a policy mutant,
                                 shared/cases.md C07): at a graceful stop ([faults]
                                 graceful_stop) the worker stops renewing at once and lets
                                 its job run on; no (default): it renews until the job is
                                 completed, then stops */
    /* [sink] */
    int sink_idempotent;     /* 1: the sink dedups by op key */
    /* [feed]: jobs enqueued during the run, in bursts */
    long feed_bursts, feed_jobs, feed_gap_ms, feed_start_ms, feed_delay_ms;
    /* [nemesis] */
    long terminate_every_ms; /* pg_terminate_backend a worker session every N ms; 0 off */
    double restart_at_s;     /* restart the server at this second of the chaos phase; 0 off */
    char restart_command[1024]; /* {pgdir} = the ephemeral server's folder; "" = the
                                   ephemeral server script's restart --immediate */
    double pause_at_s;       /* freeze the server (SIGSTOP) at this second of the chaos phase; 0 off */
    long pause_ms;           /* for this long */
    char pause_command[1024];/* {dir}, {ms}; "" = the ephemeral server script's pause */
    /* [nemesis], replicated topology only (README "Failover"): each one
     * switch of the primary at this second of the chaos phase; 0 off */
    double failover_at_s;    /* kill -9 the primary, promote the replica */
    double switchover_at_s;  /* stop the primary cleanly, promote the replica */
    double unfenced_primary_at_s; /* promote; the old primary runs on for unfenced_ms */
    long unfenced_ms;        /* the unfenced window, ms (default 2000) */
    long replica_lag_ms;     /* failover: the primary's walsender frozen this long first */
    /* [topology] */
    char pooler[32];         /* "none" or "pgbouncer" (transaction pooling) */
    long pool_size;          /* the pooler's server connections (default_pool_size; 4) */
    int replicated;          /* kind = replicated: primary + streaming replica */
    int replication_sync;    /* replication = sync (only when qchaos starts the topology) */
    char topology_dir[512];  /* dir: a scripts/pg-replicated.sh folder; "" = the variable
                                QCHAOS_TOPOLOGY_DIR, else the one qchaos starts */
    qc_network network;      /* [network]: the built-in proxy (proxy.h); zeroed = off */
    /* [witness] (witness.h): the server-side audit trigger on the queue's table */
    int witness_on;          /* 1: install it and merge its rows into the ledger */
    char witness_table[128]; /* the queue's table ("qchaos.jobs"); "" = the protocol's
                                "-- witness:" header, else the engine's convention */
    char witness_id[64], witness_state[64], witness_token[64], witness_owner[64];
                             /* its columns; "" = from the header / convention,
                                "-" = the table has none (token, owner) */
    /* [checks] */
    char checkers[1024];     /* comma-separated checkers this scenario judges; "" = all */
    char expect[512];        /* policy mutants: checkers that must FAIL (qchaos mutation) */
    /* [schedule] (harness/sched.h): a script of steps, or exploration */
    struct {
        char actor[16];      /* "w0", "reaper" */
        char point[40];      /* "claim.1" */
        int line;            /* line of the scenario file */
        int with_job;        /* "ACTOR POINT job": only a pass for a job counts (a claim or
                                reap that returned one) */
    } steps[128];
    int nsteps;
    int explore_pct;         /* explore = pct: PCT schedules from the seed */
    long pct_depth;          /* priority changes + 1 (PCT's d); default 3 */
    long block_ms;           /* a statement without an answer this long is blocked; 300 */
    long hold_timeout_ms;    /* 0: derived (qc_scenario_hold_timeout_ms) */
    int hold_claim_commit;   /* hold_claim_commit = yes: a claim of one statement runs in an
                                explicit transaction with a "claim.commit" point before its
                                COMMIT (sched.h, qc_claim_commit_held) */
    int hold_complete_commit; /* hold_complete_commit = yes: the same for a complete of one
                                statement, point "complete.commit" (qc_complete_commit_held) */
    int hold_reap_commit;    /* hold_reap_commit = yes: the same for the reaper's reap of one
                                statement, point "reap.commit" (qc_reap_commit_held,
                                decision 1146) */
    int worker_name_kept;    /* [policy] worker_name: QC_WORKER_NAME_INCARNATION (0) :worker
                                is "w3.1"; QC_WORKER_NAME_KEPT (1) "w3" in every incarnation
                                (a pod name); QC_WORKER_NAME_HOST (2) "h1" ... "h<hosts>":
                                worker threads share their host's name, as a process running
                                several worker threads stamps locked_by with its host name */
    long hosts;              /* [policy] hosts (worker_name = host): 1 by default; worker N is
                                on host (N mod hosts) + 1 */
    /* [adapter] (docs/adapters.md): "" command = thread workers on the protocol file */
    char adapter_command[1024]; /* run by /bin/sh -c in the data folder, one process per worker */
    long adapter_start_timeout_ms;  /* hello must come within this (ms) */
    long adapter_answer_timeout_ms; /* an answer qchaos waits for (enqueued, exit on stop) */
    long adapter_poll_ms;           /* the library's own poll interval, passed on (ms) */
    char adapter_table[128];        /* the library's job table (schema.table), for the witness */
    char adapter_id_column[64], adapter_state_column[64], adapter_owner_column[64];
    /* LISTEN/NOTIFY wake-ups (issue 17; used only with a protocol that has a
     * listen step) */
    long listen_poll_ms;     /* [idle] listen_poll_ms: the fallback poll while a worker
                                waits for a notification (ms); 0 = none (wait until
                                notified); default 1000 */
    int listen_lost_ignore;  /* [policy] on_listen_lost = ignore (a policy mutant: the
                                worker keeps waiting on its dead listen connection, which
                                answers at once: a hot loop); fallback (default): poll at
                                the idle policy's rate and open a new one */
    long listen_close_every_ms;     /* [nemesis] qchaos drops a random worker's listen
                                       connection every N ms; 0 off */
    long listen_terminate_every_ms; /* [nemesis] pg_terminate_backend of a random
                                       worker's listen session every N ms; 0 off */
    uint64_t seed;
    int seed_set;
    /* Keys the scenario file(s) set, for load-time remarks (lint.c): the
     * latest line that set each "section.key"; keys past the 96th
     * are not remembered. */
    struct {
        char key[48];
        int line;
    } set[96];
    int nset;
} qc_scenario;

/* The hold timeout of a schedule, ms: [schedule] hold_timeout_ms, else
 * max(10000, 3 x (lease_ms x stall_factor + work_ms max)): longer than any
 * action a scenario plans. */
long qc_scenario_hold_timeout_ms(const qc_scenario *s);

/* worker_progress's bound, ms: [bounds] max_wedged_ms, else
 * max(5000, 3 x lease_ms, 2 x work_ms max + lease_ms): a worker whose every
 * request fails, or whose session sits in a transaction between requests,
 * this long is wedged (longer than any work, renew period or retry a
 * scenario plans). */
long qc_scenario_max_wedged_ms(const qc_scenario *s);

/* Worker worker_id's client clock offset, ms ([faults] clock_skew_ms; 0
 * without one, and for the reaper / enqueuer, worker_id < 0). */
long qc_scenario_clock_skew_ms(const qc_scenario *s, int worker_id);

/* The client clock offset (ms) of actor id: a worker's (id >= 0, as
 * qc_scenario_clock_skew_ms), or the reaper's (id < 0: [faults]
 * reaper_skew_ms).  Pure; thread-safe. */
long qc_scenario_actor_skew_ms(const qc_scenario *s, int id);

/* Fills s with the built-in defaults (16 workers, 20000 jobs, lease 5000 ms,
 * protocol backends/postgres/skip_locked.sql). */
void qc_scenario_defaults(qc_scenario *s);

/* Parses path over s (keys not in the file keep their current values).
 * Errors: QC_EINVAL "path:line: ...", QC_EIO when the file cannot be read. */
int qc_scenario_load(qc_scenario *s, const char *path, qc_err *err);

/* The line of s->path that last set "section.key" (e.g. "faults.session_time_zone"),
 * or 0 when the file did not set it (or past the 96 keys remembered): for
 * errors found after loading that must name file:line.  Pure; thread-safe. */
int qc_scenario_line_of(const qc_scenario *s, const char *section_key);

/* The line of the scenario file that set key in [section] (the latest
 * such line), or 0 when the file did not set it (a default, or a CLI
 * option).  Thread-safe on a scenario nobody writes. */
int qc_scenario_set_line(const qc_scenario *s, const char *section, const char *key);

/* Parses scenario text (len bytes, need not be NUL-terminated) as if read
 * from path (used in messages and kept in s->path), over the values
 * already in s.  Refuses (QC_EINVAL "path:line: ...") an empty file, a NUL
 * byte, a line longer than the INI reader takes and an unbalanced quote,
 * each on its own line.  Errors: QC_EINVAL, QC_ENOMEM.  Thread-safe as far
 * as s is the caller's. */
int qc_scenario_parse(qc_scenario *s, const char *path, const char *text, size_t len, qc_err *err);

/* Resolves a protocol path given on the CLI or in a file: as given when it
 * exists, else relative to base_dir (may be NULL), else under the data folder
 * (QCHAOS_HOME, the executable's folder, QC_DATADIR).  Writes the result into
 * out (size n).  Errors: QC_EINVAL "protocol file 'x' not found". */
int qc_scenario_resolve(const char *name, const char *base_dir, char *out, size_t n, qc_err *err);

/* Checks cross-field constraints (cap >= base, workers >= 1 ...).  Errors:
 * QC_EINVAL naming the key and the file. */
int qc_scenario_validate(const qc_scenario *s, qc_err *err);

/* The folder holding backends/, scenarios/ and scripts/: QCHAOS_HOME when
 * set and not empty; else the executable's folder when it has scripts/ (a
 * checkout); else the executable's ../share/qchaos when that has scripts/
 * (an install under any PREFIX); else QC_DATADIR (PREFIX/share/qchaos of the
 * build).  The string is static or the environment's; do not free it.
 * Thread-safe (the executable's folder is looked up once). */
const char *qc_datadir(void);

/* Finds the scenario file a user named: as given when it exists (relative
 * to the current folder, or absolute), else DATADIR/NAME, DATADIR/scenarios/
 * NAME, and DATADIR/scenarios/NAME.ini (so "default", "scenarios/default.ini"
 * and "cases/c01_snapshot_claim" work from any folder).  Writes the path into
 * out (size n).  Errors: QC_EINVAL "scenario 'x' not found (looked in ...)". */
int qc_scenario_find(const char *name, char *out, size_t n, qc_err *err);

/* 1 when the scenario needs an ephemeral server of its own whatever --dsn
 * says: it restarts or pauses the server, or puts PgBouncer in front. */
int qc_scenario_own_server(const qc_scenario *s);

/* 1 when the scenario switches the primary of a replicated topology
 * (failover_at_s, switchover_at_s or unfenced_primary_at_s > 0). */
int qc_scenario_switches_primary(const qc_scenario *s);

/* The statement timeout every connection of a run gets, in ms: [lease]
 * statement_timeout_ms when given (0 = none), else max(30000, 10 x
 * lease_ms) -- long enough that no correct statement on a loaded server
 * reaches it, short enough that a runaway one cannot hold a run. */
long qc_scenario_statement_timeout_ms(const qc_scenario *s);

#endif
