"""The environments, one sub-package each, and the kits they share (``kits/``).

Nothing here names an environment: :func:`~security_verifiers.envs.base.registry` imports every sub-package but
the kits and the private ones (``_template``), and each environment registers itself with ``@register``.
"""
