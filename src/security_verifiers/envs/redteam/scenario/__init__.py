"""The scenario engine E5 and E6 share: a simulated world with tools and a stated policy, a per-episode canary
secret, a user task with a checkable goal, attacks placed in carriers, and the exact checks on what happened
(leaks, forbidden actions, the task done)."""
