
import builtins


class _Reduce:
    def __init__(self, function, *args):
        self.function, self.args = function, args

    def __reduce__(self):
        return self.function, self.args

    def __call__(self, *args):
        return None


def _open(path):
    return pickle.dumps(_Reduce(open, path, "w"))


def _system(path):
    return pickle.dumps(_Reduce(os.system, "touch " + path))


def _exec(path):
    return pickle.dumps(_Reduce(exec, "open(%r, 'w').close()" % path))


def _eval(path):
    return pickle.dumps(_Reduce(eval, "open(%r, 'w').close()" % path))


def _chain(path):
    system = _Reduce(getattr, _Reduce(builtins.__import__, "os"), "system")
    return pickle.dumps(_Reduce(system, "touch " + path))
