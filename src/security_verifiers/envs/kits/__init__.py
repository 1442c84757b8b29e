"""Kits that environments import instead of copying one another's private code.

- ``abstaining``: a binary classifier with Abstain and a stated probability (the answer's conventions, the cost
  profile + Brier reward, metrics, plots, Bayes-action baselines); E1, E4.
- ``patching``: showing files to the model and applying the unified diff it returns to one file or a set of
  files, strictly; E2, E3.
- ``toolbox``: budgeted tools run in a killable worker, with JSON answers to bad calls; E2, E3.
- ``public_sets``: the committed public splits, their manifest and the data card's skeleton
  (``sv data build ENV --public``); every environment.

An environment builds on the kits of its kind and adds its data, its prompt and what is its own. The kits hold
no environment and register nothing (``registry()`` does not import them).
"""
