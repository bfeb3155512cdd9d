/* load_timer.c: stepprof._core._reader_load_begin / _reader_load_end, the
 * benchmark timer's call-timed loads (src/record/reader.h) for the hook that
 * paddle's DataLoader calls around each batch (stepprof/_paddle_reader.py).
 * They reach past the public API on purpose: the extension compiles the
 * core in, and a load timed this way records no event, which no public call
 * offers (paddle's own tracer records the batch's Dataloader event). */
#include "core.h"
#include "reader.h"

PyObject *spx_reader_load_begin(PyObject *mod, PyObject *arg)
{
    (void)mod;
    /* The id only has to tell loaders apart: any int, wrapped to 64 bits. */
    unsigned long long id = PyLong_AsUnsignedLongLongMask(arg);
    if (id == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    sp__reader_load_begin((uint64_t)id);
    Py_RETURN_NONE;
}

PyObject *spx_reader_load_end(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    sp__reader_load_end();
    Py_RETURN_NONE;
}
