/* paddle_pb.c: Profiler._add_paddle_pb, the fast hand-over of paddle's host
 * events to a span (stepprof/_paddle_capture.py). paddle serialises its
 * event tree in C++ (_ProfilerResult.save(path, "pb")) into a file the
 * caller owns; this reads it with the core's own loader of paddle's .pb
 * (src/load/load_pb.c, reached past the public API on purpose: the
 * extension compiles the core in), its host and memory events sent to this
 * file raw (sp__pb_sink), and gives them to the span through the public
 * sp_profiler_add_events / sp_profiler_add_memory_events, as the tree walk
 * in Python does, without a pybind11 call per node. */
#include "paddle_pb.h"

#include "load.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The events the loader finds, kept until the whole file has been read, so
 * that a file that turns out bad adds nothing. Names and places are copied
 * into one arena (the loader's strings live only during its callback);
 * name holds an offset into it until hand_over. */
typedef struct collected {
    const uint8_t *event_map, *mem_map;
    size_t event_count, mem_count;
    sp_external_event *events;
    size_t n_events, cap_events;
    sp_external_mem_event *mems;
    size_t n_mems, cap_mems;
    sp__buf text;
    int failed;
} collected;

static int grow(void **items, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return 0;
    size_t want = *cap ? *cap * 2 : 4096;
    void *p = PyMem_RawRealloc(*items, want * size);
    if (!p) return -1;
    *items = p;
    *cap = want;
    return 0;
}

static size_t keep_text(collected *c, const char *s, size_t *len)
{
    *len = strlen(s);
    size_t at = c->text.len;
    sp__buf_append(&c->text, s, *len);
    if (c->text.failed) c->failed = 1;
    return at;
}

static void on_event(void *user, uint64_t tid, uint32_t type, const char *name, int64_t start_ns,
                     int64_t end_ns)
{
    collected *c = user;
    unsigned t = type < c->event_count ? c->event_map[type] : SP_EVENT_USER_DEFINED;
    if (t == SP_EVENT_PROFILE_STEP) return; /* the profiler records its own steps */
    if (t >= SP_EVENT_TYPE_COUNT) t = SP_EVENT_USER_DEFINED;
    if (c->failed || grow((void **)&c->events, &c->cap_events, c->n_events, sizeof *c->events)) {
        c->failed = 1;
        return;
    }
    sp_external_event *e = &c->events[c->n_events++];
    e->tid = tid;
    e->type = (sp_event_type)t;
    e->name = (const char *)(uintptr_t)keep_text(c, name, &e->name_len);
    e->start_ns = start_ns;
    e->end_ns = end_ns;
}

static void on_mem(void *user, uint64_t tid, uint32_t type, const char *place, int64_t ts_ns,
                   const sp_mem_info *info)
{
    collected *c = user;
    unsigned t = type < c->mem_count ? c->mem_map[type] : 0xff;
    if (t > SP_MEM_RESERVED_FREE) return; /* a kind stepprof lacks: left out, as by the walk */
    if (c->failed || grow((void **)&c->mems, &c->cap_mems, c->n_mems, sizeof *c->mems)) {
        c->failed = 1;
        return;
    }
    sp_external_mem_event *m = &c->mems[c->n_mems++];
    m->tid = tid;
    m->type = (sp_mem_event_type)t;
    m->place = (const char *)(uintptr_t)keep_text(c, place, &m->place_len);
    m->ts_ns = ts_ns;
    m->info = *info;
}

static sp_status hand_over(sp_profiler *prof, collected *c)
{
    const char *base = c->text.data ? c->text.data : "";
    for (size_t i = 0; i < c->n_events; i++)
        c->events[i].name = base + (uintptr_t)c->events[i].name;
    for (size_t i = 0; i < c->n_mems; i++)
        c->mems[i].place = base + (uintptr_t)c->mems[i].place;
    sp_status s = c->n_events ? sp_profiler_add_events(prof, c->events, c->n_events) : SP_OK;
    if (s == SP_OK && c->n_mems) s = sp_profiler_add_memory_events(prof, c->mems, c->n_mems);
    return s;
}

PyObject *spx_add_paddle_pb(sp_profiler *prof, PyObject *args)
{
    int fd;
    const char *event_map, *mem_map = NULL;
    Py_ssize_t event_count, mem_count = 0;
    if (!PyArg_ParseTuple(args, "iy#z#:_add_paddle_pb", &fd, &event_map, &event_count, &mem_map,
                          &mem_count))
        return NULL;
    /* A duplicate read from the start: the caller keeps (and closes) fd. */
    int own = dup(fd);
    FILE *f = own >= 0 ? fdopen(own, "rb") : NULL;
    if (!f) {
        if (own >= 0) close(own);
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    if (fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    collected c;
    memset(&c, 0, sizeof c);
    c.event_map = (const uint8_t *)event_map;
    c.event_count = (size_t)event_count;
    c.mem_map = (const uint8_t *)mem_map;
    c.mem_count = mem_map ? (size_t)mem_count : 0;
    sp__buf_init(&c.text);
    sp__pb_sink sink = {&c, on_event, mem_map ? on_mem : NULL};
    sp_load_options opts;
    memset(&opts, 0, sizeof opts);
    sp_result *r = NULL;
    sp_status s;
    /* Reading touches only f and c (the maps are held by args): no GIL. */
    Py_BEGIN_ALLOW_THREADS
    s = sp__load_pb_to(f, "paddle's events", &opts, &sink, &r);
    fclose(f);
    Py_END_ALLOW_THREADS
    if (s == SP_OK) sp_result_release(r);
    int no_memory = s == SP_OK && c.failed;
    if (s == SP_OK && !no_memory) s = hand_over(prof, &c);
    PyMem_RawFree(c.events);
    PyMem_RawFree(c.mems);
    sp__buf_fini(&c.text);
    if (no_memory) return PyErr_NoMemory();
    if (s == SP_OK) Py_RETURN_TRUE;
    if (s == SP_ESTATE || s == SP_EBUSY) Py_RETURN_FALSE;
    return spx_raise(s);
}
