"""Kits that environments import instead of copying one another's private code.

An environment of an existing kind (an abstaining classifier, ...) builds on its kit: the kit holds the answer
model's conventions, the reward, the metrics, the plots and the baselines, and the environment adds its data,
its prompt and what is its own. The kits hold no environment and register nothing.
"""
