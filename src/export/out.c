/* out.c: output files that appear whole or not at all. Data goes to a fresh
 * temporary file beside the target (created with O_EXCL and O_NOFOLLOW, so an
 * existing file or a planted symlink is never written through) and is renamed
 * over the target only after every byte, and the gzip trailer, was written.
 * The temporary is created with mode 0666, so the process's umask (and a
 * default ACL) gives the file its mode as for any new file. Its name is
 * "<target>.tmpXXXXXX" when that fits NAME_MAX, else a short name made from
 * a hash of the target's ("<dir>/.sp-<hash>.tmpXXXXXX"), so that any name
 * the file system takes can be written.
 *
 * Gzip: one gzip member, streamed, at level 1: through ISA-L's igzip where
 * stepprof is built with it (Debian libisal-dev), else through zlib. One
 * member, because Perfetto's reader stops at the end of the first, so the
 * whole-buffer compressors (libdeflate) that would need a member per flush
 * are out. The choice was made by measurement (docs/performance.md):
 * writing .json.gz is meant not to take a core from training, and igzip at
 * level 1 costs about a fourteenth of zlib level 6's CPU time for a quarter
 * more bytes; zlib at level 1 about two fifths.
 *
 * Write-behind (sp__out_write_behind, plain output only): once the first
 * buffer is full, a thread of the output's own writes each full buffer while
 * the caller fills the other, so that a writer whose formatting costs about
 * as much as write() (the protobuf save) takes about the time of the larger
 * of the two, not their sum. */
#define _GNU_SOURCE
#include "export.h"
#include "out_behind.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#ifdef SP_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#define FLUSH_BYTES ((size_t)1 << 20)
#define GZIP_LEVEL 1
#define PACKED_BYTES ((size_t)1 << 18)

int sp__gzip_baseline;

struct sp__out {
    sp__buf buf;
    int fd;
    gzFile gz; /* zlib's stream, or NULL */
#ifdef SP_HAVE_ISAL
    struct isal_zstream *igzip; /* or this stream */
    uint8_t *igzip_level;       /* its level buffer */
    uint8_t *packed;            /* compressed bytes on their way to the file */
#endif
    int failed;
    int saved_errno;
    uint64_t written; /* bytes in the file (plain output), or handed to the thread */
    char *tmp_path;
    char *path;
    /* Write-behind: spare is the buffer the thread writes while busy, else
     * an empty one to swap with buf. The thread touches spare and its error
     * only while busy, and the caller only while not. */
    int behind_wanted, behind_running;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    sp__buf spare;
    int busy, stop;
    int thread_errno; /* the thread's write failed: this errno */
};

static void note_error(sp__out *o)
{
    if (!o->failed) o->saved_errno = errno ? errno : EIO;
    o->failed = 1;
}

/* FNV-1a of a name, for the short temporary name. */
static uint64_t hash_name(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

/* Writes the temporary name of path into tmp (room: strlen(path) + 40)
 * with a suffix of six X to be replaced by letters. The suffix is 10 bytes
 * (".tmpXXXXXX"); past NAME_MAX (255) the base name is replaced by a hash. */
static void tmp_name(const char *path, char *tmp, size_t room)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t base_len = strlen(base);
    if (base_len + 10 <= 255) {
        snprintf(tmp, room, "%s.tmpXXXXXX", path);
        return;
    }
    snprintf(tmp, room, "%.*s.sp-%016llx.tmpXXXXXX", (int)(base - path), path,
             (unsigned long long)hash_name(base, base_len));
}

/* Creates the temporary: the six X at its end become random letters,
 * retried while the name exists. Mode 0666 less the umask, as for any new
 * file (mkstemp would give 0600). */
static int create_tmp(char *tmp)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    char *x = tmp + strlen(tmp) - 6;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t seed = hash_name(tmp, strlen(tmp)) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
                    ((uint64_t)getpid() << 16) ^ (uint64_t)(uintptr_t)tmp;
    for (int attempt = 0; attempt < 1000; attempt++) {
        uint64_t v = seed;
        for (int i = 0; i < 6; i++) {
            x[i] = letters[v % (sizeof letters - 1)];
            v /= sizeof letters - 1;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) return fd;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull + (uint64_t)attempt;
    }
    return -1;
}

sp_status sp__out_open(sp__out **out, const char *path, int gzip)
{
    if (!out || !path || !*path) return sp__fail(SP_EINVAL, "export: empty output path");
    sp__out *o = sp__alloc(sizeof *o);
    size_t len = strlen(path);
    char *tmp = sp__alloc(len + 40);
    char *copy = sp__strdup(path);
    if (!o || !tmp || !copy) goto nomem;
    sp__buf_init(&o->buf);
    sp__buf_init(&o->spare);
    o->path = copy;
    o->tmp_path = tmp;
    tmp_name(path, tmp, len + 40);
    o->fd = create_tmp(tmp);
    if (o->fd < 0) {
        /* Named by the target: the temporary's name means nothing to the
         * user, but where it is made (the target's directory) does. */
        int err = errno;
        const char *slash = strrchr(path, '/');
        int dir_len = slash ? (int)(slash == path ? 1 : slash - path) : 1;
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", dir_len, slash ? path : ".");
        struct stat st;
        int dir_exists = stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
        const char *hint = (err == ENOENT || err == ENOTDIR) && !dir_exists ? "must exist"
                           : err == EACCES || err == EPERM || err == EROFS  ? "must be writable"
                                                                            : NULL;
        sp_status s = hint ? sp__fail(SP_EIO, "cannot write %s: %s (its directory '%s' %s)", path,
                                      strerror(err), dir, hint)
                           : sp__fail(SP_EIO, "cannot write %s: %s", path, strerror(err));
        sp__free(tmp);
        sp__free(copy);
        sp__free(o);
        return s;
    }
#ifdef SP_HAVE_ISAL
    if (gzip && !sp__gzip_baseline) {
        o->igzip = sp__alloc(sizeof *o->igzip);
        o->igzip_level = sp__alloc(ISAL_DEF_LVL1_DEFAULT);
        o->packed = sp__alloc(PACKED_BYTES);
        if (!o->igzip || !o->igzip_level || !o->packed) {
            sp__out_abort(o);
            return sp__fail(SP_ENOMEM, "cannot start gzip stream for %s", path);
        }
        isal_deflate_init(o->igzip);
        o->igzip->gzip_flag = IGZIP_GZIP;
        o->igzip->level = GZIP_LEVEL;
        o->igzip->level_buf = o->igzip_level;
        o->igzip->level_buf_size = ISAL_DEF_LVL1_DEFAULT;
        o->igzip->flush = NO_FLUSH;
        gzip = 0;
    }
#endif
    if (gzip) {
        int fd2 = dup(o->fd);
        char mode[4] = {'w', 'b', (char)('0' + (sp__gzip_baseline ? 6 : GZIP_LEVEL)), 0};
        o->gz = fd2 >= 0 ? gzdopen(fd2, mode) : NULL;
        if (!o->gz) {
            if (fd2 >= 0) close(fd2);
            sp__out_abort(o);
            return sp__fail(SP_ENOMEM, "cannot start gzip stream for %s", path);
        }
    }
    *out = o;
    return SP_OK;
nomem:
    sp__free(o);
    sp__free(tmp);
    sp__free(copy);
    return sp__fail(SP_ENOMEM, "out of memory opening %s", path);
}

sp__buf *sp__out_buf(sp__out *o) { return &o->buf; }

/* 0, or the errno of the write that failed. */
static int write_fd(int fd, const char *p, size_t left)
{
    while (left > 0) {
        ssize_t n = write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return errno ? errno : EIO;
        p += n;
        left -= (size_t)n;
    }
    return 0;
}

static void write_all(sp__out *o, const char *p, size_t left)
{
    int err = write_fd(o->fd, p, left);
    if (err) {
        errno = err;
        note_error(o);
    }
}

static void *behind_main(void *arg)
{
    sp__out *o = arg;
    pthread_mutex_lock(&o->lock);
    for (;;) {
        while (!o->busy && !o->stop)
            pthread_cond_wait(&o->cond, &o->lock);
        if (!o->busy) break;
        pthread_mutex_unlock(&o->lock);
        int err = o->thread_errno ? 0 : write_fd(o->fd, o->spare.data, o->spare.len);
        pthread_mutex_lock(&o->lock);
        if (err) o->thread_errno = err;
        o->spare.len = 0;
        o->busy = 0;
        pthread_cond_broadcast(&o->cond);
    }
    pthread_mutex_unlock(&o->lock);
    return NULL;
}

/* Waits until the thread has written what it was given; its error, if
 * any, becomes the output's. After this, every byte handed over is in the
 * file. */
static void behind_wait(sp__out *o)
{
    if (!o->behind_running) return;
    pthread_mutex_lock(&o->lock);
    while (o->busy)
        pthread_cond_wait(&o->cond, &o->lock);
    pthread_mutex_unlock(&o->lock);
    if (o->thread_errno && !o->failed) {
        o->failed = 1;
        o->saved_errno = o->thread_errno;
    }
}

static void behind_stop(sp__out *o)
{
    if (!o->behind_running) return;
    pthread_mutex_lock(&o->lock);
    o->stop = 1;
    pthread_cond_broadcast(&o->cond);
    pthread_mutex_unlock(&o->lock);
    pthread_join(o->thread, NULL);
    pthread_mutex_destroy(&o->lock);
    pthread_cond_destroy(&o->cond);
    o->behind_running = 0;
    if (o->thread_errno && !o->failed) {
        o->failed = 1;
        o->saved_errno = o->thread_errno;
    }
}

/* Hands the buffer's bytes to the thread (started on the first call) and
 * gives the caller the emptied spare; 0, or -1 when no thread could start
 * (the caller writes them itself). */
static int behind_hand(sp__out *o)
{
    if (!o->behind_running) {
        if (pthread_mutex_init(&o->lock, NULL) != 0) return -1;
        if (pthread_cond_init(&o->cond, NULL) != 0) {
            pthread_mutex_destroy(&o->lock);
            return -1;
        }
        o->busy = o->stop = 0;
        if (pthread_create(&o->thread, NULL, behind_main, o) != 0) {
            pthread_mutex_destroy(&o->lock);
            pthread_cond_destroy(&o->cond);
            o->behind_wanted = 0;
            return -1;
        }
        o->behind_running = 1;
    }
    behind_wait(o);
    if (o->failed) {
        o->buf.len = 0;
        return 0;
    }
    sp__buf full = o->buf;
    o->buf = o->spare;
    o->buf.len = 0;
    o->written += full.len;
    pthread_mutex_lock(&o->lock);
    o->spare = full;
    o->busy = 1;
    pthread_cond_broadcast(&o->cond);
    pthread_mutex_unlock(&o->lock);
    return 0;
}

void sp__out_write_behind(sp__out *o)
{
    if (o && !o->gz
#ifdef SP_HAVE_ISAL
        && !o->igzip
#endif
    )
        o->behind_wanted = 1;
}

#ifdef SP_HAVE_ISAL
/* Compresses len bytes at p into the stream and writes what comes out; last
 * ends the member (its trailer included). igzip keeps the history it needs
 * in its own state, so p may be reused once this returns. */
static void igzip_put(sp__out *o, const char *p, size_t len, int last)
{
    struct isal_zstream *z = o->igzip;
    z->next_in = (uint8_t *)(uintptr_t)p;
    z->avail_in = (uint32_t)len;
    z->end_of_stream = (uint16_t)last;
    for (;;) {
        z->next_out = o->packed;
        z->avail_out = (uint32_t)PACKED_BYTES;
        if (isal_deflate(z) != COMP_OK) {
            errno = EIO;
            note_error(o);
            return;
        }
        write_all(o, (const char *)o->packed, PACKED_BYTES - z->avail_out);
        if (o->failed) return;
        if (z->avail_in == 0 && z->avail_out > 0 && (!last || z->internal_state.state == ZSTATE_END))
            return;
    }
}
#endif

static void flush(sp__out *o)
{
    const char *p = o->buf.data;
    size_t left = o->buf.len;
    if (o->failed || o->buf.failed) {
        if (o->buf.failed && !o->failed) {
            o->failed = 1;
            o->saved_errno = ENOMEM;
        }
        o->buf.len = 0;
        return;
    }
#ifdef SP_HAVE_ISAL
    if (o->igzip) {
        while (left > 0) {
            size_t part = left > (1u << 30) ? (size_t)1 << 30 : left;
            igzip_put(o, p, part, 0);
            p += part;
            left -= part;
        }
        o->buf.len = 0;
        return;
    }
#endif
    if (o->gz) {
        while (left > 0) {
            unsigned part = left > (1u << 30) ? 1u << 30 : (unsigned)left;
            if (gzwrite(o->gz, p, part) != (int)part) {
                note_error(o);
                break;
            }
            p += part;
            left -= part;
        }
    } else if (!(o->behind_wanted && left > 0 && behind_hand(o) == 0)) {
        write_all(o, p, left);
        o->written += left;
    }
    o->buf.len = 0;
}

uint64_t sp__out_tell(const sp__out *o) { return o->written + o->buf.len; }

int sp__out_patch(sp__out *o, uint64_t at, const void *bytes, size_t n)
{
    if (o->gz || at + n > sp__out_tell(o)) return -1;
#ifdef SP_HAVE_ISAL
    if (o->igzip) return -1;
#endif
    behind_wait(o); /* what was handed over is then in the file */
    const char *src = bytes;
    while (n > 0 && at < o->written) { /* the part already in the file */
        size_t part = o->written - at < n ? (size_t)(o->written - at) : n;
        ssize_t k = pwrite(o->fd, src, part, (off_t)at);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            note_error(o);
            return -1;
        }
        src += k;
        at += (uint64_t)k;
        n -= (size_t)k;
    }
    if (n) memcpy(o->buf.data + (at - o->written), src, n);
    return 0;
}

void sp__out_maybe_flush(sp__out *o)
{
    if (o->buf.len >= FLUSH_BYTES) flush(o);
}

static void release(sp__out *o)
{
#ifdef SP_HAVE_ISAL
    sp__free(o->igzip);
    sp__free(o->igzip_level);
    sp__free(o->packed);
#endif
    sp__buf_fini(&o->buf);
    sp__buf_fini(&o->spare);
    sp__free(o->tmp_path);
    sp__free(o->path);
    sp__free(o);
}

sp_status sp__out_commit(sp__out *o)
{
    flush(o);
#ifdef SP_HAVE_ISAL
    if (o->igzip && !o->failed) igzip_put(o, "", 0, 1); /* the end of the member */
#endif
    behind_stop(o);
    if (o->gz && gzclose(o->gz) != Z_OK) note_error(o);
    o->gz = NULL;
    if (close(o->fd) != 0) note_error(o);
    o->fd = -1;
    if (!o->failed && rename(o->tmp_path, o->path) != 0) note_error(o);
    if (o->failed) {
        sp_status s = sp__fail(SP_EIO, "cannot write %s: %s", o->path, strerror(o->saved_errno));
        unlink(o->tmp_path);
        release(o);
        return s;
    }
    release(o);
    return SP_OK;
}

void sp__out_abort(sp__out *o)
{
    if (!o) return;
    behind_stop(o);
    if (o->gz) gzclose(o->gz);
    if (o->fd >= 0) close(o->fd);
    unlink(o->tmp_path);
    release(o);
}

sp_status sp__mkdirs(const char *dir)
{
    if (!dir || !*dir) return sp__fail(SP_EINVAL, "empty directory name");
    char *path = sp__strdup(dir);
    if (!path) return sp__fail(SP_ENOMEM, "out of memory");
    sp_status s = SP_OK;
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            int err = errno;
            if (saved == '\0')
                s = sp__fail(SP_EIO,
                             "Can not create directory '%s' for saving profiling results: %s", dir,
                             strerror(err));
            else
                s = sp__fail(SP_EIO,
                             "Can not create directory '%s' for saving profiling results: '%s': %s",
                             dir, path, strerror(err));
            break;
        }
        *p = saved;
        if (saved == '\0') break;
    }
    struct stat st;
    if (s == SP_OK && stat(dir, &st) != 0)
        s = sp__fail(SP_EIO, "Can not create directory '%s' for saving profiling results: %s", dir,
                     strerror(errno));
    else if (s == SP_OK && !S_ISDIR(st.st_mode))
        s = sp__fail(
            SP_EIO,
            "Can not create directory '%s' for saving profiling results: %s (a file of that "
            "name exists)",
            dir, strerror(ENOTDIR));
    sp__free(path);
    return s;
}
