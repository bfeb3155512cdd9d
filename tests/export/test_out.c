/* test_out.c: the output files of out.c (every export writes through it).
 * A file gets the mode any new file gets under the process's umask, not a
 * fixed 0644; a target name of up to NAME_MAX (255) bytes can be written,
 * although "<name>.tmpXXXXXX" would not fit; no temporary is left behind.
 * Errors name the target (never its temporary) and the reason, and
 * sp__mkdirs says why a directory could not be made. A gzip output of
 * several flushes is one gzip member (Perfetto reads no further) and reads
 * back through zlib's gzread, as the loader reads it, byte for byte; an
 * empty one is still a gzip file. With write-behind (a thread writes full
 * buffers), a file of many flushes reads back byte for byte, patches land
 * whether their bytes are long written, being written or still buffered,
 * and an abort leaves nothing behind. */
#include "check.h"
#include "export.h"
#include "out_behind.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char dir[] = "/tmp/sp_out_XXXXXX";

static int entries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    if (d) closedir(d);
    return n;
}

/* Writes "hello" to path through out.c; returns the status. */
static sp_status write_hello(const char *path, int gzip)
{
    sp__out *o = NULL;
    sp_status s = sp__out_open(&o, path, gzip);
    if (s != SP_OK) return s;
    sp__buf_puts(sp__out_buf(o), "hello");
    return sp__out_commit(o);
}

static void test_out_mode_follows_umask(void)
{
    static const mode_t masks[] = {022, 077, 002, 0};
    for (size_t i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        char path[300];
        snprintf(path, sizeof path, "%s/mode%zu.json", dir, i);
        mode_t old = umask(masks[i]);
        CHECK_OK(write_hello(path, (int)(i & 1)));
        umask(old);
        struct stat st;
        CHECK(stat(path, &st) == 0);
        CHECK_EQ((unsigned)(0666 & ~masks[i]), (unsigned)(st.st_mode & 0777));
        unlink(path);
    }
    CHECK_EQ(0, entries());
}

static void test_out_long_names_fit(void)
{
    for (size_t n = 240; n <= 255; n++) {
        char name[256], path[400];
        memset(name, 'a', n);
        name[n] = '\0';
        name[0] = (char)('A' + (n - 240)); /* each name differs */
        snprintf(path, sizeof path, "%s/%s", dir, name);
        sp_status s = write_hello(path, 0);
        if (s != SP_OK) fprintf(stderr, "name of %zu bytes: %s\n", n, sp_last_error());
        CHECK_OK(s);
        FILE *f = fopen(path, "rb");
        char text[16] = {0};
        CHECK(f != NULL);
        if (f) {
            CHECK_EQ((size_t)5, fread(text, 1, sizeof text, f));
            fclose(f);
        }
        CHECK_STR_EQ("hello", text);
        unlink(path);
        CHECK_EQ(0, entries()); /* the temporary was renamed, not left */
    }
    /* A name too long for the file system is an error naming it. */
    char name[300], path[400];
    memset(name, 'b', 256);
    name[256] = '\0';
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK_EQ(SP_EIO, write_hello(path, 0));
    CHECK_EQ(0, entries());
}

/* The target is named, not "<target>.tmpXXXXXX", with errno's text and,
 * when the directory is missing, what to do. */
static void test_out_error_names_the_target(void)
{
    char path[400], want[1200];
    snprintf(path, sizeof path, "%s/missing/x.pb", dir);
    CHECK_EQ(SP_EIO, write_hello(path, 0));
    snprintf(want, sizeof want,
             "cannot write %s: No such file or directory (its directory '%s/missing' must exist)",
             path, dir);
    CHECK_STR_EQ(want, sp_last_error());
    CHECK(strstr(sp_last_error(), ".tmp") == NULL);
    CHECK_EQ(0, entries());
}

/* sp__mkdirs gives paddle's sentence followed by the reason: errno's text,
 * and the part of the path that could not be made. */
static void test_out_mkdirs_says_why(void)
{
    char file[400], sub[500], want[1200];
    snprintf(file, sizeof file, "%s/plain", dir);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    CHECK_EQ(SP_EIO, sp__mkdirs(file));
    snprintf(want, sizeof want,
             "Can not create directory '%s' for saving profiling results: Not a directory (a file "
             "of that name "
             "exists)",
             file);
    CHECK_STR_EQ(want, sp_last_error());
    snprintf(sub, sizeof sub, "%s/a/b", file);
    CHECK_EQ(SP_EIO, sp__mkdirs(sub));
    snprintf(want, sizeof want,
             "Can not create directory '%s' for saving profiling results: '%s/a': Not a directory",
             sub, file);
    CHECK_STR_EQ(want, sp_last_error());
    snprintf(sub, sizeof sub, "%s/last", file);
    CHECK_EQ(SP_EIO, sp__mkdirs(sub));
    snprintf(want, sizeof want,
             "Can not create directory '%s' for saving profiling results: Not a directory", sub);
    CHECK_STR_EQ(want, sp_last_error());
    unlink(file);
    snprintf(sub, sizeof sub, "%s/made/here", dir);
    CHECK_OK(sp__mkdirs(sub));
    rmdir(sub);
    snprintf(sub, sizeof sub, "%s/made", dir);
    rmdir(sub);
    CHECK_EQ(0, entries());
}

/* Reads a gzip file whole through gzread; returns its length or -1. */
static long gunzip(const char *path, char *to, size_t room)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz) return -1;
    size_t got = 0;
    int n;
    while (got < room && (n = gzread(gz, to + got, (unsigned)(room - got > 65536 ? 65536 : room - got))) > 0)
        got += (size_t)n;
    int bad = n < 0;
    gzclose(gz);
    return bad ? -1 : (long)got;
}

/* Inflates the first gzip member of path; returns its length, -1 on an
 * error, and sets *rest to the bytes after that member. */
static long first_member(const char *path, char *to, size_t room, long *rest)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    static unsigned char in[(size_t)4 << 20];
    size_t n = fread(in, 1, sizeof in, f);
    fclose(f);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return -1;
    z.next_in = in;
    z.avail_in = (uInt)n;
    z.next_out = (Bytef *)to;
    z.avail_out = (uInt)room;
    int rc = inflate(&z, Z_FINISH);
    long out = rc == Z_STREAM_END ? (long)z.total_out : -1;
    *rest = (long)z.avail_in;
    inflateEnd(&z);
    return out;
}

static void test_out_gzip_reads_back_across_flushes(void)
{
    char path[64];
    snprintf(path, sizeof path, "%s/big.json.gz", dir);
    size_t total = (size_t)3 << 20, done = 0; /* three flushes and a remainder */
    char *want = malloc(total + 4096), *got = malloc(total + 8192);
    CHECK(want && got);
    sp__out *o = NULL;
    CHECK_EQ(sp__out_open(&o, path, 1), SP_OK);
    for (unsigned i = 0; done < total; i++) {
        char line[64];
        int n = snprintf(line, sizeof line, "{\"ph\":\"X\",\"ts\":%u.%03u},\n", i * 7919u, i % 1000);
        memcpy(want + done, line, (size_t)n);
        done += (size_t)n;
        sp__buf_append(sp__out_buf(o), line, (size_t)n);
        sp__out_maybe_flush(o);
    }
    CHECK_EQ(sp__out_commit(o), SP_OK);
    long n = gunzip(path, got, total + 8192);
    CHECK_EQ(n, (long)done);
    CHECK(n == (long)done && memcmp(want, got, done) == 0);
    long rest = -1;
    CHECK_EQ(first_member(path, got, total + 8192, &rest), (long)done);
    CHECK_EQ(rest, 0L); /* one member: Perfetto stops at the end of the first */
    CHECK_EQ(write_hello(path, 1), SP_OK); /* a second file over the first */
    CHECK_EQ(gunzip(path, got, 64), 5);
    CHECK(memcmp(got, "hello", 5) == 0);
    sp__out *empty = NULL;
    CHECK_EQ(sp__out_open(&empty, path, 1), SP_OK);
    CHECK_EQ(sp__out_commit(empty), SP_OK);
    FILE *f = fopen(path, "rb");
    unsigned char magic[2] = {0, 0};
    CHECK(f && fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b);
    if (f) fclose(f);
    CHECK_EQ(gunzip(path, got, 64), 0);
    unlink(path);
    free(want);
    free(got);
}

static void test_out_write_behind_reads_back_and_patches(void)
{
    char path[64];
    snprintf(path, sizeof path, "%s/behind.pb", dir);
    size_t total = (size_t)5 << 20, done = 0; /* five flushes and a remainder */
    char *want = malloc(total + 4096), *got = malloc(total + 8192);
    CHECK(want && got);
    if (!want || !got) goto out;
    sp__out *o = NULL;
    CHECK_EQ(sp__out_open(&o, path, 0), SP_OK);
    sp__out_write_behind(o);
    uint64_t early = 0, late = 0;
    for (unsigned i = 0; done < total; i++) {
        char line[64];
        int n = snprintf(line, sizeof line, "record %u of the file\n", i * 2654435761u);
        memcpy(want + done, line, (size_t)n);
        done += (size_t)n;
        sp__buf_append(sp__out_buf(o), line, (size_t)n);
        uint64_t before = sp__out_tell(o);
        sp__out_maybe_flush(o);
        CHECK_EQ(sp__out_tell(o), before); /* a flush moves nothing */
        if (i == 10) early = done - 4;
        if (done > ((size_t)3 << 20) && !late && sp__out_buf(o)->len == 0) {
            /* just handed to the thread, perhaps being written now */
            late = done - 8;
            CHECK_EQ(sp__out_patch(o, late, "LATE", 4), 0);
            CHECK_EQ(sp__out_patch(o, early, "EARL", 4), 0); /* long written */
            memcpy(want + late, "LATE", 4);
            memcpy(want + early, "EARL", 4);
        } else if (late && done - late > 4096 && done - late < 4200) {
            CHECK_EQ(sp__out_patch(o, done - 2, "!!", 2), 0); /* still buffered */
            memcpy(want + done - 2, "!!", 2);
        }
    }
    CHECK(late > 0);
    CHECK_EQ(sp__out_commit(o), SP_OK);
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(got, 1, total + 8192, f) : 0;
    if (f) fclose(f);
    CHECK_EQ(n, done);
    CHECK(n == done && memcmp(want, got, done) == 0);
    unlink(path);
    CHECK_EQ(entries(), 0);

    /* An abort after the thread has started leaves no file. */
    CHECK_EQ(sp__out_open(&o, path, 0), SP_OK);
    sp__out_write_behind(o);
    for (int i = 0; i < 3; i++) {
        sp__buf_append(sp__out_buf(o), want, (size_t)1 << 20);
        sp__out_maybe_flush(o);
    }
    sp__out_abort(o);
    CHECK_EQ(entries(), 0);

    /* gzip output ignores it and stays one readable member. */
    CHECK_EQ(sp__out_open(&o, path, 1), SP_OK);
    sp__out_write_behind(o);
    for (int i = 0; i < 3; i++) {
        sp__buf_append(sp__out_buf(o), want, (size_t)1 << 20);
        sp__out_maybe_flush(o);
    }
    CHECK_EQ(sp__out_commit(o), SP_OK);
    CHECK_EQ(gunzip(path, got, total + 8192), 3L << 20);
    unlink(path);
out:
    free(want);
    free(got);
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    RUN_TEST(test_out_mode_follows_umask);
    RUN_TEST(test_out_long_names_fit);
    RUN_TEST(test_out_error_names_the_target);
    RUN_TEST(test_out_mkdirs_says_why);
    RUN_TEST(test_out_gzip_reads_back_across_flushes);
    RUN_TEST(test_out_write_behind_reads_back_and_patches);
    rmdir(dir);
    return TEST_SUMMARY();
}
