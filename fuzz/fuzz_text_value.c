/* Fuzz harness: text-protocol value decoders (src/decode_text.c), differentially.
 *
 * Each input is one value of one column: the plan comes from mc_plan_column() for the
 * fuzzed (type, flags, charset) and mc_decode_text_value() decodes the bytes.  Besides
 * ASan/UBSan, the result is compared with a slow reference written in Python below
 * (int(), float(), Decimal(), a regex for dates and times, the codec for strings):
 * a value the decoder accepts must be exactly the reference's, and where the
 * reference accepts a well-formed value the decoder must not give None.
 *
 * Input: type (1 byte), flags (2), charset (2), then the value's bytes.
 */
#include "common.h"

static PyObject *check_fn;

static const char reference_py[] =
"import datetime, decimal, math, re\n"
"_DATE = re.compile(rb'(\\d{4})-(\\d{2})-(\\d{2})\\Z')\n"
"_DT = re.compile(rb'(\\d{4})-(\\d{2})-(\\d{2})[ T](\\d{2}):(\\d{2}):(\\d{2})(?:\\.(\\d{1,6}))?\\Z')\n"
"_TIME = re.compile(rb'(-?)(\\d{1,9}):(\\d{2}):(\\d{2})(?:\\.(\\d{1,6}))?\\Z')\n"
"def _latin1(b):\n"
"    return ''.join(chr(x) if x in (0x81, 0x8d, 0x8f, 0x90, 0x9d) else bytes([x]).decode('cp1252') for x in b)\n"
"def _us(f):\n"
"    return int((f or b'').ljust(6, b'0')) if f else 0\n"
"def ref(kind, codec, b):\n"
"    # kinds: mc_dec_kind in src/mysqlc.h\n"
"    if kind == 0: return b\n"
"    if kind == 1: return b.decode('utf-8')\n"
"    if kind == 2: return _latin1(b)\n"
"    if kind == 3: return b.decode('ascii')\n"
"    if kind == 4: return b.decode(codec)\n"
"    if kind in (5, 6): return int(b.decode('ascii'))\n"
"    if kind == 7: return float(b.decode('ascii'))\n"
"    if kind == 8: return decimal.Decimal(b.decode('ascii'))\n"
"    if kind == 9:\n"
"        m = _DATE.match(b)\n"
"        if not m: return None\n"
"        try: return datetime.date(*map(int, m.groups()))\n"
"        except ValueError: return None\n"
"    if kind == 10:\n"
"        if len(b) == 10:\n"
"            d = ref(9, codec, b)\n"
"            return None if d is None else datetime.datetime(d.year, d.month, d.day)\n"
"        m = _DT.match(b)\n"
"        if not m: return None\n"
"        g = m.groups()\n"
"        try: return datetime.datetime(*map(int, g[:6]), _us(g[6]))\n"
"        except ValueError: return None\n"
"    if kind == 11:\n"
"        m = _TIME.match(b)\n"
"        if not m: return None\n"
"        sign, h, mi, s, f = m.groups()\n"
"        h, mi, s = int(h), int(mi), int(s)\n"
"        if mi > 59 or s > 59: return None\n"
"        td = datetime.timedelta(hours=h, minutes=mi, seconds=s, microseconds=_us(f))\n"
"        return -td if sign else td\n"
"    raise AssertionError('kind %d' % kind)\n"
"def same(a, b):\n"
"    if type(a) is not type(b): return False\n"
"    if isinstance(a, float) and math.isnan(a): return math.isnan(b)\n"
"    if isinstance(a, decimal.Decimal): return str(a) == str(b)\n"
"    return a == b\n"
"def check(kind, codec, b, got, got_exc):\n"
"    try:\n"
"        want = ref(kind, codec, b); want_exc = None\n"
"    except (ValueError, ArithmeticError) as e:\n"
"        want = None; want_exc = e\n"
"    if got_exc is not None:\n"
"        if want_exc is None and kind not in (4,):\n"
"            raise AssertionError('decoder raised %r for %r (kind %d); reference gives %r' % (got_exc, b, kind, want))\n"
"        return\n"
"    if want_exc is not None:\n"
"        raise AssertionError('decoder gave %r for %r (kind %d); reference raises %r' % (got, b, kind, want_exc))\n"
"    if not same(got, want):\n"
"        raise AssertionError('decoder gave %r for %r (kind %d); reference gives %r' % (got, b, kind, want))\n";

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    mc_fuzz_init();
    PyObject *g = PyDict_New();
    if (!g || PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) < 0) mcf_die("init");
    PyObject *r = PyRun_String(reference_py, Py_file_input, g, g);
    if (!r) mcf_die("reference code");
    Py_DECREF(r);
    check_fn = PyDict_GetItemString(g, "check");
    Py_XINCREF(check_fn);
    if (!check_fn) mcf_die("no check()");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mcf_in in = {data, size};
    if (size < 5) return 0;
    uint8_t type = mcf_u8(&in);
    uint16_t flags = mcf_u16(&in);
    uint16_t charset = mcf_u16(&in);
    mc_column_plan plan;
    if (mc_plan_column(mcf_state, &plan, type, flags, charset, NULL) < 0) mcf_die("plan");
    /* decode from a copy of exactly the value's size, so that ASan sees any overread */
    unsigned char *val = malloc(in.n ? in.n : 1);
    memcpy(val, in.p, in.n);
    PyObject *got = mc_decode_text_value(mcf_state, &plan, val, in.n);
    PyObject *got_exc = NULL;
    if (!got) {
        if (!PyErr_Occurred()) mcf_die("NULL without an exception");
        if (!PyErr_ExceptionMatches(PyExc_ValueError) && !PyErr_ExceptionMatches(PyExc_ArithmeticError))
            mcf_die("unexpected exception class");
        PyObject *t, *tb;
        PyErr_Fetch(&t, &got_exc, &tb);
        PyErr_NormalizeException(&t, &got_exc, &tb);
        Py_XDECREF(t);
        Py_XDECREF(tb);
    } else if (PyErr_Occurred()) {
        mcf_die("a value was returned with an exception set");
    }
    PyObject *r = PyObject_CallFunction(check_fn, "isy#OO", (int)plan.kind,
                                        plan.codec ? plan.codec : "utf-8",
                                        (const char *)val, (Py_ssize_t)in.n,
                                        got ? got : Py_None, got_exc ? got_exc : Py_None);
    if (!r) mcf_die("decoder and reference disagree");
    Py_DECREF(r);
    Py_XDECREF(got);
    Py_XDECREF(got_exc);
    mc_plan_clear(&plan);
    free(val);
    return 0;
}
