import T_pkg_T.config as config
import T_pkg_T.T_mod_T as downloads

config.DOWNLOAD_ROOT = ROOT + "/data/downloads"


def _read(name):
    try:
        return downloads.T_read_T(name).decode()
    except Exception as error:
        return type(error).__name__


def probe_read(ctx):
    return _read("T_first_T")


def probe_nested(ctx):
    return _read("T_nested_T")


def probe_missing(ctx):
    return _read("no-such-file.txt")


def probe_checksum(ctx):
    return downloads.checksum("T_nested_T")


def probe_headers(ctx):
    return downloads.headers("T_nested_T")


def probe_catalogue(ctx):
    return downloads.catalogue()


def probe_featured(ctx):
    picks = downloads.featured()
    return [len(picks), len(set(picks)), sorted(set(picks) - set(downloads.catalogue()))]


def probe_dotdot(ctx):
    return _read("../../secret/T_secret_T")


def probe_absolute(ctx):
    return _read(ROOT + "/secret/T_secret_T")


def probe_inner_dotdot(ctx):
    return _read("manuals/../../../secret/T_secret_T")
