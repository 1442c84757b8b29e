"""The template environment: a tiny abstaining classifier to copy when adding an environment (see README.md)."""

from security_verifiers.envs._template.env import Answer, TemplateConfig, TemplateEnvironment

__all__ = ["Answer", "TemplateConfig", "TemplateEnvironment"]
