/* Fuzz harness: a whole client session against a fuzzed server -- the connection phase
 * (HandshakeV10, capability negotiation, authentication replies: OK, ERR,
 * AuthSwitchRequest, AuthMoreData of caching_sha2_password, garbage), the compressed
 * protocol envelope, and one command's response: COM_PING, COM_QUERY (text rows,
 * multi-results), COM_INIT_DB, COM_STMT_PREPARE and COM_STMT_EXECUTE (binary rows,
 * server-side cursor with COM_STMT_FETCH).
 *
 * conn.c reads from its socket, so the harness plays the server on a unix socket: a
 * thread accepts the client's connection and sends the fuzzed packets in order, each
 * after waiting for the client's next packet when the input says so; then it closes its
 * sending side and reads until the client hangs up.  Every call must end in success or
 * an expected error, never a crash or a hang (connect_timeout/read_timeout bound it).
 *
 * Input: a mode byte, then packets as [control u8][length u16 LE][payload].
 *   mode bit 0 password, bit 1 database, bit 2 compress=True,
 *        bits 3-5 command: 0 none, 1 ping, 2 query + fetch + next_result, 3 prepare,
 *        4 prepare + execute + fetch, 5 prepare + execute(cursor) + stmt_fetch,
 *        6 query + fetch as dicts, 7 select_db
 *   control bit 0: wait for the client to send before this packet;
 *           bit 1: sequence id 1 (first packet of a command's response); otherwise the
 *                  id follows the previous one (+2 after a wait: the client used one);
 *           bit 2: raw: send the payload as it is, without a packet header (for
 *                  compressed frames and broken headers).
 * The first packet always has sequence id 0.
 */
#include "common.h"
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int listen_fd = -1;
static char sock_path[108];
static PyObject *param_pool;

typedef struct {
    uint8_t ctl;
    const uint8_t *p;
    size_t n;
} spkt;

typedef struct {
    spkt pk[64];
    int count;
} server_job;

static void drain_once(int fd, int ms) {
    char sink[4096];
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, ms) > 0) (void)recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
}

static void send_all(int fd, const void *p, size_t n) {
    size_t off = 0;
    while (off < n) {
        ssize_t k = send(fd, (const char *)p + off, n - off, MSG_NOSIGNAL);
        if (k <= 0) return;
        off += (size_t)k;
    }
}

static void *server_main(void *arg) {
    server_job *job = arg;
    int fd = accept(listen_fd, NULL, NULL);
    if (fd < 0) return NULL;
    uint8_t seq = 0;
    for (int i = 0; i < job->count; i++) {
        spkt *k = &job->pk[i];
        int waited = 0;
        if (i > 0 && (k->ctl & 1)) { drain_once(fd, 300); waited = 1; }
        if (i > 0) seq = (k->ctl & 2) ? 1 : (uint8_t)(seq + (waited ? 2 : 1));
        if (k->ctl & 4) {
            send_all(fd, k->p, k->n);
        } else {
            unsigned char h[4];
            mc_store_u24(h, (uint32_t)k->n);
            h[3] = seq;
            send_all(fd, h, 4);
            send_all(fd, k->p, k->n);
        }
    }
    shutdown(fd, SHUT_WR);
    char sink[4096];
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0) break;
        if (recv(fd, sink, sizeof(sink), 0) <= 0) break;
    }
    close(fd);
    return NULL;
}

static void cleanup(void) {
    if (sock_path[0]) unlink(sock_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    mc_fuzz_init();
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    snprintf(sock_path, sizeof(sock_path), "/tmp/mysqlc-fuzz-%d.sock", (int)getpid());
    unlink(sock_path);
    strcpy(sa.sun_path, sock_path);
    listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(listen_fd, 4) < 0)
        mcf_die("cannot listen on the unix socket");
    atexit(cleanup);
    param_pool = Py_BuildValue("(iszdyOL)", 7, "text", NULL, 2.5, "by\x00tes", Py_True,
                               (long long)-9000000000LL);
    if (!param_pool) mcf_die("init");
    return 0;
}

static PyObject *call(PyObject *c, const char *name, const char *fmt, ...) {
    PyObject *meth = PyObject_GetAttrString(c, name);
    if (!meth) mcf_die("no such method");
    va_list va;
    va_start(va, fmt);
    PyObject *args = fmt ? Py_VaBuildValue(fmt, va) : PyTuple_New(0);
    va_end(va);
    if (!args) mcf_die("args");
    if (!PyTuple_Check(args)) {
        PyObject *t = PyTuple_Pack(1, args);
        Py_DECREF(args);
        args = t;
    }
    PyObject *r = PyObject_Call(meth, args, NULL);
    Py_DECREF(args);
    Py_DECREF(meth);
    return r;
}

/* fetch until empty or error; `how`: 0 fetch(), 1 fetch(1, keys), 2 stmt_fetch(2) */
static int drain_rows(PyObject *c, int how) {
    for (int guard = 0; guard < 10000; guard++) {
        PyObject *r;
        if (how == 2) {
            r = call(c, "stmt_fetch", "(n)", (Py_ssize_t)2);
        } else if (how == 1) {
            PyObject *keys = PyObject_GetAttrString(c, "column_names");
            if (!keys) mcf_die("column_names");
            r = call(c, "fetch", "(nO)", (Py_ssize_t)1, keys);
            Py_DECREF(keys);
        } else {
            r = call(c, "fetch", NULL);
        }
        if (!mc_fuzz_check(r)) return -1;
        Py_ssize_t got = PyList_GET_SIZE(r);
        Py_DECREF(r);
        if (got == 0 || how == 0) return 0;
    }
    return 0;
}

static void run_command(PyObject *c, int cmd) {
    PyObject *r;
    switch (cmd) {
    case 1:
        r = call(c, "ping", NULL);
        mc_fuzz_check(r);
        Py_XDECREF(r);
        break;
    case 2: case 6:
        r = call(c, "query", "(y)", "SELECT fuzz");
        if (!mc_fuzz_check(r)) break;
        Py_DECREF(r);
        for (int i = 0; i < 16; i++) {
            if (drain_rows(c, cmd == 6 ? 1 : 0) < 0) break;
            r = call(c, "next_result", NULL);
            if (!mc_fuzz_check(r)) break;
            long more = PyLong_AsLong(r);
            Py_DECREF(r);
            if (more < 0) break;
        }
        break;
    case 7:
        r = call(c, "select_db", "(y)", "otherdb");
        mc_fuzz_check(r);
        Py_XDECREF(r);
        break;
    case 3: case 4: case 5: {
        r = call(c, "stmt_prepare", "(y)", "SELECT ?");
        if (!mc_fuzz_check(r)) break;
        if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 3) mcf_die("stmt_prepare result shape");
        unsigned long id = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(r, 0));
        Py_ssize_t np = PyLong_AsSsize_t(PyTuple_GET_ITEM(r, 1));
        Py_DECREF(r);
        if (PyErr_Occurred()) mcf_die("stmt_prepare result values");
        if (cmd == 3) break;
        if (np > 64) np = 64;
        PyObject *params = PyTuple_New(np);
        for (Py_ssize_t i = 0; i < np; i++) {
            PyObject *v = PyTuple_GET_ITEM(param_pool, i % PyTuple_GET_SIZE(param_pool));
            Py_INCREF(v);
            PyTuple_SET_ITEM(params, i, v);
        }
        PyObject *meth = PyObject_GetAttrString(c, "stmt_execute");
        PyObject *args = Py_BuildValue("(kO)", id, params);
        PyObject *kw = Py_BuildValue("{sO}", "cursor", cmd == 5 ? Py_True : Py_False);
        r = PyObject_Call(meth, args, kw);
        Py_DECREF(meth); Py_DECREF(args); Py_DECREF(kw); Py_DECREF(params);
        if (!mc_fuzz_check(r)) break;
        Py_DECREF(r);
        drain_rows(c, cmd == 5 ? 2 : 1);
        r = call(c, "stmt_close", "(k)", id);
        mc_fuzz_check(r);
        Py_XDECREF(r);
        break;
    }
    default:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mcf_in in = {data, size};
    if (size < 4) return 0;
    uint8_t mode = mcf_u8(&in);
    server_job job;
    job.count = 0;
    while (in.n >= 3 && job.count < 64) {
        spkt *k = &job.pk[job.count++];
        k->ctl = mcf_u8(&in);
        k->n = mcf_u16(&in);
        k->p = mcf_take(&in, &k->n);
    }
    pthread_t th;
    if (pthread_create(&th, NULL, server_main, &job) != 0) mcf_die("pthread_create");
    PyObject *c = PyObject_CallNoArgs(mcf_Connection);
    if (!c) mcf_die("Connection()");
    PyObject *kw = Py_BuildValue("{sssysysdsdsO}", "unix_socket", sock_path, "user", "fuzz",
                                 "password", (mode & 1) ? "secret" : "", "connect_timeout", 5.0,
                                 "read_timeout", 5.0, "compress", (mode & 4) ? Py_True : Py_False);
    if (!kw) mcf_die("kwargs");
    if (mode & 2) {
        PyObject *db = PyBytes_FromString("db");
        if (!db || PyDict_SetItemString(kw, "database", db) < 0) mcf_die("kwargs");
        Py_DECREF(db);
    }
    PyObject *meth = PyObject_GetAttrString(c, "connect");
    PyObject *args = PyTuple_New(0);
    PyObject *r = PyObject_Call(meth, args, kw);
    int ok = mc_fuzz_check(r);
    Py_XDECREF(r);
    Py_DECREF(meth);
    Py_DECREF(args);
    Py_DECREF(kw);
    const char *attrs[] = {"server_version", "auth_plugin_name", "server_capabilities",
                           "client_flag", "thread_id", "server_status", "open", NULL};
    for (int i = 0; attrs[i]; i++) {
        PyObject *v = PyObject_GetAttrString(c, attrs[i]);
        if (!mc_fuzz_check(v)) mcf_die("attribute getter failed");
        Py_DECREF(v);
    }
    if (ok) run_command(c, (mode >> 3) & 7);
    r = call(c, "close", NULL);
    mc_fuzz_check(r);
    Py_XDECREF(r);
    Py_DECREF(c);
    pthread_join(th, NULL);
    return 0;
}
