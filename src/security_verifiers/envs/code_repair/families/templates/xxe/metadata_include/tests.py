import T_pkg_T.fragments as fragments
import T_pkg_T.metadata as metadata

SECRET = ROOT + "/T_relative_T"
fragments.FRAGMENTS = ROOT + "/data/fragments"


def _attempt(document):
    try:
        return metadata.T_summary_fn_T(document)
    except Exception as error:
        return type(error).__name__


def probe_summary(ctx):
    return metadata.T_summary_fn_T(T_good_T)


def probe_assembled(ctx):
    root = metadata.T_assemble_fn_T(T_good_T)
    return [element.tag for element in root.iter()]


def probe_fingerprint(ctx):
    return [metadata.short_fingerprint(cert) for cert in metadata.T_summary_fn_T(T_good_T)["certificates"]]


def probe_publish(ctx):
    href = fragments.publish(ROOT + "/data/fragments/T_cert_name_T", "copy-T_cert_name_T")
    return [href, metadata.T_summary_fn_T(T_copied_T)["certificates"], _attempt_publish("../x.pem")]


def _attempt_publish(name):
    try:
        return fragments.publish(ROOT + "/data/fragments/T_cert_name_T", name)
    except ValueError:
        return "refused"


def probe_missing_fragment(ctx):
    try:
        metadata.T_summary_fn_T(T_missing_T)
    except OSError:
        return "missing"
    return "found"


def probe_absolute(ctx):
    return _attempt(T_absolute_T)


def probe_traversal(ctx):
    return _attempt(T_traversal_T)
