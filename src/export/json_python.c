/* json_python.c: Python ids and call stacks for the Chrome trace (see
 * json_python.h). Python ids number the PythonOp ranges of a file in the
 * order they are written, from 1, as Kineto numbers them from 1; a range's
 * parent id is that of its nearest PythonOp ancestor on its thread, which
 * the writer's pre-order has always numbered before it. */
#include "json_python.h"

#include "json_escape.h"
#include "json_gpu.h"

#include <string.h>

static int is_python(const sp__event *e)
{
    return e->type == SP_EVENT_PYTHON_OP && !sp__event_is_mark(e);
}

/* The nearest PythonOp ancestor of event j, or -1. */
static int32_t python_parent(const sp__thread *t, size_t j)
{
    int32_t p = t->events[j].parent;
    while (p >= 0 && (size_t)p < j && !is_python(&t->events[p])) p = t->events[p].parent;
    return p >= 0 && (size_t)p < j ? p : -1;
}

int sp__json_py_thread(sp__json_py *p, const sp__thread *t)
{
    p->active = 0;
    for (size_t i = 0; i < t->count && !p->active; i++) p->active = is_python(&t->events[i]);
    if (!p->active || t->count <= p->cap) return 0;
    uint64_t *ids = sp__realloc(p->ids, sizeof *ids * t->count);
    if (!ids) {
        p->active = 0;
        return -1;
    }
    p->ids = ids;
    p->cap = t->count;
    return 0;
}

/* N of "nn.Module: Class_N", or -1. */
static long module_id(const char *name)
{
    static const char prefix[] = "nn.Module: ";
    if (strncmp(name, prefix, sizeof prefix - 1) != 0) return -1;
    const char *u = strrchr(name, '_');
    if (!u || !u[1]) return -1;
    long n = 0;
    for (const char *c = u + 1; *c; c++) {
        if (*c < '0' || *c > '9' || n > 100000000) return -1;
        n = n * 10 + (*c - '0');
    }
    return n;
}

static char *put_text(char *at, const char *text, size_t len)
{
    memcpy(at, text, len);
    return at + len;
}

void sp__json_py_args(sp__json_py *p, sp__buf *b, const sp_result *r, const sp__thread *t,
                      size_t j)
{
    if (!p->active) return;
    static const char id_key[] = "\"Python id\":", parent_key[] = ",\"Python parent id\":",
                      module_key[] = ",\"Python module id\":";
    if (sp__buf_reserve(b, sizeof id_key + sizeof parent_key + sizeof module_key + 3 * 20 + 1))
        return; /* failed is sticky: the file is reported bad */
    char *at = b->data + b->len;
    uint64_t id = p->ids[j] = ++p->next;
    at = put_text(at, id_key, sizeof id_key - 1);
    at = sp__json_u64_at(at, id);
    int32_t parent = python_parent(t, j);
    if (parent >= 0) {
        at = put_text(at, parent_key, sizeof parent_key - 1);
        at = sp__json_u64_at(at, p->ids[parent]);
    }
    long m = module_id(sp__result_name(r, t->events[j].name));
    if (m >= 0) {
        at = put_text(at, module_key, sizeof module_key - 1);
        at = sp__json_u64_at(at, (uint64_t)m);
    }
    *at++ = ',';
    b->len = (size_t)(at - b->data);
}

int sp__json_py_has_stack(const sp__json_py *p, const sp__thread *t, size_t j)
{
    return p->active && python_parent(t, j) >= 0;
}

void sp__json_py_call_stack(sp__buf *b, const sp_result *r, const sp__thread *t, size_t j)
{
    sp__buf s;
    sp__buf_init(&s);
    for (int32_t p = python_parent(t, j); p >= 0; p = python_parent(t, (size_t)p)) {
        sp__buf_puts(&s, sp__result_name(r, t->events[p].name));
        sp__buf_putc(&s, ';');
    }
    sp__buf_puts(b, "\"Call stack\":");
    sp__json_put_string(b, s.data ? s.data : "", s.len);
    sp__buf_putc(b, ',');
    if (s.failed) b->failed = 1;
    sp__buf_fini(&s);
}

void sp__json_py_fini(sp__json_py *p)
{
    sp__free(p->ids);
    p->ids = NULL;
    p->cap = 0;
}
