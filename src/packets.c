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

/* ---------------------------------------------------------------- session state */

/* MySQL docs, "OK_Packet", session state information: enum_session_state_type */
enum {
    SESSION_TRACK_SYSTEM_VARIABLES = 0,
    SESSION_TRACK_SCHEMA = 1,
    SESSION_TRACK_STATE_CHANGE = 2,
    SESSION_TRACK_GTIDS = 3,
    SESSION_TRACK_TRANSACTION_CHARACTERISTICS = 4,
    SESSION_TRACK_TRANSACTION_STATE = 5,
};

/* A new session (connect, COM_CHANGE_USER, COM_RESET_CONNECTION): nothing tracked yet;
   `schema` (borrowed str, or NULL) is the database the session starts in. */
void mc_track_reset(mc_conn *c, PyObject *schema) {
    Py_XINCREF(schema);
    Py_XSETREF(c->schema, schema);
    Py_CLEAR(c->session_changes);
    Py_CLEAR(c->session_vars);
    c->tracked_nbe = 0;
    c->track_seq++;
}

/* 1 when string literals must not use backslash escapes: the tracked sql_mode's
   NO_BACKSLASH_ESCAPES when the server reported sql_mode, else the status flag of the
   last OK/EOF (SERVER_STATUS_NO_BACKSLASH_ESCAPES). */
int mc_no_backslash_escapes(mc_conn *c) {
    if (c->tracked_nbe) return c->tracked_nbe == 2;
    return (c->server_status & SERVER_STATUS_NO_BACKSLASH_ESCAPES) != 0;
}

static PyObject *track_str(const unsigned char *s, size_t n) {
    return PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)n, "replace");
}

/* NO_BACKSLASH_ESCAPES among the comma-separated modes of a sql_mode value */
static int sql_mode_has_nbe(const unsigned char *s, size_t n) {
    static const char name[] = "NO_BACKSLASH_ESCAPES";
    size_t k = sizeof name - 1, i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && s[j] != ',') j++;
        if (j - i == k && !memcmp(s + i, name, k)) return 1;   /* the server upper-cases */
        i = j + 1;
    }
    return 0;
}

static int track_set(PyObject *d, const char *key, PyObject *v) {
    if (!v) return -1;
    int r = PyDict_SetItemString(d, key, v);
    Py_DECREF(v);
    return r;
}

/* The session state information of an OK packet (string<lenenc> of entries: type int<1>,
   data string<lenenc>): into c->session_changes (a new dict), c->session_vars,
   c->schema and c->tracked_nbe.  Unknown types are skipped by their length.  0, or -1
   with OperationalError 2027 (the connection closed) or MemoryError. */
static int parse_session_state(mc_conn *c, const unsigned char *p, size_t n, uint16_t status) {
    mc_reader r;
    mc_reader_init(&r, p, n);
    PyObject *changes = PyDict_New(), *vars = NULL;
    if (!changes) return -1;
    const char *bad = NULL;
    while (mc_reader_left(&r) > 0) {
        uint8_t type;
        const unsigned char *d;
        size_t dn;
        if (mc_reader_u8(&r, &type) < 0 || mc_reader_lenenc_str(&r, &d, &dn) < 0) {
            bad = "session state entry longer than the OK packet";
            goto malformed;
        }
        mc_reader e;
        mc_reader_init(&e, d, dn);
        const unsigned char *a, *b;
        size_t an, bn;
        switch (type) {
        case SESSION_TRACK_SYSTEM_VARIABLES:
            if (mc_reader_lenenc_str(&e, &a, &an) < 0 || mc_reader_lenenc_str(&e, &b, &bn) < 0) {
                bad = "session state system variable without name and value";
                goto malformed;
            }
            if (!vars) {
                vars = PyDict_New();
                if (!vars || PyDict_SetItemString(changes, "system_variables", vars) < 0) goto error;
            }
            {
                PyObject *k = track_str(a, an), *v = k ? track_str(b, bn) : NULL;
                int rc = v ? PyDict_SetItem(vars, k, v) : -1;
                if (rc == 0) {
                    if (!c->session_vars && !(c->session_vars = PyDict_New())) rc = -1;
                    else rc = PyDict_SetItem(c->session_vars, k, v);
                }
                Py_XDECREF(k);
                Py_XDECREF(v);
                if (rc < 0) goto error;
            }
            if (an == 8 && !memcmp(a, "sql_mode", 8))
                c->tracked_nbe = sql_mode_has_nbe(b, bn) ? 2 : 1;
            break;
        case SESSION_TRACK_SCHEMA:
            if (mc_reader_lenenc_str(&e, &a, &an) < 0) {
                bad = "session state schema without a name";
                goto malformed;
            }
            {
                PyObject *v = track_str(a, an);
                if (!v) goto error;
                Py_XSETREF(c->schema, Py_NewRef(v));
                if (track_set(changes, "schema", v) < 0) goto error;
            }
            break;
        case SESSION_TRACK_STATE_CHANGE:
            /* the servers send the flag as the data itself ("1"); the docs' inner
               string<lenenc> is taken too */
            a = d;
            an = dn;
            if (dn > 1 && mc_reader_lenenc_str(&e, &a, &an) < 0) {
                bad = "session state change flag malformed";
                goto malformed;
            }
            if (an == 0) {
                bad = "session state change flag missing";
                goto malformed;
            }
            if (track_set(changes, "state_change", PyBool_FromLong(an == 1 && a[0] == '1')) < 0)
                goto error;
            break;
        case SESSION_TRACK_GTIDS: {
            uint8_t spec;   /* encoding specification: 0, GTIDs as text */
            if (mc_reader_u8(&e, &spec) < 0 || mc_reader_lenenc_str(&e, &a, &an) < 0) {
                bad = "session state GTIDs entry too short";
                goto malformed;
            }
            if (track_set(changes, "gtids", track_str(a, an)) < 0) goto error;
            break;
        }
        case SESSION_TRACK_TRANSACTION_CHARACTERISTICS:
        case SESSION_TRACK_TRANSACTION_STATE:
            if (mc_reader_lenenc_str(&e, &a, &an) < 0) {
                bad = "session state transaction entry too short";
                goto malformed;
            }
            if (track_set(changes, type == SESSION_TRACK_TRANSACTION_STATE ?
                          "transaction_state" : "transaction_characteristics",
                          track_str(a, an)) < 0)
                goto error;
            break;
        default:
            break;   /* a type this driver does not know: skipped by its length */
        }
    }
    Py_XDECREF(vars);
    Py_XSETREF(c->session_changes, changes);
    c->track_seq++;
    if (status & SERVER_MORE_RESULTS_EXISTS) c->uncertain_seq = c->track_seq;
    return 0;
malformed:
    mc_conn_malformed(c, bad);
error:
    Py_XDECREF(vars);
    Py_DECREF(changes);
    return -1;
}

static PyObject *track_obj(PyObject *o) { return Py_NewRef(o ? o : Py_None); }
PyObject *mc_get_schema(mc_conn *c, void *x) { return track_obj(c->schema); }
PyObject *mc_get_session_changes(mc_conn *c, void *x) { return track_obj(c->session_changes); }
PyObject *mc_get_session_variables(mc_conn *c, void *x) {
    return c->session_vars ? PyDict_Copy(c->session_vars) : PyDict_New();
}
PyObject *mc_get_track_seq(mc_conn *c, void *x) {
    return PyLong_FromUnsignedLongLong(c->track_seq);
}
PyObject *mc_get_uncertain_seq(mc_conn *c, void *x) {
    return PyLong_FromUnsignedLongLong(c->uncertain_seq);
}

/* ================================================================ OK / ERR / EOF */

/* OK_Packet (MySQL docs "OK_Packet"): header, affected rows, last insert id, status
   flags, warnings, then the info and, with CLIENT_SESSION_TRACK and
   SERVER_SESSION_STATE_CHANGED in the status, the session state changes. */
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
    if (c->session_changes) Py_CLEAR(c->session_changes);
    size_t left = mc_reader_left(&r);
    if (!left) return 0;
    const unsigned char *s = r.p;
    size_t sl = left;
    if (c->client_flag & CLIENT_SESSION_TRACK) {
        if (mc_reader_lenenc_str(&r, &s, &sl) < 0) {
            mc_conn_malformed(c, "OK packet info longer than the packet");
            return -1;
        }
        if (status & SERVER_SESSION_STATE_CHANGED) {
            const unsigned char *ss;
            size_t sn;
            if (mc_reader_lenenc_str(&r, &ss, &sn) < 0) {
                mc_conn_malformed(c, "OK packet session state longer than the packet");
                return -1;
            }
            if (parse_session_state(c, ss, sn, status) < 0) return -1;
        }
    } else {
        /* MariaDB sends the info as a length-encoded string even without
           CLIENT_SESSION_TRACK; MySQL sends string<EOF> then.  Take the length when
           it covers the rest exactly. */
        mc_reader probe = r;
        const unsigned char *ls;
        size_t ln;
        if (mc_reader_lenenc_str(&probe, &ls, &ln) == 0 && mc_reader_left(&probe) == 0) {
            s = ls;
            sl = ln;
        }
    }
    if (sl) {
        c->info = PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)sl, "replace");
        if (!c->info) return -1;
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

