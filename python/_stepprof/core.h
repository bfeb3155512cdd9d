/* core.h: what the files of stepprof._core share. The extension wraps the
 * public C API (stepprof.h), one internal pair (load_timer.c, says why), the
 * environment's sp__env_discard (module.c, says why) and the loader of
 * paddle's .pb (paddle_pb.c, says why);
 * each .c file holds one Python type or one group of functions, and the
 * module file (module.c) registers them.
 *
 * GIL rule of the whole extension: every C callback that may reach Python
 * (scheduler, on_trace_ready, log, report, handler release) takes the GIL
 * with PyGILState_Ensure, and every C call that can block or take long and
 * never needs Python itself runs with the GIL released. Library threads that
 * are not Python threads (the trace writer) never enter Python at all. */
#ifndef STEPPROF_PY_CORE_H
#define STEPPROF_PY_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stepprof/stepprof.h>

extern PyTypeObject SpxRecordEvent_Type;
extern PyTypeObject SpxScheduler_Type;
extern PyTypeObject SpxProfiler_Type;
extern PyTypeObject SpxResult_Type;

/* A scheduler value (make_scheduler, the (start, end) tuple, schedule()). */
typedef struct {
    PyObject_HEAD
    sp_scheduler sched;
} SpxScheduler;

/* Raises the Python exception for a failed call, with sp_last_error()'s text
 * (the calling thread's message, so call it on the thread that failed).
 * Returns NULL so callers can `return spx_raise(s);`. */
PyObject *spx_raise(sp_status status);

/* Writes text to sys.stdout or sys.stderr (stream "stdout" / "stderr"), so
 * that redirections and pytest's capture see it; drops it when the stream is
 * None (as print() does), and falls back to the C stream only when Python's
 * is missing or its write fails. Keeps any exception already set. Needs the
 * GIL. */
void spx_write(const char *stream, const char *text, size_t len);

/* stepprof._core.StepprofWarning, a UserWarning: the category of every
 * warning the package gives, so warnings.filterwarnings can silence them. */
extern PyObject *spx_warning_type;

/* Issues message as a StepprofWarning through Python's warnings module
 * (attributed to the calling Python frame). Returns 0, or -1 with an
 * exception set when a filter turned the warning into an error. Needs the
 * GIL. */
int spx_warn(const char *message);

/* obj as stepprof's member when it is paddle's member of the enum named
 * class_name ("SortedKeys", ...: stepprof._enums.foreign_value), else obj
 * itself; a new reference, or NULL with an exception (a paddle member that
 * stepprof lacks). Ints come back at once. Needs the GIL. */
PyObject *spx_enum_int(PyObject *obj, const char *class_name);

/* Moves the current exception into *slot (the first one wins); a later one
 * is reported with PyErr_WriteUnraisable, never dropped. Needs the GIL. */
void spx_stash_exception(PyObject **slot, PyObject *context);

/* Re-raises the exception stashed in *slot, clearing the slot. Returns 1 if
 * one was raised. Needs the GIL. */
int spx_raise_stashed(PyObject **slot);

/* Wraps a result for Python, retaining it. NULL result gives None. */
PyObject *spx_result_wrap(const sp_result *result);

/* Fills summary options from Python values (sorted_by, op_detail, thread_sep,
 * time_unit, views); time_unit must stay alive while opts is used. Returns 0,
 * or -1 with ValueError/TypeError set. */
int spx_summary_options(sp_summary_options *opts, PyObject *sorted_by, int op_detail,
                        int thread_sep, const char *time_unit, PyObject *views);

/* record_event_interleaved(): how many RecordEvent ends closed ranges
 * begun inside them that were still open (record_event.c). */
PyObject *spx_record_event_interleaved(PyObject *mod, PyObject *unused);

/* Converts a path-like object to bytes for C (caller decrefs *out_obj). */
int spx_path(PyObject *arg, PyObject **out_obj);

/* Runs fn(out) with out an in-memory FILE, then returns what was written as
 * a Python str. fn returns an sp_status; failure raises. */
PyObject *spx_capture(sp_status (*fn)(FILE *out, void *ctx), void *ctx);

/* _reader_load_begin(reader_id) / _reader_load_end(): a load timed for the
 * benchmark timer without an event (load_timer.c). */
PyObject *spx_reader_load_begin(PyObject *mod, PyObject *arg);
PyObject *spx_reader_load_end(PyObject *mod, PyObject *unused);
/* main_watch.c: `stepprof run --step-fn __main__:NAME`. */
PyObject *spx_watch_main(PyObject *mod, PyObject *args);
PyObject *spx_watching(PyObject *mod, PyObject *unused);

/* _pytrace_start(mode, prefixes, own_prefix, module_code) and
 * _pytrace_stop(): the Python tracer of with_stack / with_modules
 * (pytrace.c). */
PyObject *spx_pytrace_start(PyObject *mod, PyObject *args);
PyObject *spx_pytrace_stop(PyObject *mod, PyObject *unused);

#endif
