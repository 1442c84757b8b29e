"""Conditions of the T_org_T monitoring service's alert rules: operators write them over a host's metrics,
e.g. ``cpu > 90 and load > 4``; the rule editor previews a condition's value on a sample."""


def T_check_T(condition: str, metrics: dict[str, float]):
    """The value of a condition for one sample of metrics (names are metric names)."""
    return eval(condition, {}, dict(metrics))
