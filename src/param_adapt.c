/* Parameters of the types the encoders have no exact-type rule for.
 *
 * The three parameter encoders (encode.c: SQL literals; binary.c: COM_STMT_EXECUTE and
 * COM_STMT_BULK_EXECUTE values; infile_encode.c: load_table's LOAD DATA text) handle the
 * builtin types themselves, on their fast paths.  What is left -- NumPy scalars,
 * uuid.UUID, time.struct_time, sets (in the binary and LOAD DATA encoders), objects with
 * __index__ -- goes through one Python function, mysqlc.converters._adapt_param, which
 * returns a value of a builtin type (or NotImplemented), so that every write path stores
 * the same value for the same parameter.
 *
 * pandas.NaT is a datetime.datetime subclass whose C fields read 0001-01-01 00:00:00:
 * mc_param_is_nat() tells it apart, and every encoder writes it as NULL (what
 * load_table(DataFrame) and DataFrame.to_sql store).
 */
#include "mysqlc.h"
#include <datetime.h>

static int ensure_datetime_api(void) {
    if (PyDateTimeAPI == NULL) {
        PyDateTime_IMPORT;
        if (PyDateTimeAPI == NULL) return -1;
    }
    return 0;
}

/* 1 when v is pandas.NaT (or a look-alike: a datetime subclass named NaTType whose
   fields read 0001-01-01 00:00:00.000000), else 0.  Never fails. */
int mc_param_is_nat(PyObject *v) {
    if (ensure_datetime_api() < 0) {
        PyErr_Clear();
        return 0;
    }
    if (!PyDateTime_Check(v) || PyDateTime_CheckExact(v)) return 0;
    if (PyDateTime_GET_YEAR(v) != 1 || PyDateTime_GET_MONTH(v) != 1 ||
        PyDateTime_GET_DAY(v) != 1 || PyDateTime_DATE_GET_HOUR(v) != 0 ||
        PyDateTime_DATE_GET_MINUTE(v) != 0 || PyDateTime_DATE_GET_SECOND(v) != 0 ||
        PyDateTime_DATE_GET_MICROSECOND(v) != 0)
        return 0;
    const char *name = Py_TYPE(v)->tp_name;
    const char *dot = strrchr(name, '.');
    return strcmp(dot ? dot + 1 : name, "NaTType") == 0;
}

/* mysqlc.converters._adapt_param(v): a new reference to the value to encode instead
   of v (Py_NotImplemented when there is none), or NULL with the adapter's exception. */
PyObject *mc_param_adapt(mc_state *st, PyObject *v) {
    if (st->param_adapter == NULL) {
        PyObject *mod = PyImport_ImportModule("mysqlc.converters");
        if (!mod) return NULL;
        st->param_adapter = PyObject_GetAttrString(mod, "_adapt_param");
        Py_DECREF(mod);
        if (!st->param_adapter) return NULL;
    }
    return PyObject_CallOneArg(st->param_adapter, v);
}
