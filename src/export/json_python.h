/* json_python.h: the args of Python-call ranges (PythonOp, written with cat
 * python_function) and the "Call stack" of the operators inside them, as
 * Kineto writes them and the TensorBoard plugin's Module view and Operator
 * view read them (trace-format.md §6, "python_function"). */
#ifndef SP_JSON_PYTHON_H
#define SP_JSON_PYTHON_H

#include "collect.h"
#include "sys.h"

#include <stdint.h>

typedef struct sp__json_py {
    uint64_t *ids;   /* event index -> its Python id (PythonOp events only) */
    size_t cap;
    uint64_t next;   /* the last id given, over all threads of the file */
    int active;      /* the thread being written has PythonOp events */
} sp__json_py;

/* Prepares for thread t (called before its events are written, in order).
 * Returns 0, or -1 when out of memory (its Python args are then left out). */
int sp__json_py_thread(sp__json_py *p, const sp__thread *t);

/* Writes `"Python id":N,"Python parent id":P,"Python module id":M,` for
 * PythonOp event j of t (parent: the nearest PythonOp ancestor; module id:
 * the N of "nn.Module: Class_N"). Events must come in index order. */
void sp__json_py_args(sp__json_py *p, sp__buf *b, const sp_result *r, const sp__thread *t,
                      size_t j);

/* Whether event j of t lies inside a PythonOp range. */
int sp__json_py_has_stack(const sp__json_py *p, const sp__thread *t, size_t j);

/* Writes `"Call stack":"inner;...;outer;",` for event j: the names of its
 * PythonOp ancestors, innermost first, each followed by ';'. */
void sp__json_py_call_stack(sp__buf *b, const sp_result *r, const sp__thread *t, size_t j);

void sp__json_py_fini(sp__json_py *p);

#endif
