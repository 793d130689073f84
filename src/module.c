/* mysqlc._core module: multi-phase init, module state, shared helpers. */
#include "mysqlc.h"
#include "infile_encode.h"
#include <stdarg.h>

static PyModuleDef mc_module_def;

mc_state *mc_state_from_module(PyObject *module) {
    return (mc_state *)PyModule_GetState(module);
}

mc_state *mc_state_from_type(PyTypeObject *tp) {
#if PY_VERSION_HEX >= 0x030B0000
    PyObject *m = PyType_GetModuleByDef(tp, &mc_module_def);
#else
    PyObject *m = PyType_GetModule(tp); /* our types are not subclassable */
#endif
    if (!m) return NULL;
    return (mc_state *)PyModule_GetState(m);
}

PyObject *mc_raise(PyObject *cls, int errnum, const char *fmt, ...) {
    va_list va;
    va_start(va, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, va);
    va_end(va);
    if (!msg) return NULL;
    PyObject *exc = PyObject_CallFunction(cls, "iO", errnum, msg);
    Py_DECREF(msg);
    if (!exc) return NULL;
    /* a client-side error: the generic SQLSTATE, as libmysqlclient's mysql_sqlstate() */
    PyObject *state = PyUnicode_FromString("HY000");
    if (!state || PyObject_SetAttrString(exc, "sqlstate", state) < 0) PyErr_Clear();
    Py_XDECREF(state);
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return NULL;
}

static int fetch_attr(PyObject *mod, const char *name, PyObject **slot) {
    *slot = PyObject_GetAttrString(mod, name);
    return *slot ? 0 : -1;
}

static int mc_exec(PyObject *module) {
    mc_state *st = mc_state_from_module(module);
    PyObject *errors = PyImport_ImportModule("mysqlc.errors");
    if (!errors) return -1;
    int rc = -1;
    if (fetch_attr(errors, "Warning", &st->Warning) < 0 ||
        fetch_attr(errors, "Error", &st->Error) < 0 ||
        fetch_attr(errors, "InterfaceError", &st->InterfaceError) < 0 ||
        fetch_attr(errors, "DatabaseError", &st->DatabaseError) < 0 ||
        fetch_attr(errors, "DataError", &st->DataError) < 0 ||
        fetch_attr(errors, "OperationalError", &st->OperationalError) < 0 ||
        fetch_attr(errors, "IntegrityError", &st->IntegrityError) < 0 ||
        fetch_attr(errors, "InternalError", &st->InternalError) < 0 ||
        fetch_attr(errors, "ProgrammingError", &st->ProgrammingError) < 0 ||
        fetch_attr(errors, "NotSupportedError", &st->NotSupportedError) < 0 ||
        fetch_attr(errors, "_error_class", &st->error_class_for) < 0)
        goto done;
    PyObject *cs = PyImport_ImportModule("mysqlc._charsets");
    if (!cs) goto done;
    st->collation_codecs = PyObject_GetAttrString(cs, "COLLATION_CODECS");
    Py_DECREF(cs);
    if (!st->collation_codecs) goto done;
    if (!PyDict_Check(st->collation_codecs)) {
        PyErr_SetString(PyExc_TypeError, "mysqlc._charsets.COLLATION_CODECS must be a dict");
        goto done;
    }
    PyObject *dec = PyImport_ImportModule("decimal");
    if (!dec) goto done;
    st->Decimal = PyObject_GetAttrString(dec, "Decimal");
    Py_DECREF(dec);
    if (!st->Decimal) goto done;
    st->empty_str = PyUnicode_FromStringAndSize(NULL, 0);
    st->empty_bytes = PyBytes_FromStringAndSize(NULL, 0);
    if (!st->empty_str || !st->empty_bytes) goto done;
    if (mc_decode_init() < 0) goto done;
    if (PyModule_AddFunctions(module, mc_encode_methods) < 0) goto done;
    if (PyModule_AddFunctions(module, mc_infile_methods) < 0) goto done;
    if (mc_conn_add_type(module) < 0) goto done;
    if (mc_store_add_type(module) < 0) goto done;
    if (mc_aio_stream_add_type(module) < 0) goto done;
    if (mc_aio_call_add_type(module) < 0) goto done;
    if (mc_aio_pool_add_types(module) < 0) goto done;
    rc = 0;
done:
    Py_DECREF(errors);
    return rc;
}

static int mc_traverse(PyObject *module, visitproc visit, void *arg) {
    mc_state *st = mc_state_from_module(module);
    if (!st) return 0;
    Py_VISIT(st->Warning); Py_VISIT(st->Error); Py_VISIT(st->InterfaceError);
    Py_VISIT(st->DatabaseError); Py_VISIT(st->DataError); Py_VISIT(st->OperationalError);
    Py_VISIT(st->IntegrityError); Py_VISIT(st->InternalError); Py_VISIT(st->ProgrammingError);
    Py_VISIT(st->NotSupportedError); Py_VISIT(st->error_class_for); Py_VISIT(st->collation_codecs);
    Py_VISIT(st->Decimal); Py_VISIT(st->empty_str); Py_VISIT(st->empty_bytes);
    Py_VISIT(st->ConnectionType); Py_VISIT(st->param_adapter);
    Py_VISIT(st->StoreType); Py_VISIT(st->AioStreamType); Py_VISIT(st->AioWaiterType);
    Py_VISIT(st->AioCallType); Py_VISIT(st->aio_names); Py_VISIT(st->aio_env);
    Py_VISIT(st->ReadyType); Py_VISIT(st->PoolBaseType); Py_VISIT(st->PoolAcquireType);
    Py_VISIT(st->AioCursorBaseType); Py_VISIT(st->AioConnBaseType); Py_VISIT(st->PoolEnterType); Py_VISIT(st->ready_none); Py_VISIT(st->pool_names);
    Py_VISIT(st->pool_env);
    Py_VISIT(st->s_done); Py_VISIT(st->s_set_result); Py_VISIT(st->s_is_closing);
    Py_VISIT(st->s_loop_kw); Py_VISIT(st->s_write_buffer_size);
    Py_VISIT(st->ssl_MemoryBIO); Py_VISIT(st->ssl_WantRead); Py_VISIT(st->ssl_ZeroReturn);
    Py_VISIT(st->ssl_CertVerify); Py_VISIT(st->ssl_Error);
    return 0;
}

static int mc_clear(PyObject *module) {
    mc_state *st = mc_state_from_module(module);
    if (!st) return 0;
    Py_CLEAR(st->Warning); Py_CLEAR(st->Error); Py_CLEAR(st->InterfaceError);
    Py_CLEAR(st->DatabaseError); Py_CLEAR(st->DataError); Py_CLEAR(st->OperationalError);
    Py_CLEAR(st->IntegrityError); Py_CLEAR(st->InternalError); Py_CLEAR(st->ProgrammingError);
    Py_CLEAR(st->NotSupportedError); Py_CLEAR(st->error_class_for); Py_CLEAR(st->collation_codecs);
    Py_CLEAR(st->Decimal); Py_CLEAR(st->empty_str); Py_CLEAR(st->empty_bytes);
    Py_CLEAR(st->ConnectionType); Py_CLEAR(st->param_adapter);
    Py_CLEAR(st->StoreType); Py_CLEAR(st->AioStreamType); Py_CLEAR(st->AioWaiterType);
    Py_CLEAR(st->AioCallType); Py_CLEAR(st->aio_names); Py_CLEAR(st->aio_env);
    Py_CLEAR(st->ReadyType); Py_CLEAR(st->PoolBaseType); Py_CLEAR(st->PoolAcquireType);
    Py_CLEAR(st->AioCursorBaseType); Py_CLEAR(st->AioConnBaseType); Py_CLEAR(st->PoolEnterType); Py_CLEAR(st->ready_none); Py_CLEAR(st->pool_names);
    Py_CLEAR(st->pool_env);
    Py_CLEAR(st->s_done); Py_CLEAR(st->s_set_result); Py_CLEAR(st->s_is_closing);
    Py_CLEAR(st->s_loop_kw); Py_CLEAR(st->s_write_buffer_size);
    Py_CLEAR(st->ssl_MemoryBIO); Py_CLEAR(st->ssl_WantRead); Py_CLEAR(st->ssl_ZeroReturn);
    Py_CLEAR(st->ssl_CertVerify); Py_CLEAR(st->ssl_Error);
    return 0;
}

static void mc_free(void *module) { mc_clear((PyObject *)module); }

static PyModuleDef_Slot mc_slots[] = {
    {Py_mod_exec, mc_exec},
    {0, NULL},
};

static PyModuleDef mc_module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "mysqlc._core",
    .m_doc = "C core of mysqlc: MySQL client/server protocol, decoding and encoding.",
    .m_size = sizeof(mc_state),
    .m_slots = mc_slots,
    .m_traverse = mc_traverse,
    .m_clear = mc_clear,
    .m_free = mc_free,
};

PyMODINIT_FUNC PyInit__core(void) { return PyModuleDef_Init(&mc_module_def); }
