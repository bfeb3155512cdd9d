/* util.c: helpers every file of stepprof._core uses: status -> exception,
 * writing to Python's sys.stdout / sys.stderr, warnings through Python's
 * warnings module (StepprofWarning), stashing an exception raised
 * inside a C callback until the Python call that triggered it returns, and
 * capturing a C report written to a FILE * as a Python str. */
#include "core.h" /* Python.h defines _GNU_SOURCE: open_memstream */

#include <stdio.h>
#include <stdlib.h>

PyObject *spx_raise(sp_status status)
{
    const char *msg = sp_last_error();
    if (!msg || !*msg) msg = sp_status_str(status);
    PyObject *type;
    switch (status) {
    case SP_EINVAL: type = PyExc_ValueError; break;
    case SP_ENOMEM: type = PyExc_MemoryError; break;
    case SP_EIO: type = PyExc_OSError; break;
    case SP_EFORMAT: type = PyExc_ValueError; break;
    case SP_ENOTSUP: type = PyExc_NotImplementedError; break;
    default: type = PyExc_RuntimeError; break;
    }
    PyErr_SetString(type, msg);
    return NULL;
}

/* Python 3.12 replaced PyErr_Fetch/Restore; both spellings keep one object. */
static PyObject *take_exception(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (!type) return NULL;
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb) PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value;
#endif
}

static void give_exception(PyObject *exc)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(exc);
#else
    if (!exc) return;
    PyObject *type = (PyObject *)Py_TYPE(exc);
    Py_INCREF(type);
    PyErr_Restore(type, exc, PyException_GetTraceback(exc));
#endif
}

void spx_write(const char *stream, const char *text, size_t len)
{
    PyObject *saved = take_exception();
    PyObject *file = PySys_GetObject(stream); /* borrowed */
    int done = 0;
    if (file == Py_None) {
        /* No stream (pythonw, a daemon): dropped, as print() drops it; the
         * C stream may be a closed descriptor or someone else's file. */
        give_exception(saved);
        return;
    }
    if (file) {
        PyObject *s = PyUnicode_DecodeUTF8(text, (Py_ssize_t)len, "replace");
        PyObject *r = s ? PyObject_CallMethod(file, "write", "O", s) : NULL;
        Py_XDECREF(s);
        done = r != NULL;
        Py_XDECREF(r);
        if (done) {
            r = PyObject_CallMethod(file, "flush", NULL);
            Py_XDECREF(r);
        }
        PyErr_Clear();
    }
    if (!done) {
        FILE *f = stream[3] == 'e' ? stderr : stdout; /* "stderr" vs "stdout" */
        fwrite(text, 1, len, f);
        fflush(f);
    }
    give_exception(saved);
}

PyObject *spx_warning_type;

int spx_warn(const char *message)
{
    return PyErr_WarnEx(spx_warning_type ? spx_warning_type : PyExc_UserWarning, message, 1);
}

PyObject *spx_enum_int(PyObject *obj, const char *class_name)
{
    if (PyLong_Check(obj)) {
        Py_INCREF(obj);
        return obj;
    }
    PyObject *mod = PyImport_ImportModule("stepprof._enums");
    if (!mod) return NULL;
    PyObject *got = PyObject_CallMethod(mod, "foreign_value", "Os", obj, class_name);
    Py_DECREF(mod);
    if (got == Py_None) {
        Py_DECREF(got);
        Py_INCREF(obj);
        return obj;
    }
    return got;
}

void spx_stash_exception(PyObject **slot, PyObject *context)
{
    if (!PyErr_Occurred()) return;
    if (*slot) {
        PyErr_WriteUnraisable(context);
        return;
    }
    *slot = take_exception();
}

int spx_raise_stashed(PyObject **slot)
{
    PyObject *exc = *slot;
    if (!exc) return 0;
    *slot = NULL;
    give_exception(exc);
    return 1;
}

int spx_path(PyObject *arg, PyObject **out_obj)
{
    *out_obj = NULL;
    if (!PyUnicode_FSConverter(arg, out_obj)) return -1;
    return 0;
}

PyObject *spx_capture(sp_status (*fn)(FILE *out, void *ctx), void *ctx)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f) return PyErr_NoMemory();
    sp_status s;
    Py_BEGIN_ALLOW_THREADS
    s = fn(f, ctx);
    Py_END_ALLOW_THREADS
    int closed = fclose(f);
    PyObject *text = NULL;
    if (s != SP_OK)
        spx_raise(s);
    else if (closed != 0 || !buf)
        PyErr_NoMemory();
    else
        text = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)size, "replace");
    free(buf);
    return text;
}
