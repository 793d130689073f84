/* Fuzz harness: the socketless engine (src/engine_api.c) fed a capture whole and in
 * fuzzed chunks - a differential oracle for the chunking property.
 *
 * Two fresh Connections run the same flow through the _engine_* methods: the reference
 * gets each byte stream in one _engine_feed(), the other in the chunks of the input's
 * chunk plan.  Every step is called once before the first feed and again after every feed
 * until it returns something other than None (the engine needs more bytes).  Each engine
 * leaves a trace (a Python list): what every step returned (field counts, description,
 * all the rows of each result - of a result that ended with an error only when fetched
 * one row per call -, the prepare response, the handshake's True), the first
 * error (the step, the exception type and args), "incomplete" when the stream ran out,
 * the state attributes at the end, the LOCAL INFILE handler's calls and the bytes the
 * engine framed for the server (_engine_output()).  The traces must be equal
 * (PyObject_RichCompare; repr() equality also passes, for NaN values); a difference
 * aborts.  An exception of an unexpected class aborts, as mc_fuzz_check() does.
 *
 * Input:
 *   byte 0  mode
 *     bits 0-1  flow: 0 a COM_QUERY response (text rows, multi-results, LOCAL INFILE);
 *               1 a COM_STMT_PREPARE response, then the COM_STMT_EXECUTE response
 *               (binary rows) read with the prepared statement's id;
 *               2 as 0, inside the compressed protocol (the capture is compressed frames,
 *               compressed sequence ids from 1);
 *               3 the connection phase (_engine_handshake, user/password/database from
 *               the input), then, if bytes follow, COM_QUERY "SELECT 1" and its response
 *     bit 2     flows 0-2: CLIENT_DEPRECATE_EOF; flow 3: compress=True
 *     bit 3     CLIENT_SESSION_TRACK (flows 0-2)
 *     bit 4     fetch one row at a time, as dicts (keys = column_names)
 *     bit 5     an infile_handler is set (it returns a small TSV file in one chunk)
 *     bit 6     ext_caps MARIADB_CLIENT_CACHE_METADATA (flow 1)
 *     bit 7     CLIENT_LOCAL_FILES (flows 0-2)
 *   byte 1  chunk plan P
 *     P & 0x80: a PRNG plan: a u32 seed follows (little-endian); chunk sizes are
 *               1 + xorshift32 % 2^(P & 15)
 *     else:     n = P & 0x7F u16 sizes follow, used in turn and cyclically; a size 0 is an
 *               empty feed on the first pass and 1 byte afterwards; n = 0: one chunk
 *   flows 1 and 3: a u16 split: the capture's first `split` bytes are the first stream
 *     (the prepare response / the connection phase), the rest the second (the execute
 *     response / the query response); the plan carries on across the two streams, and
 *     each engine gets its streams as the server would send them (the second only after
 *     the first step is done)
 *   flow 3: u8 length + user, u8 length + password, u8 length + database (0: None)
 *   the rest: the captured server bytes.
 *
 * Where the outcome legitimately depends on the chunking, the comparison is weaker:
 *   - inside the compressed protocol frames are inflated when fed (mc_frame_inflate), so
 *     a bad frame raises from _engine_feed: with the whole stream at once before any
 *     result is read, in chunks only when its bytes arrive.  If the reference's feed
 *     raised, the chunked engine must end with an error too, and with the same one if
 *     it also came from a feed;
 *   - with compress=True, bytes after the authentication OK in the same feed are refused
 *     ("unexpected bytes after authentication"); if the reference was refused so, the
 *     chunked engine (whose chunk may end at the OK) is not compared;
 *   - an RSA-encrypted password (the server sent a PEM key) has random padding: when the
 *     connection phase contains "-----BEGIN", only the output's length is compared.
 * After a flow ends, the rest of its stream is fed too, so both engines saw every byte.
 * Seeds: fuzz/make_corpus.py (real MariaDB captures); replayed without clang by
 * tests/test_fuzz_corpus.py, which re-expresses this harness in Python.
 */
#define _GNU_SOURCE 1   /* memmem */
#include "common.h"

#define MODE_FLOW 3
#define CACHE_METADATA (1u << 4)   /* MARIADB_CLIENT_CACHE_METADATA, of the extended capabilities */
#define FLOW_TEXT 0
#define FLOW_BINARY 1
#define FLOW_COMPRESSED 2
#define FLOW_HANDSHAKE 3

static PyObject *make_infile;   /* helpers.make_infile() -> (handler, calls) */
static PyObject *state_names;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    mc_fuzz_init();
    static const char *helpers =
        "def make_infile():\n"
        "    calls = []\n"
        "    def handler(name):\n"
        "        calls.append(name)\n"
        "        return [b'1\\tone\\n2\\ttwo\\n3\\tthree\\n']\n"
        "    return handler, calls\n";
    PyObject *g = PyDict_New();
    if (!g || PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) < 0) mcf_die("init");
    PyObject *r = PyRun_String(helpers, Py_file_input, g, g);
    if (!r) mcf_die("helpers");
    Py_DECREF(r);
    make_infile = PyDict_GetItemString(g, "make_infile");
    Py_XINCREF(make_infile);
    state_names = Py_BuildValue("(ssssssssssssssss)", "server_status", "affected_rows",
                                "insert_id", "warning_count", "info", "description",
                                "field_count", "more_results", "rows_pending", "thread_id",
                                "server_version", "auth_plugin_name", "client_flag",
                                "last_errno", "last_error", "last_sqlstate");
    if (!make_infile || !state_names) mcf_die("init");
    return 0;
}

/* ------------------------------------------------------------------ the chunk plan */

typedef struct {
    int whole;
    int prng;
    uint32_t rng;
    unsigned shift;
    const uint8_t *sizes;
    size_t nsizes, idx;
    int cycled;
} plan;

static size_t plan_next(plan *pl, size_t left) {
    size_t n;
    if (pl->whole) return left;
    if (pl->prng) {
        uint32_t x = pl->rng;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        pl->rng = x;
        n = 1 + (x % (1u << pl->shift));
    } else if (pl->nsizes == 0) {
        n = left;
    } else {
        n = (size_t)pl->sizes[2 * pl->idx] | ((size_t)pl->sizes[2 * pl->idx + 1] << 8);
        if (n == 0 && pl->cycled) n = 1;
        if (++pl->idx == pl->nsizes) { pl->idx = 0; pl->cycled = 1; }
    }
    return n < left ? n : left;
}

/* ------------------------------------------------------------------ one engine */

typedef struct {
    PyObject *c;
    PyObject *trace;
    PyObject *calls;         /* the infile handler's calls, or NULL */
    plan pl;
    const uint8_t *s;        /* the current stream */
    size_t n, pos;
    long steps, max_steps;
    int fed;                 /* the stream's first feed happened */
} engine;

static void add(engine *e, PyObject *item) {
    if (!item || PyList_Append(e->trace, item) < 0) mcf_die("trace");
    Py_DECREF(item);
}

/* An exception is pending: record (kind, where, type, args) if its class is expected. */
static void add_error(engine *e, const char *kind, const char *where) {
    if (!PyErr_Occurred()) mcf_die("NULL was returned without an exception");
    if (!(PyErr_ExceptionMatches(mcf_Error) || PyErr_ExceptionMatches(PyExc_ValueError) ||
          PyErr_ExceptionMatches(PyExc_ArithmeticError)))
        mcf_die("unexpected exception class");
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    PyObject *args = v ? PyObject_GetAttrString(v, "args") : NULL;
    if (!args) mcf_die("exception args");
    add(e, Py_BuildValue("(ssOO)", kind, where, t, args));
    Py_DECREF(args);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
}

static void count_step(engine *e) {
    if (++e->steps > e->max_steps) mcf_die("step bound exceeded (the engine makes no progress)");
}

/* Feed the next chunk: 1 fed, 0 the stream is exhausted, -1 the feed raised (recorded). */
static int feed(engine *e) {
    if (e->pos == e->n && e->fed) return 0;
    size_t k = plan_next(&e->pl, e->n - e->pos);
    e->fed = 1;
    PyObject *r = PyObject_CallMethod(e->c, "_engine_feed", "y#", (const char *)e->s + e->pos,
                                      (Py_ssize_t)k);
    e->pos += k;
    count_step(e);
    if (!r) { add_error(e, "feed-error", "_engine_feed"); return -1; }
    if (PyErr_Occurred()) mcf_die("a result was returned with an exception set");
    Py_DECREF(r);
    return 1;
}

static void set_stream(engine *e, const uint8_t *s, size_t n) {
    e->s = s;
    e->n = n;
    e->pos = 0;
    e->fed = 0;
}

/* Feed what is left of the stream (after its flow ended); feed errors are recorded. */
static void feed_rest(engine *e) {
    while (e->pos < e->n)
        if (feed(e) < 0) break;
}

/* Call the step (method with args/kwargs) after every feed until it returns non-None.
   The result, or NULL with the error / "incomplete" recorded. */
static PyObject *wait_step(engine *e, const char *name, PyObject *args, PyObject *kw) {
    PyObject *m = PyObject_GetAttrString(e->c, name);
    if (!m) mcf_die("no such engine method");
    for (;;) {
        count_step(e);
        PyObject *r = PyObject_Call(m, args, kw);
        if (!r) { add_error(e, "error", name); break; }
        if (PyErr_Occurred()) mcf_die("a result was returned with an exception set");
        if (r != Py_None) { Py_DECREF(m); return r; }
        Py_DECREF(r);
        int f = feed(e);
        if (f == 0) { add(e, Py_BuildValue("(ss)", "incomplete", name)); break; }
        if (f < 0) break;
    }
    Py_DECREF(m);
    return NULL;
}

static int attr_true(engine *e, const char *name) {
    PyObject *v = PyObject_GetAttrString(e->c, name);
    if (!v) mcf_die("state attribute");
    int t = PyObject_IsTrue(v);
    Py_DECREF(v);
    if (t < 0) mcf_die("truth");
    return t;
}

/* Every result of a response: 1 read to its end, 0 stopped (recorded). */
static int response_flow(engine *e, int by_row) {
    static PyObject *empty;
    if (!empty) empty = PyTuple_New(0);
    Py_ssize_t limit = by_row ? 1 : -1;
    for (;;) {
        PyObject *nc = wait_step(e, "_engine_response", empty, NULL);
        if (!nc) return 0;
        PyObject *rows = PyList_New(0);
        PyObject *keys = by_row ? PyObject_GetAttrString(e->c, "column_names") : Py_NewRef(Py_None);
        if (!rows || !keys) mcf_die("rows");
        int ok = 1;
        while (ok && attr_true(e, "rows_pending")) {
            count_step(e);
            PyObject *got = PyObject_CallMethod(e->c, "_engine_fetch", "nO", limit, keys);
            if (!got) { add_error(e, "error", "_engine_fetch"); ok = 0; break; }
            if (PyErr_Occurred() || !PyList_Check(got)) mcf_die("_engine_fetch result");
            Py_ssize_t k = PyList_GET_SIZE(got);
            if (PyList_SetSlice(rows, PyList_GET_SIZE(rows), PyList_GET_SIZE(rows), got) < 0)
                mcf_die("rows");
            Py_DECREF(got);
            if ((limit < 0 || k < limit) && attr_true(e, "rows_pending")) {
                int f = feed(e);
                if (f == 0) { add(e, Py_BuildValue("(ss)", "incomplete", "_engine_fetch")); ok = 0; }
                if (f < 0) ok = 0;
            }
        }
        PyObject *desc = PyObject_GetAttrString(e->c, "description");
        if (!desc) mcf_die("description");
        /* a result that ended with an error: the rows decoded so far, but only when they
           came one per call (a failing _engine_fetch(-1) drops the rows it had decoded,
           so what came before the error depends on the chunking) */
        PyObject *res = Py_BuildValue("(sOOO)", "result", nc, desc,
                                      ok || by_row ? rows : Py_None);
        if (!res || PyList_Insert(e->trace, PyList_GET_SIZE(e->trace) - (ok ? 0 : 1), res) < 0)
            mcf_die("trace");
        Py_DECREF(res);
        Py_DECREF(desc);
        Py_DECREF(rows);
        Py_DECREF(keys);
        Py_DECREF(nc);
        if (!ok) return 0;
        if (!attr_true(e, "more_results")) return 1;
    }
}

static void add_state(engine *e) {
    PyObject *st = PyList_New(0);
    if (!st) mcf_die("state");
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(state_names); i++) {
        PyObject *name = PyTuple_GET_ITEM(state_names, i);
        PyObject *v = PyObject_GetAttr(e->c, name);
        if (!v) {
            engine tmp = *e;
            tmp.trace = st;
            add_error(&tmp, "attr-error", PyUnicode_AsUTF8(name));
            continue;
        }
        if (PyList_Append(st, v) < 0) mcf_die("state");
        Py_DECREF(v);
    }
    add(e, Py_BuildValue("(sN)", "state", st));
}

static void add_output(engine *e, int length_only) {
    PyObject *out = PyObject_CallMethod(e->c, "_engine_output", NULL);
    if (!out || !PyBytes_Check(out)) mcf_die("_engine_output");
    if (length_only)
        add(e, Py_BuildValue("(sn)", "output-length", PyBytes_GET_SIZE(out)));
    else
        add(e, Py_BuildValue("(sO)", "output", out));
    Py_DECREF(out);
}

typedef struct {
    uint8_t mode;
    unsigned long flags;
    const uint8_t *s1, *s2;   /* streams */
    size_t n1, n2;
    PyObject *user, *password, *database;
    int rsa;
} input;

/* c.name(*args, **kw); aborts if it fails (the harness's own calls). */
static void call_kw(PyObject *c, const char *name, PyObject *args, PyObject *kw) {
    PyObject *m = PyObject_GetAttrString(c, name);
    PyObject *r = m ? PyObject_Call(m, args, kw) : NULL;
    if (!r) mcf_die(name);
    Py_DECREF(r);
    Py_DECREF(m);
    Py_DECREF(kw);
}

static PyObject *kwargs(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    PyObject *d = Py_VaBuildValue(fmt, ap);
    va_end(ap);
    if (!d) mcf_die("kwargs");
    return d;
}

/* Run the input's flow on a fresh engine with plan `pl`; returns its trace. */
static PyObject *run(const input *in, const plan *pl, size_t total) {
    static PyObject *empty;
    if (!empty) empty = PyTuple_New(0);
    engine e = {0};
    e.pl = *pl;
    /* every byte may take a feed and a step; an empty feed of the plan's first pass too */
    e.max_steps = 64 + 16 * (long)total + 4 * (long)pl->nsizes;
    e.c = PyObject_CallNoArgs(mcf_Connection);
    e.trace = PyList_New(0);
    if (!e.c || !e.trace) mcf_die("Connection()");
    int flow = in->mode & MODE_FLOW, by_row = (in->mode >> 4) & 1;
    if (in->mode & 0x20) {
        PyObject *hc = PyObject_CallNoArgs(make_infile);
        if (!hc || PyObject_SetAttrString(e.c, "infile_handler", PyTuple_GET_ITEM(hc, 0)) < 0)
            mcf_die("infile_handler");
        e.calls = Py_NewRef(PyTuple_GET_ITEM(hc, 1));
        Py_DECREF(hc);
    }
    PyObject *r, *kw;
    unsigned long ext = (in->mode & 0x40) ? CACHE_METADATA : 0;
    switch (flow) {
    case FLOW_TEXT:
    case FLOW_COMPRESSED:
        kw = kwargs("{sksOsk}", "client_flag", in->flags, "compress",
                    flow == FLOW_COMPRESSED ? Py_True : Py_False, "ext_caps", ext);
        call_kw(e.c, "_engine_start", empty, kw);
        set_stream(&e, in->s1, in->n1);
        response_flow(&e, by_row);
        feed_rest(&e);
        add_output(&e, 0);
        break;
    case FLOW_BINARY: {
        kw = kwargs("{sksk}", "client_flag", in->flags, "ext_caps", ext);
        call_kw(e.c, "_engine_start", empty, kw);
        set_stream(&e, in->s1, in->n1);
        PyObject *prep = wait_step(&e, "_engine_prepare_response", empty, NULL);
        if (prep) add(&e, Py_BuildValue("(sO)", "prepare", prep));
        feed_rest(&e);
        add_output(&e, 0);   /* _engine_start clears it */
        if (prep) {
            unsigned long id = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(prep, 0));
            kw = kwargs("{sksOsksk}", "client_flag", in->flags, "binary", Py_True, "ext_caps",
                        ext, "stmt", id);
            call_kw(e.c, "_engine_start", empty, kw);
            set_stream(&e, in->s2, in->n2);
            response_flow(&e, by_row);
            feed_rest(&e);
            add_output(&e, 0);
            Py_DECREF(prep);
        }
        break;
    }
    case FLOW_HANDSHAKE: {
        kw = kwargs("{sO}", "compress", (in->mode & 4) ? Py_True : Py_False);
        PyObject *a = PyTuple_Pack(3, in->user, in->password, in->database);
        if (!a) mcf_die("oom");
        call_kw(e.c, "_engine_handshake", a, kw);
        Py_DECREF(a);
        set_stream(&e, in->s1, in->n1);
        PyObject *done = wait_step(&e, "_engine_handshake_step", empty, NULL);
        if (done) add(&e, Py_BuildValue("(sO)", "handshake", done));
        feed_rest(&e);
        add_output(&e, in->rsa);
        if (done && in->n2) {
            Py_DECREF(done);
            r = PyObject_CallMethod(e.c, "_engine_command", "iy", 3, "SELECT 1");
            if (!r) add_error(&e, "error", "_engine_command");
            else {
                Py_DECREF(r);
                set_stream(&e, in->s2, in->n2);
                response_flow(&e, by_row);
                feed_rest(&e);
            }
            add_output(&e, 0);
        } else {
            Py_XDECREF(done);
        }
        break;
    }
    }
    add_state(&e);
    if (e.calls) add(&e, Py_BuildValue("(sN)", "infile-calls", e.calls));
    r = PyObject_CallMethod(e.c, "close", NULL);
    if (!r) add_error(&e, "error", "close");
    Py_XDECREF(r);
    Py_DECREF(e.c);
    return e.trace;
}

/* The first item of `trace` whose kind is `kind`, or NULL (borrowed). */
static PyObject *find(PyObject *trace, const char *kind) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(trace); i++) {
        PyObject *it = PyList_GET_ITEM(trace, i);
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(it, 0), kind) == 0) return it;
    }
    return NULL;
}

static int has_message(PyObject *trace, const char *needle) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(trace); i++) {
        PyObject *it = PyList_GET_ITEM(trace, i);
        if (PyTuple_GET_SIZE(it) != 4 ||
            PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(it, 0), "error") != 0)
            continue;
        PyObject *s = PyObject_Repr(PyTuple_GET_ITEM(it, 3));
        if (!s) mcf_die("repr");
        int hit = strstr(PyUnicode_AsUTF8(s), needle) != NULL;
        Py_DECREF(s);
        if (hit) return 1;
    }
    return 0;
}

static int same(PyObject *a, PyObject *b) {
    int eq = PyObject_RichCompareBool(a, b, Py_EQ);
    if (eq < 0) PyErr_Clear();
    if (eq > 0) return 1;
    PyObject *ra = PyObject_Repr(a), *rb = PyObject_Repr(b);
    if (!ra || !rb) mcf_die("repr");
    eq = PyUnicode_Compare(ra, rb) == 0;
    Py_DECREF(ra);
    Py_DECREF(rb);
    return eq;
}

static void differ(PyObject *ref, PyObject *got, const char *why) {
    PyObject *ra = PyObject_Repr(ref), *rb = PyObject_Repr(got);
    fprintf(stderr, "fuzz_engine_chunks: %s\n  whole:   %.4000s\n  chunked: %.4000s\n", why,
            ra ? PyUnicode_AsUTF8(ra) : "?", rb ? PyUnicode_AsUTF8(rb) : "?");
    mcf_die("the chunked engine differs from the whole-fed one");
}

static int has_error(PyObject *trace) {
    return find(trace, "error") || find(trace, "feed-error");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mcf_in cur = {data, size};
    if (size < 2) return 0;
    input in = {0};
    in.mode = mcf_u8(&cur);
    int flow = in.mode & MODE_FLOW;
    in.flags = CLIENT_PROTOCOL_41;
    if (in.mode & 4) in.flags |= CLIENT_DEPRECATE_EOF;
    if (in.mode & 8) in.flags |= CLIENT_SESSION_TRACK;
    if (in.mode & 0x80) in.flags |= CLIENT_LOCAL_FILES;
    plan pl = {0};
    uint8_t p = mcf_u8(&cur);
    if (p & 0x80) {
        pl.prng = 1;
        pl.rng = (uint32_t)mcf_u16(&cur) | ((uint32_t)mcf_u16(&cur) << 16);
        if (!pl.rng) pl.rng = 1;
        pl.shift = p & 15;
    } else {
        size_t n = 2 * (size_t)(p & 0x7F);
        pl.sizes = mcf_take(&cur, &n);
        pl.nsizes = n / 2;
    }
    size_t split = 0;
    if (flow == FLOW_BINARY || flow == FLOW_HANDSHAKE) split = mcf_u16(&cur);
    if (flow == FLOW_HANDSHAKE) {
        size_t n = mcf_u8(&cur);
        const uint8_t *s = mcf_take(&cur, &n);
        in.user = PyBytes_FromStringAndSize((const char *)s, (Py_ssize_t)n);
        n = mcf_u8(&cur);
        s = mcf_take(&cur, &n);
        in.password = PyBytes_FromStringAndSize((const char *)s, (Py_ssize_t)n);
        n = mcf_u8(&cur);
        s = mcf_take(&cur, &n);
        in.database = n ? PyBytes_FromStringAndSize((const char *)s, (Py_ssize_t)n) : Py_NewRef(Py_None);
        if (!in.user || !in.password || !in.database) mcf_die("oom");
    }
    if (flow == FLOW_TEXT || flow == FLOW_COMPRESSED) split = cur.n;
    if (split > cur.n) split = cur.n;
    in.s1 = cur.p;
    in.n1 = split;
    in.s2 = cur.p + split;
    in.n2 = cur.n - split;
    if (flow == FLOW_HANDSHAKE)
        in.rsa = memmem(in.s1, in.n1, "-----BEGIN", 10) != NULL;

    plan whole = {.whole = 1};
    PyObject *ref = run(&in, &whole, cur.n);
    PyObject *got = run(&in, &pl, cur.n);
    PyObject *ferr = find(ref, "feed-error");
    if (ferr) {
        /* compressed frames inflate on feed: see the header comment */
        if (!has_error(got)) differ(ref, got, "the whole feed raised, the chunked engine did not fail");
        PyObject *g = find(got, "feed-error");
        if (g) {
            PyObject *a = PyTuple_GetSlice(ferr, 2, 4), *b = PyTuple_GetSlice(g, 2, 4);
            if (!a || !b) mcf_die("slice");
            if (!same(a, b)) differ(ref, got, "different feed errors");
            Py_DECREF(a);
            Py_DECREF(b);
        }
    } else if (flow == FLOW_HANDSHAKE && (in.mode & 4) &&
               has_message(ref, "unexpected bytes after authentication")) {
        /* not compared: see the header comment */
    } else if (!same(ref, got)) {
        differ(ref, got, "outcomes differ");
    }
    Py_DECREF(ref);
    Py_DECREF(got);
    Py_XDECREF(in.user);
    Py_XDECREF(in.password);
    Py_XDECREF(in.database);
    return 0;
}
