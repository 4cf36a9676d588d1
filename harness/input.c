/*
 * input.c - qc_open_input: regular files only, never a blocking open.
 */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind(mode_t m)
{
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISCHR(m) || S_ISBLK(m))
        return "a device";
    if (S_ISDIR(m))
        return "a folder";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a plain file";
}

int qc_open_input(const char *path, const char *what, FILE **out, qc_err *err)
{
    struct stat st;
    FILE *f = NULL;
    int fd, flags, rc = 0;

    *out = NULL;
    fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return qc_err_set(err, QC_EIO, "cannot open %s '%s': %s", what, path, strerror(errno));
    if (fstat(fd, &st) != 0) {
        rc = qc_err_set(err, QC_EIO, "cannot open %s '%s': %s", what, path, strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = qc_err_set(err, QC_EINVAL, "%s '%s' is not a regular file (%s)", what, path,
                        kind(st.st_mode));
        goto out;
    }
    flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ||
        (f = fdopen(fd, "rb")) == NULL) {
        rc = qc_err_set(err, QC_EIO, "cannot open %s '%s': %s", what, path, strerror(errno));
        goto out;
    }
    fd = -1; /* the stream owns it */
    *out = f;
out:
    if (fd >= 0)
        close(fd);
    return rc;
}
