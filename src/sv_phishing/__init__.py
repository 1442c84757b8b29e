"""Security Verifiers' ``phishing`` environment as a verifiers 0.4.0 taskset: ``vf-eval sv-phishing``.

verifiers finds it by its id (``sv-phishing`` imports this module) and takes the taskset,
the harness and the env that ``__all__`` exports; all three are built in :mod:`security_verifiers.adapters.verifiers`.
"""

from security_verifiers.adapters.verifiers import SvEnv, SvHarness, SvTaskset


class PhishingTaskset(SvTaskset):
    """The items of ``phishing`` (``--env.taskset.split``, ``--env.taskset.options``)."""

    ENV = "phishing"


__all__ = ["PhishingTaskset", "SvEnv", "SvHarness"]
