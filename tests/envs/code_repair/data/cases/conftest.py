"""The importer's real-code cases (``sv data import code-repair --format cases``) are data, not tests: their
modules import packages only their sandbox has, their test modules run only in the judge, and the vulnerable and
fixed versions share module names. Nothing under this folder is collected (nor imported for doctests)."""


def pytest_ignore_collect(collection_path, config):
    return True
