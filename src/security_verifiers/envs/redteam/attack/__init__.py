"""E5 ``redteam-attack``: write prompt injections against a target assistant."""
