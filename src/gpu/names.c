/* names.c: the interned names of one GPU batch (cupti_records.h). Names
 * are copied into an arena of chunks and found again through an
 * open-addressing hash table, so a kernel launched a million times costs one
 * copy and one demangling. The table never shrinks; the whole store goes
 * away with its batch. Kernel names are demangled with the C++ runtime's
 * __cxa_demangle (found or loaded at run time, never linked: demangler()).
 * Invariant: every pointer handed out stays valid until destroy. */
#define _GNU_SOURCE
#ifdef SP_HAVE_CUPTI

#include "cupti_records.h"
#include "sys.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

enum { CHUNK_BYTES = 64 * 1024, FIRST_SLOTS = 256 };

typedef struct chunk {
    struct chunk *next;
    size_t used, size;
    char data[];
} chunk;

typedef struct slot {
    uint64_t hash; /* 0: empty */
    unsigned tag;  /* 0: plain name, 1: mangled kernel name */
    const char *key;
    const char *value;
} slot;

struct sp__gpu_names {
    chunk *chunks;
    slot *slots;
    size_t slot_count, used;
};

/* FNV-1a over the bytes and a tag (0: plain name, 1: mangled kernel), never
 * 0 so that 0 marks an empty slot. */
static uint64_t hash_of(const char *s, unsigned tag)
{
    uint64_t h = 1469598103934665603ull ^ tag;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h ? h : 1;
}

sp__gpu_names *sp__gpu_names_create(void)
{
    sp__gpu_names *n = sp__alloc(sizeof *n);
    if (!n) return NULL;
    n->slots = sp__alloc(sizeof *n->slots * FIRST_SLOTS);
    if (!n->slots) {
        sp__free(n);
        return NULL;
    }
    n->slot_count = FIRST_SLOTS;
    return n;
}

void sp__gpu_names_destroy(sp__gpu_names *n)
{
    if (!n) return;
    for (chunk *c = n->chunks; c;) {
        chunk *next = c->next;
        sp__free(c);
        c = next;
    }
    sp__free(n->slots);
    sp__free(n);
}

/* A copy of len bytes of s plus a NUL in the arena. */
static const char *copy(sp__gpu_names *n, const char *s, size_t len)
{
    chunk *c = n->chunks;
    if (!c || c->size - c->used < len + 1) {
        size_t size = len + 1 > CHUNK_BYTES ? len + 1 : CHUNK_BYTES;
        c = sp__alloc(sizeof *c + size);
        if (!c) return NULL;
        c->size = size;
        /* A big name gets a chunk of its own behind the current one, so
         * the current chunk's free space is not wasted. */
        if (n->chunks && size > CHUNK_BYTES) {
            c->next = n->chunks->next;
            n->chunks->next = c;
        } else {
            c->next = n->chunks;
            n->chunks = c;
        }
    }
    char *out = c->data + c->used;
    memcpy(out, s, len);
    out[len] = '\0';
    c->used += len + 1;
    return out;
}

/* The slot of (key, tag), or the empty slot where it belongs. The table is
 * never full (grow keeps it under half), so the probe ends. */
static slot *find(sp__gpu_names *n, uint64_t h, unsigned tag, const char *key)
{
    size_t mask = n->slot_count - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        slot *e = &n->slots[i];
        if (e->hash == 0 || (e->hash == h && e->tag == tag && strcmp(e->key, key) == 0)) return e;
    }
}

/* Doubles the table once it is half full. Returns 0, or -1 (table kept). */
static int grow(sp__gpu_names *n)
{
    if (n->used * 2 < n->slot_count) return 0;
    size_t count = n->slot_count * 2;
    slot *fresh = sp__alloc(sizeof *fresh * count);
    if (!fresh) return -1;
    slot *old = n->slots;
    size_t old_count = n->slot_count;
    n->slots = fresh;
    n->slot_count = count;
    for (size_t i = 0; i < old_count; i++)
        if (old[i].hash) *find(n, old[i].hash, old[i].tag, old[i].key) = old[i];
    sp__free(old);
    return 0;
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* The C++ runtime's __cxa_demangle. A C++ program has it in the global
 * scope, but a framework's runtime is often loaded RTLD_LOCAL (Python
 * dlopens torch's and paddle's extensions so), where dlsym(RTLD_DEFAULT)
 * does not look: then the loaded libstdc++ is asked by its own handle, and
 * a process with none (a C program whose kernels are C++ all the same)
 * loads it, as Kineto's demangling always has one. Found once, kept for the
 * life of the process. NULL where no C++ runtime can be had. */
static demangle_fn demangler(void)
{
    static _Atomic(void *) found;
    void *p = found;
    if (p) {
        demangle_fn fn;
        memcpy(&fn, &p, sizeof p);
        return fn;
    }
    p = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!p) {
        void *cxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
        if (!cxx) cxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (cxx) p = dlsym(cxx, "__cxa_demangle"); /* the handle is kept: the runtime stays */
    }
    if (!p) return NULL;
    found = p;
    demangle_fn fn;
    memcpy(&fn, &p, sizeof p);
    return fn;
}

/* The value stored under (key, tag), adding it if absent: the key itself
 * for plain names, the demangled key for kernel names. */
static const char *lookup(sp__gpu_names *n, const char *key, unsigned tag)
{
    if (grow(n) != 0) return NULL;
    uint64_t h = hash_of(key, tag);
    slot *e = find(n, h, tag, key);
    if (e->hash) return e->value;
    const char *k = copy(n, key, strlen(key));
    if (!k) return NULL;
    const char *v = k;
    if (tag == 1) {
        demangle_fn demangle = key[0] == '_' && key[1] == 'Z' ? demangler() : NULL;
        if (demangle) {
            int status = -1;
            char *d = demangle(key, NULL, NULL, &status);
            if (d && status == 0) v = copy(n, d, strlen(d));
            free(d); /* the C++ runtime's malloc, not ours */
            if (!v) return NULL;
        }
    }
    e->hash = h;
    e->tag = tag;
    e->key = k;
    e->value = v;
    n->used++;
    return v;
}

const char *sp__gpu_names_intern(sp__gpu_names *n, const char *s)
{
    return n && s ? lookup(n, s, 0) : NULL;
}

const char *sp__gpu_names_kernel(sp__gpu_names *n, const char *mangled)
{
    return n && mangled ? lookup(n, mangled, 1) : NULL;
}

#endif /* SP_HAVE_CUPTI */
