"""E4 ``phishing``: classify one raw email as Phishing or Legitimate (or Abstain), with a probability and quoted
evidence that code checks against the email."""

from security_verifiers.envs.phishing.env import Phishing

__all__ = ["Phishing"]
