PREDICTABLE = "predictable"


def _issued(tokens):
    """The tokens one program issued in a row, or [PREDICTABLE] when they repeat or agree in most places."""
    tokens = [str(token) for token in tokens]
    for i, first in enumerate(tokens):
        for second in tokens[i + 1:]:
            alike = sum(x == y for x, y in zip(first, second))
            if first == second or alike >= max(8, len(first) // 2):
                return [PREDICTABLE]
    return tokens
