import io
import os
import tarfile

import T_pkg_T.jobs as jobs
import T_pkg_T.T_mod_T as imports

jobs.IMPORT_ROOT = "/tmp/imports"
FILES = T_files_T
SECOND = T_second_T
T_helper_T

def _unpack(job, members):
    bundle = _tar("/tmp/bundle-%s.tar.gz" % "".join(c for c in job if c.isalnum()), members)
    try:
        return imports.T_unpack_T(job, bundle)
    except Exception as error:
        return type(error).__name__


def probe_unpack(ctx):
    return [_unpack("job1", sorted(FILES.items())), jobs.row_counts("job1")]


def probe_replaced(ctx):
    _unpack("job2", sorted(FILES.items()))
    return [_unpack("job2", sorted(SECOND.items())), jobs.row_counts("job2")]


def probe_bad_job(ctx):
    return _unpack("../job", sorted(FILES.items()))


def probe_dotdot(ctx):
    name = os.path.relpath(ctx["marker"], jobs.job_folder("job3"))
    return _unpack("job3", [("a.csv", "id\n1\n"), (name, "x\n")])


def probe_absolute(ctx):
    return _unpack("job4", [(ctx["marker"], "x\n"), ("b.csv", "id\n")])


def probe_symlink(ctx):
    folder, base = os.path.split(ctx["marker"])
    return _unpack("job5", [("data", None, folder), ("data/" + base, "x\n")])
