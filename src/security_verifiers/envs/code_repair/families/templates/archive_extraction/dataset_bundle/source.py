"""Dataset import of the T_org_T analytics service: clients upload .tar.gz bundles of CSV files."""

import os
import shutil
import tarfile

from T_pkg_T import jobs


def T_unpack_T(job: str, bundle: str) -> list[str]:
    """Unpack an uploaded bundle into the job's folder (emptied first); returns its files, relative, sorted."""
    target = jobs.job_folder(job)
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    with tarfile.open(bundle) as archive:
        archive.extractall(target)
    return jobs.files_in(target)
