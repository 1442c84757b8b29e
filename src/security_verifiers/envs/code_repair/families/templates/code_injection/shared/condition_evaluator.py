
_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.Eq: operator.eq, ast.NotEq: operator.ne}
_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
               ast.Mod: operator.mod, ast.USub: operator.neg, ast.Not: operator.not_}


def _value(node: ast.AST, metrics: dict[str, float]):
    """A condition's value: numbers, metric names, arithmetic, comparisons, and/or/not; nothing else."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, bool):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in metrics:
            raise NameError(f"unknown metric {node.id!r}")
        return metrics[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        return _ARITHMETIC[type(node.op)](_value(node.left, metrics), _value(node.right, metrics))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _ARITHMETIC:
        return _ARITHMETIC[type(node.op)](_value(node.operand, metrics))
    if isinstance(node, ast.BoolOp):
        result = None
        for operand in node.values:
            result = _value(operand, metrics)
            if bool(result) != isinstance(node.op, ast.And):
                break
        return result
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        left = _value(node.left, metrics)
        for op, comparator in zip(node.ops, node.comparators):
            right = _value(comparator, metrics)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    raise ValueError("conditions may use numbers, metric names, arithmetic, comparisons, and, or, not")
