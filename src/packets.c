/* The engine's generic responses and client errors: OK_Packet, ERR_Packet, EOF_Packet, and
 * the exceptions the core raises itself (CR_* client error numbers, SQLSTATE HY000), with
 * the record behind mysql_errno()/mysql_error()/mysql_sqlstate().  No socket. */
#include "conn_internal.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
#include <math.h>
#include <openssl/err.h>


/* Remember the error of the current command for last_errno / last_error / last_sqlstate
   (mysql_errno(), mysql_error(), mysql_sqlstate()).  msg is borrowed; never fails. */
void mc_conn_record_error(mc_conn *c, int errnum, PyObject *msg, const char *sqlstate) {
    c->last_errno = errnum;
    Py_XINCREF(msg);
    Py_XSETREF(c->last_error, msg);
    memcpy(c->last_sqlstate, sqlstate, 5);
    c->last_sqlstate[5] = 0;
}

/* A new command starts with no error (as libmysqlclient clears mysql_errno()). */
void mc_conn_clear_error(mc_conn *c) {
    c->last_errno = 0;
    Py_CLEAR(c->last_error);
    memcpy(c->last_sqlstate, "00000", 6);
}

/* Set exc.sqlstate (a 5-character str); errors in doing so are dropped. */
void mc_set_exc_sqlstate(PyObject *exc, const char *sqlstate) {
    PyObject *s = PyUnicode_FromStringAndSize(sqlstate, 5);
    if (!s || PyObject_SetAttrString(exc, "sqlstate", s) < 0) PyErr_Clear();
    Py_XDECREF(s);
}

/* Raise cls(errnum, msg) for a client-side error (SQLSTATE HY000) and record it as the
   connection's last error; msg is stolen (NULL: formatting failed).  NULL. */
PyObject *mc_client_error_msg(mc_conn *c, PyObject *cls, int errnum, PyObject *msg) {
    if (!msg) return NULL;
    mc_conn_record_error(c, errnum, msg, "HY000");
    PyObject *exc = PyObject_CallFunction(cls, "iO", errnum, msg);
    Py_DECREF(msg);
    if (!exc) return NULL;
    mc_set_exc_sqlstate(exc, "HY000");
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return NULL;
}

PyObject *mc_conn_client_error(mc_conn *c, PyObject *cls, int errnum, const char *fmt, ...) {
    va_list va;
    va_start(va, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, va);
    va_end(va);
    return mc_client_error_msg(c, cls, errnum, msg);
}

/* The error for using a connection whose socket is closed: OperationalError 2006
   "Server has gone away", as libmysqlclient answers every command after close() or
   after the connection was lost (an error, a timeout, an interrupt).  NULL. */
PyObject *mc_conn_raise_closed(mc_conn *c) {
    return mc_conn_client_error(c, c->st->OperationalError, CR_SERVER_GONE_ERROR,
                             "Server has gone away");
}

/* Raise cls(errnum, msg) and close the connection (the stream is no longer in sync).
   The message is formatted first: its arguments may point into connection state. */
PyObject *mc_conn_fatal(mc_conn *c, PyObject *cls, int errnum, const char *fmt, ...) {
    va_list va;
    va_start(va, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, va);
    va_end(va);
    mc_conn_close_socket(c);
    return mc_client_error_msg(c, cls, errnum, msg);
}

PyObject *mc_conn_malformed(mc_conn *c, const char *what) {
    return mc_conn_fatal(c, c->st->OperationalError, CR_MALFORMED_PACKET,
                      "Malformed packet: %s", what);
}

/* ================================================================ OK / ERR / EOF */

int mc_parse_ok(mc_conn *c, const unsigned char *p, size_t n) {
    mc_reader r;
    uint8_t hdr;
    uint64_t affected, insert_id;
    uint16_t status = 0, warnings = 0;
    mc_reader_init(&r, p, n);
    if (mc_reader_u8(&r, &hdr) < 0 || mc_reader_lenenc(&r, &affected, NULL) < 0 ||
        mc_reader_lenenc(&r, &insert_id, NULL) < 0) {
        mc_conn_malformed(c, "short OK packet");
        return -1;
    }
    if (mc_reader_u16(&r, &status) < 0 || mc_reader_u16(&r, &warnings) < 0) {
        mc_conn_malformed(c, "OK packet without status flags");
        return -1;
    }
    c->affected_rows = affected;
    c->insert_id = insert_id;
    c->server_status = status;
    c->warning_count = warnings;
    Py_CLEAR(c->info);
    size_t left = mc_reader_left(&r);
    if (left) {
        const unsigned char *s = r.p;
        size_t sl = left;
        /* MariaDB sends the info as a length-encoded string even without
           CLIENT_SESSION_TRACK; MySQL sends string<EOF> then.  Take the length when
           it covers the rest exactly. */
        mc_reader probe = r;
        const unsigned char *ls;
        size_t ln;
        if ((c->client_flag & CLIENT_SESSION_TRACK) ||
            (mc_reader_lenenc_str(&probe, &ls, &ln) == 0 && mc_reader_left(&probe) == 0)) {
            if (mc_reader_lenenc_str(&r, &s, &sl) < 0) { s = NULL; sl = 0; }
        }
        if (sl) {
            c->info = PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)sl, "replace");
            if (!c->info) return -1;
        }
    }
    return 0;
}

/* Raise the mapped exception for an ERR packet. The connection stays usable. */
PyObject *mc_raise_err_packet(mc_conn *c, const unsigned char *p, size_t n) {
    mc_reader r;
    uint8_t hdr;
    uint16_t errnum;
    mc_reader_init(&r, p, n);
    if (mc_reader_u8(&r, &hdr) < 0 || mc_reader_u16(&r, &errnum) < 0)
        return mc_conn_malformed(c, "short ERR packet");
    /* '#' + 5-character SQLSTATE (CLIENT_PROTOCOL_41), else the generic "HY000" as
       libmysqlclient's mysql_sqlstate(); the 5 characters must be printable ASCII */
    char sqlstate[6] = "HY000";
    if (c->client_flag & CLIENT_PROTOCOL_41 || c->protocol_version == 0) {
        if (mc_reader_left(&r) >= 6 && r.p[0] == '#') {
            int ok = 1;
            for (int i = 1; i <= 5; i++) ok &= r.p[i] > 0x20 && r.p[i] < 0x7F;
            if (ok) memcpy(sqlstate, r.p + 1, 5);
            r.p += 6;
        }
    }
    PyObject *msg = PyUnicode_DecodeUTF8((const char *)r.p, (Py_ssize_t)mc_reader_left(&r), "replace");
    if (!msg) return NULL;
    mc_conn_record_error(c, (int)errnum, msg, sqlstate);
    PyObject *cls = PyObject_CallFunction(c->st->error_class_for, "i", (int)errnum);
    if (!cls) { Py_DECREF(msg); return NULL; }
    PyObject *exc = PyObject_CallFunction(cls, "iO", (int)errnum, msg);
    Py_DECREF(cls);
    Py_DECREF(msg);
    if (!exc) return NULL;
    mc_set_exc_sqlstate(exc, sqlstate);
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return NULL;
}

/* EOF_Packet (0xFE, warnings, status) or, with CLIENT_DEPRECATE_EOF, an OK packet with a
   0xFE header. */
int mc_parse_eof(mc_conn *c, const unsigned char *p, size_t n) {
    if (c->client_flag & CLIENT_DEPRECATE_EOF)
        return mc_parse_ok(c, p, n);
    mc_reader r;
    uint8_t hdr;
    uint16_t warnings, status;
    mc_reader_init(&r, p, n);
    if (mc_reader_u8(&r, &hdr) < 0 || mc_reader_u16(&r, &warnings) < 0 ||
        mc_reader_u16(&r, &status) < 0) {
        mc_conn_malformed(c, "short EOF packet");
        return -1;
    }
    c->warning_count = warnings;
    c->server_status = status;
    return 0;
}

