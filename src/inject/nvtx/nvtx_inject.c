/* nvtx_inject.c: libstepprof_nvtx.so, an NVTX injection library. A program
 * that uses NVTX (v3 headers, or a CUDA library that does) and is run with
 * NVTX_INJECTION64_PATH naming this file loads it at its first NVTX call;
 * NVTX then asks InitializeInjectionNvtx2 below to fill its function tables,
 * and from then on the program's NVTX calls come here. They become stepprof
 * calls on the process's environment profiler (src/inject/env.c, which
 * libstepprof.so creates when it is loaded with this library):
 *   - nvtxRangePush / Pop, plain or in a domain: nested ranges of the thread
 *     (UserDefined), names interned (recorded by pointer);
 *   - a pushed range named STEPPROF_STEP_RANGE (default "step") is not a
 *     range: its pop ends a step (sp_step), so steps are what the program
 *     pushed;
 *   - nvtxRangeStart / End (which may end on another thread): a complete
 *     range on the ending thread, measured from start to end;
 *   - nvtxMark: an instant; its name is kept for the life of the process.
 * Wide-character (W) calls and the resource, category and thread naming
 * calls are left unimplemented, which NVTX treats as no-ops. Misuse is
 * counted by the span as for any range (an unmatched pop is an unmatched
 * end, a range still pushed at the span's end is unclosed); an
 * nvtxRangeEnd with an id this library never gave is counted here and
 * reported in one line at exit. */
#define _GNU_SOURCE
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <stepprof/stepprof.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ---- */

static char step_name[256] = "step";
static size_t step_len = 4;

/* The text of an event's message, or NULL for a kind this library does not
 * read (wide characters). A registered string's handle is the interned copy
 * of its text (register_string below). */
static const char *message_of(const nvtxEventAttributes_t *a)
{
    if (!a) return NULL;
    if (a->messageType == NVTX_MESSAGE_TYPE_ASCII) return a->message.ascii;
    if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED)
        return (const char *)a->message.registered;
    return NULL;
}

/* Interned strings, kept for the life of the process: marks store the
 * pointer (sp_instant), registered strings must outlive the call, and
 * pushed names are recorded by pointer (below). A chained hash table under
 * a lock, reached only on a thread's cache miss. At most INTERN_MAX names:
 * a program that builds a new name for every range would otherwise grow
 * it without end, so past the limit pushed names are copied per range, as
 * are names over INTERN_LEN_MAX bytes. */
typedef struct interned {
    struct interned *next;
    char text[];
} interned;

enum { BUCKETS = 4096, INTERN_MAX = 1 << 16, INTERN_LEN_MAX = 256 };

static interned *buckets[BUCKETS];
static size_t interned_count;
static pthread_mutex_t strings_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return (size_t)(h % BUCKETS);
}

/* The lasting copy of s, or NULL when out of memory or, with `bounded`, past
 * INTERN_MAX. */
static const char *find_or_add(const char *s, size_t n, int bounded)
{
    size_t b = hash(s, n);
    pthread_mutex_lock(&strings_lock);
    interned *i = buckets[b];
    while (i && (strncmp(i->text, s, n) != 0 || i->text[n] != '\0')) i = i->next;
    if (!i && (!bounded || interned_count < INTERN_MAX)) {
        i = malloc(sizeof *i + n + 1);
        if (i) {
            memcpy(i->text, s, n);
            i->text[n] = '\0';
            i->next = buckets[b];
            buckets[b] = i;
            interned_count++;
        }
    }
    pthread_mutex_unlock(&strings_lock);
    return i ? i->text : NULL;
}

static const char *intern(const char *s)
{
    if (!s) s = "(null)";
    const char *t = find_or_add(s, strlen(s), 0);
    return t ? t : "(out of memory)";
}

/* ---- push / pop ----
 * A push must not cost much more than a stepprof range. The name is
 * NVTX's caller's, which may be a buffer reused for another name at the
 * next call, so it is recorded through its interned copy, found through a
 * per-thread cache keyed by the pointer and confirmed by content (a strcmp
 * of a short name). A thread's state sits behind one initial-exec TLS
 * pointer: this library is loaded by dlopen, where a plain _Thread_local
 * goes through __tls_get_addr on every access. */

enum { MAX_DEPTH = 1024, CACHE_SLOTS = 256 };

typedef struct cache_slot {
    const char *key;  /* the caller's pointer */
    const char *name; /* its interned text, or NULL: copy it per range */
    size_t len;
    int step;         /* the step range's name */
} cache_slot;

typedef struct thread_state {
    int depth;
    unsigned char is_step[MAX_DEPTH]; /* which open pushes are steps */
    cache_slot cache[CACHE_SLOTS];
} thread_state;

static __thread thread_state *state __attribute__((tls_model("initial-exec")));
static pthread_key_t state_key;
static pthread_once_t state_once = PTHREAD_ONCE_INIT;

static void make_state_key(void) { (void)pthread_key_create(&state_key, free); }

/* This thread's state (freed when it exits), or NULL when out of memory. */
static thread_state *my_state(void)
{
    if (state) return state;
    pthread_once(&state_once, make_state_key);
    thread_state *t = calloc(1, sizeof *t);
    if (t && pthread_setspecific(state_key, t) != 0) {
        free(t);
        t = NULL;
    }
    return state = t;
}

static void fill(cache_slot *c, const char *name)
{
    size_t n = strlen(name);
    c->key = name;
    c->len = n;
    c->step = n == step_len && memcmp(name, step_name, n) == 0;
    /* A long name is copied per range, where the core cuts it (names_cut). */
    c->name = n <= INTERN_LEN_MAX ? find_or_add(name, n, 1) : NULL;
}

static int push(const char *name)
{
    if (!name) name = "(null)";
    thread_state *t = my_state();
    if (!t) { /* no state: every push is a range, and pops end ranges */
        sp_range_begin_copy(SP_EVENT_USER_DEFINED, name, strlen(name));
        return -1;
    }
    cache_slot *c = &t->cache[((uintptr_t)name >> 3) % CACHE_SLOTS];
    if (c->key != name || !c->name || strcmp(name, c->name) != 0) fill(c, name);
    if (!c->step) {
        if (c->name)
            sp_range_begin(SP_EVENT_USER_DEFINED, c->name);
        else
            sp_range_begin_copy(SP_EVENT_USER_DEFINED, name, c->len);
    }
    if (t->depth < MAX_DEPTH) t->is_step[t->depth] = (unsigned char)c->step;
    return t->depth++;
}

static int pop(void)
{
    thread_state *t = my_state();
    if (!t || t->depth == 0) {
        sp_range_end(); /* counted as an unmatched end by the span */
        return -1;
    }
    int level = --t->depth;
    if (level < MAX_DEPTH && t->is_step[level])
        sp_step(-1);
    else
        sp_range_end();
    return level;
}

static int push_a(const char *message) { return push(message); }
static int push_ex(const nvtxEventAttributes_t *a) { return push(message_of(a)); }
static int domain_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    return push(message_of(a));
}
static int domain_pop(nvtxDomainHandle_t d)
{
    (void)d;
    return pop();
}

/* ---- start / end: ranges that may end on another thread ---- */

typedef struct open_range {
    struct open_range *next;
    nvtxRangeId_t id;
    uint64_t begin_ticks;
    char name[];
} open_range;

static open_range *open_ranges;
static pthread_mutex_t ranges_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_ullong next_id = 1;
static atomic_ullong unknown_ends;

static nvtxRangeId_t start(const char *name)
{
    if (!name) name = "(null)";
    size_t n = strlen(name);
    open_range *r = malloc(sizeof *r + n + 1);
    if (!r) return 0;
    r->begin_ticks = sp_clock_ticks();
    r->id = atomic_fetch_add(&next_id, 1);
    memcpy(r->name, name, n + 1);
    pthread_mutex_lock(&ranges_lock);
    r->next = open_ranges;
    open_ranges = r;
    pthread_mutex_unlock(&ranges_lock);
    return r->id;
}

static void end(nvtxRangeId_t id)
{
    uint64_t end_ticks = sp_clock_ticks();
    pthread_mutex_lock(&ranges_lock);
    open_range **p = &open_ranges;
    while (*p && (*p)->id != id) p = &(*p)->next;
    open_range *r = *p;
    if (r) *p = r->next;
    pthread_mutex_unlock(&ranges_lock);
    if (!r) {
        atomic_fetch_add(&unknown_ends, 1);
        return;
    }
    if (sp_is_recording())
        sp_range_add(SP_EVENT_USER_DEFINED, r->name, strlen(r->name), r->begin_ticks, end_ticks);
    free(r);
}

static nvtxRangeId_t start_a(const char *message) { return start(message); }
static nvtxRangeId_t start_ex(const nvtxEventAttributes_t *a) { return start(message_of(a)); }
static nvtxRangeId_t domain_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    return start(message_of(a));
}
static void domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    (void)d;
    end(id);
}

/* ---- marks, domains, registered strings ---- */

static void mark(const char *name)
{
    if (sp_is_recording()) sp_instant(SP_EVENT_USER_DEFINED, intern(name));
}
static void mark_a(const char *message) { mark(message); }
static void mark_ex(const nvtxEventAttributes_t *a) { mark(message_of(a)); }
static void domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    mark(message_of(a));
}

/* A domain's handle is its interned name: ranges do not carry it (one
 * timeline per thread), but it must be a distinct, lasting pointer. */
static nvtxDomainHandle_t domain_create_a(const char *name)
{
    return (nvtxDomainHandle_t)intern(name);
}
static void domain_destroy(nvtxDomainHandle_t d) { (void)d; }
static nvtxStringHandle_t register_string_a(nvtxDomainHandle_t d, const char *s)
{
    (void)d;
    return (nvtxStringHandle_t)intern(s);
}

/* ---- the injection entry point ---- */

static void at_exit(void)
{
    unsigned long long n = atomic_load(&unknown_ends);
    if (n > 0)
        fprintf(stderr, "stepprof: warning: %llu nvtxRangeEnd call%s with an id that no "
                        "nvtxRangeStart returned %s ignored\n", n, n == 1 ? "" : "s",
                n == 1 ? "was" : "were");
}

static void set(NvtxFunctionTable table, unsigned size, unsigned id, NvtxFunctionPointer fn)
{
    if (id < size && table[id]) *table[id] = fn;
}

#define FN(f) ((NvtxFunctionPointer)(void (*)(void))(f))

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *cb = get ? get(NVTX_ETID_CALLBACKS) : NULL;
    if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable) return 0;
    const char *s = getenv("STEPPROF_STEP_RANGE");
    if (s && *s && strlen(s) < sizeof step_name) {
        step_len = strlen(s);
        memcpy(step_name, s, step_len + 1);
    }
    NvtxFunctionTable t = NULL;
    unsigned n = 0;
    if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) || !t) return 0;
    set(t, n, NVTX_CBID_CORE_MarkEx, FN(mark_ex));
    set(t, n, NVTX_CBID_CORE_MarkA, FN(mark_a));
    set(t, n, NVTX_CBID_CORE_RangeStartEx, FN(start_ex));
    set(t, n, NVTX_CBID_CORE_RangeStartA, FN(start_a));
    set(t, n, NVTX_CBID_CORE_RangeEnd, FN(end));
    set(t, n, NVTX_CBID_CORE_RangePushEx, FN(push_ex));
    set(t, n, NVTX_CBID_CORE_RangePushA, FN(push_a));
    set(t, n, NVTX_CBID_CORE_RangePop, FN(pop));
    t = NULL;
    n = 0;
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) && t) {
        set(t, n, NVTX_CBID_CORE2_DomainMarkEx, FN(domain_mark_ex));
        set(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, FN(domain_start_ex));
        set(t, n, NVTX_CBID_CORE2_DomainRangeEnd, FN(domain_end));
        set(t, n, NVTX_CBID_CORE2_DomainRangePushEx, FN(domain_push_ex));
        set(t, n, NVTX_CBID_CORE2_DomainRangePop, FN(domain_pop));
        set(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, FN(register_string_a));
        set(t, n, NVTX_CBID_CORE2_DomainCreateA, FN(domain_create_a));
        set(t, n, NVTX_CBID_CORE2_DomainDestroy, FN(domain_destroy));
    }
    atexit(at_exit);
    return 1;
}
