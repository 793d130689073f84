/* Shared setup for the libFuzzer harnesses in fuzz/.
 *
 * The C core (every src/ file) is compiled into each harness binary with ASan + UBSan and
 * libFuzzer coverage, and registered as the built-in module ``mysqlc._core`` before
 * the interpreter starts; the pure-Python part of the package (mysqlc.errors,
 * mysqlc._charsets, which the core imports at initialisation) comes from the source
 * tree (MYSQLC_ROOT, compiled in by fuzz/build.sh).  Python's allocator is set to
 * plain malloc so that ASan sees every buffer, PyMem_* ones included.
 *
 * A harness calls mc_fuzz_init() from LLVMFuzzerInitialize and mc_fuzz_check() after
 * each call into the core: an exception of an expected class (mysqlc.Error and its
 * subclasses; ValueError/ArithmeticError from a value decoder that got malformed text)
 * is cleared, anything else (SystemError, TypeError, MemoryError, a result returned
 * with an exception set, ...) aborts, which libFuzzer reports as a crash.
 */
#ifndef MC_FUZZ_COMMON_H
#define MC_FUZZ_COMMON_H

#include "mysqlc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MYSQLC_ROOT
#error "MYSQLC_ROOT must be defined (the repository root, see fuzz/build.sh)"
#endif

PyMODINIT_FUNC PyInit__core(void);

static PyObject *mcf_core;          /* the module mysqlc._core */
static PyObject *mcf_Connection;    /* mysqlc._core.Connection */
static PyObject *mcf_Error;         /* mysqlc.Error */
static mc_state *mcf_state;         /* the core's module state */

static void mcf_die(const char *what) {
    fprintf(stderr, "fuzz harness: %s\n", what);
    if (PyErr_Occurred()) PyErr_Print();
    fflush(stderr);
    abort();
}

static void mc_fuzz_init(void) {
    PyStatus status;
    PyPreConfig pre;
    PyPreConfig_InitPythonConfig(&pre);
    pre.allocator = PYMEM_ALLOCATOR_MALLOC;
    status = Py_PreInitialize(&pre);
    if (PyStatus_Exception(status)) Py_ExitStatusException(status);
    if (PyImport_AppendInittab("mysqlc._core", PyInit__core) < 0) mcf_die("AppendInittab failed");
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;   /* leave SIGINT/SIGSEGV to libFuzzer */
    config.site_import = 0;
    config.write_bytecode = 0;
    config.parse_argv = 0;
    status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) Py_ExitStatusException(status);
    PyObject *path = PySys_GetObject("path");   /* borrowed */
    PyObject *root = PyUnicode_FromString(MYSQLC_ROOT);
    if (!path || !root || PyList_Insert(path, 0, root) < 0) mcf_die("cannot set sys.path");
    Py_DECREF(root);
    mcf_core = PyImport_ImportModule("mysqlc._core");
    if (!mcf_core) mcf_die("cannot import mysqlc._core");
    if (PyModule_GetDef(mcf_core) == NULL || PyModule_GetState(mcf_core) == NULL)
        mcf_die("mysqlc._core is not the built-in module compiled into this harness");
    mcf_state = mc_state_from_module(mcf_core);
    mcf_Connection = PyObject_GetAttrString(mcf_core, "Connection");
    PyObject *pkg = PyImport_ImportModule("mysqlc.errors");
    if (!pkg || !mcf_Connection) mcf_die("cannot import mysqlc.errors");
    mcf_Error = PyObject_GetAttrString(pkg, "Error");
    Py_DECREF(pkg);
    if (!mcf_Error) mcf_die("no mysqlc.errors.Error");
}

/* After a call into the core: `r` is its result (a new reference or NULL).  Returns 1 if
   it succeeded (r non-NULL, no exception pending), 0 for an expected error (cleared).
   Aborts on anything else. */
static int mc_fuzz_check(PyObject *r) {
    if (r && !PyErr_Occurred()) return 1;
    if (r && PyErr_Occurred()) mcf_die("a result was returned with an exception set");
    if (!PyErr_Occurred()) mcf_die("NULL was returned without an exception");
    if (PyErr_ExceptionMatches(mcf_Error) || PyErr_ExceptionMatches(PyExc_ValueError) ||
        PyErr_ExceptionMatches(PyExc_ArithmeticError)) {
        PyErr_Clear();
        return 0;
    }
    mcf_die("unexpected exception class");
    return 0;
}

/* Little helpers for structured inputs: a cursor over the fuzz data. */
typedef struct {
    const uint8_t *p;
    size_t n;
} mcf_in;

static inline uint8_t mcf_u8(mcf_in *in) {
    if (!in->n) return 0;
    in->n--;
    return *in->p++;
}

static inline uint16_t mcf_u16(mcf_in *in) {
    uint16_t lo = mcf_u8(in);
    return (uint16_t)(lo | ((uint16_t)mcf_u8(in) << 8));
}

/* Take up to `n` bytes. */
static inline const uint8_t *mcf_take(mcf_in *in, size_t *n) {
    if (*n > in->n) *n = in->n;
    const uint8_t *s = in->p;
    in->p += *n;
    in->n -= *n;
    return s;
}

/* Append a protocol packet (3-byte length, sequence id, payload) to `w`. */
static void mcf_packet(mc_writer *w, uint8_t seq, const void *payload, size_t n) {
    unsigned char h[4];
    mc_store_u24(h, (uint32_t)n);
    h[3] = seq;
    if (mc_writer_put(w, h, 4) < 0 || mc_writer_put(w, payload, n) < 0) mcf_die("out of memory");
}

/* A ColumnDefinition41 packet for column "c<i>" of table t into p (replacing its content). */
static void mcf_coldef(mc_writer *p, uint8_t type, uint16_t flags, uint16_t charset,
                       uint32_t length, uint8_t decimals, int i) {
    char name[8];
    int nl = snprintf(name, sizeof(name), "c%d", i);
    p->len = 0;
    if (mc_writer_lenenc_str(p, "def", 3) < 0 || mc_writer_lenenc_str(p, "db", 2) < 0 ||
        mc_writer_lenenc_str(p, "t", 1) < 0 || mc_writer_lenenc_str(p, "t", 1) < 0 ||
        mc_writer_lenenc_str(p, name, (size_t)nl) < 0 || mc_writer_lenenc_str(p, name, (size_t)nl) < 0 ||
        mc_writer_u8(p, 0x0c) < 0 || mc_writer_u16(p, charset) < 0 || mc_writer_u32(p, length) < 0 ||
        mc_writer_u8(p, type) < 0 || mc_writer_u16(p, flags) < 0 || mc_writer_u8(p, decimals) < 0 ||
        mc_writer_u16(p, 0) < 0)
        mcf_die("out of memory");
}

/* One ProtocolText::ResultsetRow of ncols values onto p: a control byte each (0xFB: NULL,
   0xFC: a 300-byte value of one repeated byte, else a length 0..63 and that many bytes). */
static void mcf_text_row(mcf_in *in, mc_writer *p, int ncols) {
    for (int i = 0; i < ncols; i++) {
        uint8_t ctl = mcf_u8(in);
        if (ctl == 0xFB) {
            if (mc_writer_u8(p, 0xFB) < 0) mcf_die("oom");
        } else if (ctl == 0xFC) {
            unsigned char big[300];
            memset(big, mcf_u8(in), sizeof(big));
            if (mc_writer_lenenc_str(p, big, sizeof(big)) < 0) mcf_die("oom");
        } else {
            size_t n = ctl % 64;
            const uint8_t *s = mcf_take(in, &n);
            if (mc_writer_lenenc_str(p, s, n) < 0) mcf_die("oom");
        }
    }
}

#endif
