/* Buffered results kept as their row packets: mysqlc._core.Store.
 *
 * A buffered cursor's execute() reads the whole result off the socket (the connection is
 * free for the next command as soon as it returns) but does not decode it: the row
 * payloads are appended to one growable byte store, each behind a 4-byte little-endian
 * length, so the store is as large as the rows were on the wire (their 4-byte packet
 * headers are replaced by the lengths) and no allocation happens per row.  A sparse index
 * holds the byte offset of every 256th row.
 *
 * The store is a read-only sequence of rows: store[i] and store[a:b] decode the rows they
 * return with the connection's row decoders (tuples, or dicts keyed by `keys`), so
 * fetchone/fetchmany/fetchall/iteration/scroll decode only what they hand out, and
 * Store.fetch_arrow() (columnar.c) decodes the packets straight into Arrow with the GIL
 * released.  Decoding uses `ctx`: an mc_conn that is no Python object and has no socket,
 * holding a copy of the result's column plan and names.
 *
 * Connection.store(keys=None) only stores results whose decoding cannot call Python code
 * (no user converter, no character set that needs a Python codec), and checks every row
 * as it is stored -- its values fill the packet exactly, and UTF-8 / ASCII text is valid --
 * so that the errors of a malformed row or of text that does not decode are raised by
 * execute(), from the packet itself, exactly as before; it returns None for the others,
 * which the cursor then decodes at once with fetch().
 */
#include "conn_internal.h"
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#define STORE_INDEX_SHIFT 8

static inline uint32_t load_u32(const unsigned char *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

/* ---------------------------------------------------------------- checks at store time */

/* 1 when text value [s, s+n) of column `col` decodes without error, else 0. */
static inline int text_ok(const mc_column_plan *col, const unsigned char *s, size_t n) {
    if (col->kind == MC_DEC_STR_UTF8) return mc_utf8_valid(s, n);
    if (col->kind == MC_DEC_STR_ASCII) {
        for (size_t i = 0; i < n; i++)
            if (s[i] >= 0x80) return 0;
    }
    return 1;
}

/* lenenc-prefixed value at *pp (bounded by e): 0 with its span, or -1 when it runs past e. */
static inline int lenenc_span(const unsigned char **pp, const unsigned char *e,
                              const unsigned char **s, size_t *n, int *is_null) {
    const unsigned char *p = *pp;
    *is_null = 0;
    if (p >= e) return -1;
    unsigned b = *p++;
    uint64_t len;
    if (b < 0xFB) {
        len = b;
    } else if (b == 0xFB) {
        *is_null = 1;
        *pp = p;
        return 0;
    } else if (b == 0xFC) {
        if (e - p < 2) return -1;
        len = (uint64_t)p[0] | ((uint64_t)p[1] << 8);
        p += 2;
    } else if (b == 0xFD) {
        if (e - p < 3) return -1;
        len = mc_load_u24(p);
        p += 3;
    } else if (b == 0xFE) {
        if (e - p < 8) return -1;
        len = 0;
        for (int k = 7; k >= 0; k--) len = (len << 8) | p[k];
        p += 8;
    } else {
        return -1;
    }
    if (len > (uint64_t)(e - p)) return -1;
    *s = p;
    *n = (size_t)len;
    *pp = p + len;
    return 0;
}

/* 1 when the row packet decodes without error as far as its structure and its text go. */
static int row_ok(const mc_conn *x, const unsigned char *p, size_t n) {
    const unsigned char *e = p + n, *s;
    size_t len;
    int is_null;
    Py_ssize_t nc = x->plan_len;
    if (!x->binary) {
        for (Py_ssize_t i = 0; i < nc; i++) {
            if (lenenc_span(&p, e, &s, &len, &is_null) < 0) return 0;
            if (!is_null && !text_ok(&x->plan[i], s, len)) return 0;
        }
        return p == e;
    }
    size_t bitmap_len = (size_t)(nc + 7 + 2) / 8;
    if (n < 1 + bitmap_len || p[0] != 0x00) return 0;
    const unsigned char *bitmap = p + 1;
    p += 1 + bitmap_len;
    for (Py_ssize_t i = 0; i < nc; i++) {
        size_t bit = (size_t)i + 2;
        if (bitmap[bit / 8] & (1u << (bit % 8))) continue;
        size_t w;
        switch (x->plan[i].type) {
        case MC_TYPE_TINY: w = 1; break;
        case MC_TYPE_SHORT: case MC_TYPE_YEAR: w = 2; break;
        case MC_TYPE_INT24: case MC_TYPE_LONG: case MC_TYPE_FLOAT: w = 4; break;
        case MC_TYPE_LONGLONG: case MC_TYPE_DOUBLE: w = 8; break;
        case MC_TYPE_DATE: case MC_TYPE_NEWDATE: case MC_TYPE_DATETIME:
        case MC_TYPE_TIMESTAMP: case MC_TYPE_DATETIME2: case MC_TYPE_TIMESTAMP2:
        case MC_TYPE_TIME: case MC_TYPE_TIME2:
            if (p >= e) return 0;
            w = 1 + (size_t)p[0];
            break;
        default:
            if (lenenc_span(&p, e, &s, &len, &is_null) < 0 || is_null) return 0;
            if (!text_ok(&x->plan[i], s, len)) return 0;
            continue;
        }
        if ((size_t)(e - p) < w) return 0;
        p += w;
    }
    return p == e;
}

/* ---------------------------------------------------------------- building */

/* The byte store grows in place: below STORE_MAP_MIN in the Python allocator, above it in
   an anonymous mapping that mremap() enlarges without copying (and that may use transparent
   huge pages), so storing a result touches each of its pages once. */
#define STORE_MAP_MIN ((size_t)1 << 18)
/* (not under AddressSanitizer, so that it checks every access to the store) */
#if defined(MREMAP_MAYMOVE) && !defined(__SANITIZE_ADDRESS__)
#define STORE_USE_MAP 1
#endif

#ifdef STORE_USE_MAP
/* One spare mapping per process: the buffer of the last large Store freed, kept for the
   next one (its first word holds its size).  A connection that reads the same scan again
   and again then writes into pages that are already there: a fresh mapping costs a page
   fault and the zeroing of every page (for 200,000 rows of text about a tenth of the
   client's CPU time of execute() + fetchall()).  At most STORE_SPARE_MAX bytes are kept;
   taken and given back with atomic exchanges (no lock: threads, and interpreters with
   their own GIL, may race here). */
#define STORE_SPARE_MAX ((size_t)64 << 20)
static void *store_spare;

static void *spare_take(size_t *cap) {
    void *b = __atomic_exchange_n(&store_spare, NULL, __ATOMIC_ACQ_REL);
    if (b) *cap = *(size_t *)b;
    return b;
}

static void spare_put(void *b, size_t cap) {
    if (cap > STORE_SPARE_MAX) {
        if (munmap((unsigned char *)b + STORE_SPARE_MAX, cap - STORE_SPARE_MAX) < 0) {
            munmap(b, cap);
            return;
        }
        cap = STORE_SPARE_MAX;
    }
    *(size_t *)b = cap;
    void *none = NULL;
    if (!__atomic_compare_exchange_n(&store_spare, &none, b, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        munmap(b, cap);
}

/* A mapping of at least `cap` bytes: the spare (enlarged if needed), else a new one;
   its size in *got.  MAP_FAILED when none. */
static void *map_new(size_t cap, size_t *got) {
    size_t scap;
    void *nb = spare_take(&scap);
    if (nb) {
        if (scap >= cap) { *got = scap; return nb; }
        void *grown = mremap(nb, scap, cap, MREMAP_MAYMOVE);
        if (grown != MAP_FAILED) { *got = cap; return grown; }
        munmap(nb, scap);
    }
    *got = cap;
    return mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}
#endif

static int store_reserve(mc_store *s, size_t extra) {
    if (s->cap - s->len >= extra) return 0;
    size_t need = s->len + extra;
    if (need < s->len) { PyErr_NoMemory(); return -1; }
    size_t cap = s->cap ? s->cap : 256;
    while (cap < need) {
        if (cap > ((size_t)-1) / 2) { cap = need; break; }
        cap *= 2;
    }
#ifdef STORE_USE_MAP
    if (cap >= STORE_MAP_MIN) {
        void *nb;
        if (s->mapped) {
            nb = mremap(s->buf, s->cap, cap, MREMAP_MAYMOVE);
        } else {
            size_t got;
            nb = map_new(cap, &got);
            if (nb != MAP_FAILED) {
                if (s->len) memcpy(nb, s->buf, s->len);
                PyMem_Free(s->buf);
                cap = got;
            }
        }
        if (nb == MAP_FAILED) { PyErr_NoMemory(); return -1; }
#ifdef MADV_HUGEPAGE
        (void)madvise(nb, cap, MADV_HUGEPAGE);
#endif
        s->buf = nb;
        s->cap = cap;
        s->mapped = 1;
        return 0;
    }
#endif
    unsigned char *nb = PyMem_Realloc(s->buf, cap);
    if (!nb) { PyErr_NoMemory(); return -1; }
    s->buf = nb;
    s->cap = cap;
    return 0;
}

/* Give back the growth slack once the result is stored. */
static void store_shrink(mc_store *s) {
#ifdef STORE_USE_MAP
    if (s->mapped) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        size_t keep = (s->len + page - 1) / page * page;
        if (keep < page) keep = page;
        if (keep < s->cap) {
            void *nb = mremap(s->buf, s->cap, keep, 0);
            if (nb != MAP_FAILED) { s->buf = nb; s->cap = keep; }
        }
        return;
    }
#endif
    if (s->cap > s->len + (s->len >> 4) + 64) {
        unsigned char *nb = PyMem_Realloc(s->buf, s->len ? s->len : 1);
        if (nb) {
            s->buf = nb;
            s->cap = s->len ? s->len : 1;
        }
    }
}

static void store_free_buf(mc_store *s) {
#ifdef STORE_USE_MAP
    if (s->mapped) {
        spare_put(s->buf, s->cap);
        s->buf = NULL;
        return;
    }
#endif
    PyMem_Free(s->buf);
    s->buf = NULL;
}

static int store_append(mc_store *s, const unsigned char *p, size_t n) {
    if ((s->nrows & ((1 << STORE_INDEX_SHIFT) - 1)) == 0) {
        size_t slot = (size_t)s->nrows >> STORE_INDEX_SHIFT;
        if (slot >= s->index_cap) {
            size_t ncap = s->index_cap ? s->index_cap * 2 : 4;
            size_t *ni = PyMem_Realloc(s->index, ncap * sizeof(size_t));
            if (!ni) { PyErr_NoMemory(); return -1; }
            s->index = ni;
            s->index_cap = ncap;
        }
        s->index[slot] = s->len;
    }
    if (store_reserve(s, 4 + n) < 0) return -1;
    unsigned char *d = s->buf + s->len;
    d[0] = (unsigned char)n; d[1] = (unsigned char)(n >> 8);
    d[2] = (unsigned char)(n >> 16); d[3] = (unsigned char)(n >> 24);
    if (n) memcpy(d + 4, p, n);
    s->len += 4 + n;
    s->nrows++;
    return 0;
}

/* Results the store holds: decoding them runs no Python code that could fail. */
static int store_applies(const mc_conn *c) {
    if (c->has_converters) return 0;
    for (Py_ssize_t i = 0; i < c->plan_len; i++)
        if (c->plan[i].kind == MC_DEC_STR_CODEC || c->plan[i].converter) return 0;
    return 1;
}

static int ctx_init(mc_store *s, mc_conn *c) {
    mc_conn *x = &s->ctx;
    x->st = c->st;
    x->fd = -1;
    x->state = ST_IDLE;
    x->binary = c->binary;
    x->field_count = c->field_count;
    x->plan = PyMem_Calloc((size_t)c->plan_len, sizeof(mc_column_plan));
    if (!x->plan) { PyErr_NoMemory(); return -1; }
    memcpy(x->plan, c->plan, (size_t)c->plan_len * sizeof(mc_column_plan));
    for (Py_ssize_t i = 0; i < c->plan_len; i++) {
        Py_XINCREF(x->plan[i].codec_obj);
        Py_XINCREF(x->plan[i].converter);
    }
    x->plan_len = c->plan_len;
    Py_XINCREF(c->column_names);
    x->column_names = c->column_names;
    return 0;
}

/* ---------------------------------------------------------------- decoding ahead
 *
 * Where the rows go is decided at the Store's first fetch: tuples/dicts for a row method,
 * Arrow for a columnar one.  Decoding the rows only then gives up the overlap the eager
 * path had -- each row decoded while the server produced and sent the next ones -- which
 * made execute() + fetchall() of the 200,000-row scans 1.4-1.6x slower in wall time (the
 * store phase alone took about as long as the whole eager read).  So when the rows of
 * this result are expected to be read as rows -- the connection's last Store of the same
 * shape (column definitions and names) was, or, for a shape not among its last
 * MC_READ_SHAPES, its last Store was -- the store loop also decodes rows whenever it would
 * otherwise wait: no complete packet is buffered and the socket has nothing to read (poll
 * with a zero timeout).  The rows still undecoded when the last packet has arrived are
 * decoded then.  They are kept in s->pre and handed out by the row fetches; a columnar
 * first fetch drops them and decodes the packets (the expectation was wrong: it costs
 * the eager decoding once, and the shape is then expected to be read as columns).
 * A row decoded ahead is checked by its decoding; when no row is decoded ahead, each is
 * checked with row_ok() as it arrives. */

/* bytes of rows decoded ahead between two looks at the socket (about a millisecond of
   decoding; the socket's buffer holds what arrives meanwhile).  In paired runs of the
   200,000-row scans 16 KiB steps were up to a tenth slower in wall time, 1 MiB no better. */
#define PRE_BATCH_BYTES ((size_t)262144)

/* 1 when reading the next packet would wait for the socket: none is complete in the
   receive buffer and the socket has nothing to read. */
static int socket_idle(const mc_conn *c) {
    size_t avail = c->rend - c->rpos;
    if (avail >= 4) {
        size_t plen = mc_load_u24(c->rbuf + c->rpos);
        if (plen >= MC_MAX_PACKET || avail >= 4 + plen) return 0;
    }
    struct pollfd pfd;
    pfd.fd = c->fd;
    pfd.events = POLLIN;
    pfd.revents = 0;
    return poll(&pfd, 1, 0) == 0;
}

/* Decode stored rows npre.. ahead (at least one row, up to `bytes` of payload, or all of
   them when bytes is 0) with the live connection's decoder, so that an error is raised as
   the eager path raised it (a malformed value closes the connection).  0 or -1. */
static int decode_ahead(mc_store *s, mc_conn *c, PyObject *keys, size_t bytes) {
    Py_ssize_t want = s->nrows;
    if (want > s->pre_cap) {
        Py_ssize_t ncap = s->pre_cap ? s->pre_cap : 1024;
        while (ncap < want) ncap *= 2;
        PyObject **np = PyMem_Realloc(s->pre, (size_t)ncap * sizeof(PyObject *));
        if (!np) { PyErr_NoMemory(); return -1; }
        s->pre = np;
        s->pre_cap = ncap;
    }
    size_t off = s->pre_off, done = 0;
    while (s->npre < s->nrows) {
        size_t n = load_u32(s->buf + off);
        PyObject *row = mc_conn_decode_row(c, s->buf + off + 4, n, keys);
        if (!row) return -1;
        s->pre[s->npre++] = row;
        off += 4 + n;
        s->pre_off = off;
        done += 4 + n;
        if (bytes && done >= bytes) break;
        /* Ctrl-C while the rest of a large result is decoded: honoured every 64Ki rows
           (the result was read whole: the connection is idle) */
        if ((s->npre & 0xFFFF) == 0 && PyErr_CheckSignals() < 0) return -1;
    }
    return 0;
}

static void drop_ahead(mc_store *s) {
    for (Py_ssize_t i = 0; i < s->npre; i++) Py_XDECREF(s->pre[i]);
    PyMem_Free(s->pre);
    s->pre = NULL;
    s->npre = s->pre_cap = 0;
    s->pre_off = 0;
}

/* The result's shape: a hash (never 0) of its column definitions and names. */
static uint64_t shape_of(const mc_conn *c) {
    uint64_t h = 1469598103934665603ull;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ull)
    MIX(c->binary);
    MIX(c->plan_len);
    for (Py_ssize_t i = 0; i < c->plan_len; i++) {
        const mc_column_plan *p = &c->plan[i];
        MIX(p->type);
        MIX(p->kind);
        MIX(p->flags);
        MIX(p->charset);
        MIX(p->decimals);
        MIX(p->length);
    }
    if (c->column_names) {
        Py_hash_t nh = PyObject_Hash(c->column_names);
        if (nh == -1) PyErr_Clear();
        MIX(nh);
    }
#undef MIX
    return h | 1;
}

/* Was the last Store of this shape read as rows?  For a shape not among the connection's
   recent ones: was its last Store read as rows? */
static int predict_rows(const mc_conn *c, uint64_t shape) {
    for (int i = 0; i < MC_READ_SHAPES; i++)
        if (c->read_shape[i] == shape) return c->read_rows[i];
    return c->rows_mode;
}

/* Store s was read as rows (1) or columns (0). */
static void note_read(mc_store *s, int rows) {
    mc_conn *c = s->owner;
    if (s->noted == rows + 1 && c->rows_mode == rows) return;   /* fetchone() after fetchone() */
    s->noted = rows + 1;
    c->rows_mode = rows;
    for (int i = 0; i < MC_READ_SHAPES; i++)
        if (c->read_shape[i] == s->shape) { c->read_rows[i] = (unsigned char)rows; return; }
    unsigned k = c->read_next++ % MC_READ_SHAPES;
    c->read_shape[k] = s->shape;
    c->read_rows[k] = (unsigned char)rows;
}

/* A new, empty Store for the current result set (the caller has entered; c->plan is the
   result's): NULL with an exception, or NULL without one when the result must be decoded
   at once instead (store_applies).  Its rows are read with mc_store_pull. */
mc_store *mc_store_begin(mc_conn *c, PyObject *keys) {
    if (!c->plan || c->field_count <= 0) {
        mc_raise(c->st->ProgrammingError, 0, "no result set with columns");
        return NULL;
    }
    if (!store_applies(c)) return NULL;
    PyTypeObject *tp = c->st->StoreType;
    mc_store *s = (mc_store *)tp->tp_alloc(tp, 0);
    if (!s) return NULL;
    if (ctx_init(s, c) < 0) { Py_DECREF(s); return NULL; }
    Py_XINCREF(keys);
    s->keys = keys;
    Py_INCREF((PyObject *)c);
    s->owner = c;
    /* decode ahead: this shape's (or the connection's) last Store was read as rows */
    s->shape = shape_of(c);
    s->ahead = predict_rows(c, s->shape);
    return s;
}

/* Keep the result's rows in `s` as their packets come: 1 once the result's end was read
   (the Store is complete and shrunk), MC_NEED when the next row is not complete and no
   wait is allowed (nothing of it consumed; call again after more bytes), -1 with an
   exception (the row decoder's error for a malformed row or, for rows decoded ahead, a
   value that does not parse; an ERR packet; a lost connection).  The caller has entered. */
int mc_store_pull(mc_store *s, mc_conn *c) {
    PyObject *keys = s->keys;
    int ahead = s->ahead;
    int idle_ahead = ahead && c->io == &mc_socket_io && c->fd >= 0;
    while (c->state == ST_ROWS) {
        if (idle_ahead && s->npre < s->nrows && socket_idle(c)) {
            if (decode_ahead(s, c, keys, PRE_BATCH_BYTES) < 0) return -1;
            continue;
        }
        const unsigned char *p;
        size_t n;
        int r = mc_conn_next_row(c, &p, &n);
        if (r == MC_NEED) {
            /* no wait allowed: one step of decoding ahead before the caller waits */
            if (ahead && s->npre < s->nrows && decode_ahead(s, c, keys, PRE_BATCH_BYTES) < 0)
                return -1;
            return MC_NEED;
        }
        if (r < 0) return -1;
        if (r == 0) break;
        if (!ahead && !row_ok(&s->ctx, p, n)) {
            /* the row decoder raises the error this row gives (and closes the connection
               for a malformed one), as fetch() would have */
            PyObject *row = mc_conn_decode_row(c, p, n, NULL);
            if (!row) return -1;
            Py_DECREF(row);   /* decodes after all: keep it */
        }
        if (n > 0xFFFFFFFFu) { mc_conn_malformed(c, "row packet larger than 4 GiB"); return -1; }
        if (store_append(s, p, n) < 0) return -1;
        c->rows_read++;
    }
    if (ahead && s->npre < s->nrows && decode_ahead(s, c, keys, 0) < 0) return -1;
    store_shrink(s);
    s->checked = 1;
    return 1;
}

/* Connection.store(keys=None) -> Store, or None (nothing read) when decoding the rows may
   run Python code: the caller then decodes them with fetch().  The caller holds no guard. */
PyObject *mc_conn_store(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"keys", NULL};
    PyObject *keys = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O", kwlist, &keys)) return NULL;
    if (keys == Py_None) keys = NULL;
    if (keys && (!PyTuple_Check(keys) || PyTuple_GET_SIZE(keys) != c->plan_len)) {
        PyErr_SetString(PyExc_TypeError, "keys must be a tuple with one key per column");
        return NULL;
    }
    if (mc_conn_enter(c) < 0) return NULL;
    mc_store *s = mc_store_begin(c, keys);
    if (!s) {
        mc_conn_leave(c);
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    int r = mc_store_pull(s, c);
    mc_conn_leave(c);
    if (r != 1) {
        if (r == MC_NEED)
            mc_raise(c->st->ProgrammingError, 0, "store() needs a transport (the rows are "
                     "not complete)");
        Py_DECREF(s);
        return NULL;
    }
    return (PyObject *)s;
}

/* ---------------------------------------------------------------- reading */

size_t mc_store_offset(mc_store *s, Py_ssize_t row) {
    Py_ssize_t from;
    size_t off;
    if (row >= s->pos_row && row - s->pos_row < (1 << STORE_INDEX_SHIFT)) {
        from = s->pos_row;
        off = s->pos_off;
    } else {
        from = (row >> STORE_INDEX_SHIFT) << STORE_INDEX_SHIFT;
        off = s->index[(size_t)row >> STORE_INDEX_SHIFT];
    }
    for (; from < row; from++) off += 4 + load_u32(s->buf + off);
    return off;
}

void mc_store_distrust(mc_store *s) {
    mc_conn *c = s->owner;
    if (c->in_use || c->fd < 0) return;   /* busy in another thread, or closed already */
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    if (et && PyErr_GivenExceptionMatches(et, c->st->OperationalError))
        mc_conn_close_socket(c);
    PyErr_Restore(et, ev, tb);
}

/* Rows [start, stop), decoded, as a tuple. */
static PyObject *store_rows(mc_store *s, Py_ssize_t start, Py_ssize_t stop) {
    if (stop < start) stop = start;
    PyObject *out = PyTuple_New(stop - start);
    if (!out || stop == start) return out;
    note_read(s, 1);
    Py_ssize_t i = start;
    /* rows decoded ahead are handed out once (the caller owns them: dicts are mutable) */
    for (; i < stop && i < s->npre && s->pre[i]; i++) {
        PyTuple_SET_ITEM(out, i - start, s->pre[i]);
        s->pre[i] = NULL;
    }
    if (i == stop) {
        if (i == s->npre) { s->pos_row = i; s->pos_off = s->pre_off; }
        return out;
    }
    size_t off = mc_store_offset(s, i);
    for (; i < stop; i++) {
        if (i < s->npre && s->pre[i]) {
            PyTuple_SET_ITEM(out, i - start, s->pre[i]);
            s->pre[i] = NULL;
            off += 4 + load_u32(s->buf + off);
            continue;
        }
        size_t n = load_u32(s->buf + off);
        PyObject *row = mc_conn_decode_row(&s->ctx, s->buf + off + 4, n, s->keys);
        if (!row) { mc_store_distrust(s); Py_DECREF(out); return NULL; }
        PyTuple_SET_ITEM(out, i - start, row);
        off += 4 + n;
        /* Ctrl-C while a large stored result is decoded: honoured every 64Ki rows (the
           store is left as it was; the result was read whole already) */
        if (((i - start) & 0xFFFF) == 0xFFFF && PyErr_CheckSignals() < 0) {
            Py_DECREF(out);
            return NULL;
        }
    }
    s->pos_row = stop;
    s->pos_off = off;
    return out;
}

static PyObject *store_item(mc_store *s, Py_ssize_t i) {
    if (i < 0 || i >= s->nrows) {
        PyErr_SetString(PyExc_IndexError, "row index out of range");
        return NULL;
    }
    note_read(s, 1);
    size_t off = mc_store_offset(s, i);
    size_t n = load_u32(s->buf + off);
    PyObject *row;
    if (i < s->npre && s->pre[i]) {
        row = s->pre[i];
        s->pre[i] = NULL;
    } else {
        row = mc_conn_decode_row(&s->ctx, s->buf + off + 4, n, s->keys);
        if (!row) { mc_store_distrust(s); return NULL; }
    }
    s->pos_row = i + 1;
    s->pos_off = off + 4 + n;
    return row;
}

/* A columnar read: the rows decoded ahead are dropped, and the connection's next results
   are kept as packets only. */
void mc_store_read_as_columns(mc_store *s) {
    note_read(s, 0);
    if (s->pre) drop_ahead(s);
}

/* Connection.prefer_store(): a columnar read of a result decoded in execute() -- store the
   next results. */
PyObject *mc_conn_prefer_store(mc_conn *c, PyObject *noargs) {
    c->rows_mode = 0;
    Py_RETURN_NONE;
}

static Py_ssize_t Store_len(mc_store *s) { return s->nrows; }

static PyObject *Store_subscript(mc_store *s, PyObject *key) {
    if (PySlice_Check(key)) {
        Py_ssize_t start, stop, step;
        if (PySlice_Unpack(key, &start, &stop, &step) < 0) return NULL;
        Py_ssize_t count = PySlice_AdjustIndices(s->nrows, &start, &stop, step);
        if (step == 1) return store_rows(s, start, stop);
        PyObject *out = PyTuple_New(count);
        if (!out) return NULL;
        for (Py_ssize_t k = 0, i = start; k < count; k++, i += step) {
            PyObject *row = store_item(s, i);
            if (!row) { Py_DECREF(out); return NULL; }
            PyTuple_SET_ITEM(out, k, row);
        }
        return out;
    }
    Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0) i += s->nrows;
    return store_item(s, i);
}

static PyObject *Store_sq_item(mc_store *s, Py_ssize_t i) { return store_item(s, i); }

static PyObject *Store_get_nbytes(mc_store *s, void *x) {
    return PyLong_FromSize_t(s->cap + s->index_cap * sizeof(size_t) +
                             (size_t)s->ctx.plan_len * sizeof(mc_column_plan));
}

static void Store_dealloc(mc_store *s) {
    PyTypeObject *tp = Py_TYPE(s);
    if (s->ctx.plan) {
        for (Py_ssize_t i = 0; i < s->ctx.plan_len; i++) mc_plan_clear(&s->ctx.plan[i]);
        PyMem_Free(s->ctx.plan);
    }
    if (s->pre) drop_ahead(s);
    Py_CLEAR(s->ctx.column_names);
    Py_CLEAR(s->keys);
    Py_CLEAR(s->owner);
    store_free_buf(s);
    PyMem_Free(s->index);
    tp->tp_free((PyObject *)s);
    Py_DECREF(tp);
}

static PyMethodDef Store_methods[] = {
    {"fetch_arrow", (PyCFunction)(void (*)(void))mc_store_fetch_arrow, METH_VARARGS | METH_KEYWORDS,
     "fetch_arrow(start, n=-1, decimal='decimal') -> (schema capsule, array capsule, rows):"
     " rows start.. (at most n) as one Arrow record batch, decoded with the GIL released"},
    {"arrow_schema", (PyCFunction)(void (*)(void))mc_store_arrow_schema, METH_VARARGS | METH_KEYWORDS,
     "arrow_schema(decimal='decimal') -> schema capsule of the stored result"},
    {NULL},
};

static PyObject *Store_get_ahead(mc_store *s, void *x) {
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < s->npre; i++) n += s->pre[i] != NULL;
    return PyLong_FromSsize_t(n);
}

static PyGetSetDef Store_getset[] = {
    {"ahead", (getter)Store_get_ahead, NULL,
     "rows decoded ahead in execute() (the connection's previous Store was read as rows)"
     " and not yet handed out; a columnar read drops them", NULL},
    {"nbytes", (getter)Store_get_nbytes, NULL,
     "bytes the store holds: the rows (each payload behind a 4-byte length), the index"
     " and the column plan", NULL},
    {NULL},
};

static PyType_Slot Store_slots[] = {
    {Py_tp_dealloc, Store_dealloc},
    {Py_tp_methods, Store_methods},
    {Py_tp_getset, Store_getset},
    {Py_sq_length, Store_len},
    {Py_sq_item, Store_sq_item},
    {Py_mp_length, Store_len},
    {Py_mp_subscript, Store_subscript},
    {Py_tp_doc, "The row packets of a buffered result, decoded as they are read: a read-only"
                " sequence of rows (see docs/core-api.md)."},
    {0, NULL},
};

static PyType_Spec Store_spec = {
    .name = "mysqlc._core.Store",
    .basicsize = sizeof(mc_store),
#ifdef Py_TPFLAGS_DISALLOW_INSTANTIATION
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
#else
    .flags = Py_TPFLAGS_DEFAULT,
#endif
    .slots = Store_slots,
};

int mc_store_add_type(PyObject *module) {
    mc_state *st = mc_state_from_module(module);
    st->StoreType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &Store_spec, NULL);
    if (!st->StoreType) return -1;
    Py_INCREF(st->StoreType);
    if (PyModule_AddObject(module, "Store", (PyObject *)st->StoreType) < 0) {
        Py_DECREF(st->StoreType);
        return -1;
    }
    return 0;
}
