/*
 * odbc.h - what the unixODBC driver (qc_driver_odbc, declared in driver.h)
 * offers beyond the driver interface: a way to see which abort path runs.
 *
 * abort() must make the server see the connection vanish, as a crashed
 * process would.  The driver knows its socket when, at open, the server
 * reported the client's TCP port (MariaDB/MySQL PROCESSLIST.HOST, SQL
 * Server sys.dm_exec_connections.client_tcp_port, PostgreSQL
 * inet_client_port()) and exactly one socket of this process has that local
 * port; abort then shuts that socket down (QC_ODBC_ABORT_SOCKET).  Without
 * it, on MariaDB/MySQL, abort has the server kill the session with KILL
 * CONNECTION from a fresh connection (QC_ODBC_ABORT_KILL).  Otherwise (a
 * UNIX socket, a proxy in between, another DBMS) abort can only disconnect
 * (QC_ODBC_ABORT_NONE), which ends the session politely.
 */
#ifndef QC_ODBC_H
#define QC_ODBC_H

#include "driver.h"

enum {
    QC_ODBC_ABORT_NONE = 0,   /* plain disconnect: the server sees a polite close */
    QC_ODBC_ABORT_SOCKET = 1, /* shutdown(SHUT_RDWR) of the connection's own socket */
    QC_ODBC_ABORT_KILL = 2    /* KILL CONNECTION <id> sent from a fresh connection */
};

/* The path abort() would take for c right now (QC_ODBC_ABORT_*); the socket
 * path is only reported when the socket found at open is still the same
 * open file (device and inode).  c must be an ODBC connection.  Thread
 * safety: as the connection. */
int qc_odbc_abort_path(qc_conn *c);

/* abort() that says which path actually ran (QC_ODBC_ABORT_*): the KILL
 * path reports QC_ODBC_ABORT_NONE when the fresh connection or the KILL
 * failed.  Frees c; accepts NULL (returns QC_ODBC_ABORT_NONE). */
int qc_odbc_abort_ex(qc_conn *c);

/* Test hook: makes the driver forget the socket it found at open, so that
 * abort takes the KILL CONNECTION path.  Not for production code. */
void qc__odbc_forget_socket(qc_conn *c);

#endif
