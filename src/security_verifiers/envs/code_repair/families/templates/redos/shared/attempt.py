
def _attempt(call, *args):
    try:
        return call(*args)
    except Exception as error:
        return type(error).__name__
