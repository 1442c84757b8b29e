
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
              ast.USub: operator.neg, ast.UAdd: operator.pos}


def _evaluate(node: ast.AST, row: dict):
    """A formula's value for one row: numbers, column names, arithmetic and HELPERS calls; nothing else."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.Name) and node.id in row:
        return row[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left, row), _evaluate(node.right, row))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.operand, row))
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in HELPERS
            and not node.keywords):
        return HELPERS[node.func.id](*[_evaluate(arg, row) for arg in node.args])
    raise ValueError("a formula may use numbers, column names, arithmetic and " + ", ".join(sorted(HELPERS)))
