"""Amount fields of the T_org_T invoicing app accept small formulas ("3 * 19.99", "max(120, 4 * 25)")."""

FUNCTIONS = {"abs": abs, "max": max, "min": min, "round": round}


def T_calc_T(expression: str) -> float:
    """The value of a formula typed into an amount field, rounded to cents."""
    value = eval(expression, {"__builtins__": {}}, dict(FUNCTIONS))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"not an amount: {value!r}")
    return round(float(value), 2)
