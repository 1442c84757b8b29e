"""Security Verifiers: security RL environments whose rewards come from executable checks."""

__version__ = "0.1.0"
