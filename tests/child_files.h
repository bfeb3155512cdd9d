/* child_files.h: reading back what a test's child process wrote (its
 * stdout and stderr files, the traces in its output directory), for the
 * tests that run a program as a user would (tests/cli, tests/inject). */
#ifndef SP_TESTS_CHILD_FILES_H
#define SP_TESTS_CHILD_FILES_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>

/* The file's first 64 KiB as text ("" when it cannot be read), in a buffer
 * the next call reuses. */
static inline const char *slurp(const char *path)
{
    static char text[65536];
    text[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f) return text;
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

static inline int count_lines(const char *text)
{
    int n = 0;
    for (; *text; text++) n += *text == '\n';
    return n;
}

/* The first file in dir whose name contains part (into path); returns how
 * many there are. */
static inline int find_file(const char *dir, const char *part, char *path, size_t size)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strstr(e->d_name, part)) continue;
        if (n++ == 0) snprintf(path, size, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    return n;
}

#endif
