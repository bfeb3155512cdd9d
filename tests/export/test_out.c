/* test_out.c: the output files of out.c (every export writes through it).
 * A file gets the mode any new file gets under the process's umask, not a
 * fixed 0644; a target name of up to NAME_MAX (255) bytes can be written,
 * although "<name>.tmpXXXXXX" would not fit; no temporary is left behind. */
#include "check.h"
#include "export.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    RUN_TEST(test_out_mode_follows_umask);
    RUN_TEST(test_out_long_names_fit);
    rmdir(dir);
    return TEST_SUMMARY();
}
