"""The static taint check of timing-unsafe comparisons (``taint.py``): the vulnerable programs of the family are
exploited and the reference fixes are not, and so are the rewrites a policy would try in their place: equivalent
comparisons (``not a != b``, ``operator.eq``, ``a.__eq__(b)``, ``[a] == [b]``, ``a in [b]``, ``startswith`` plus a
length check), laundering the attacker's value (``"".join``, f-strings, ``str()``, slices, encodings), aliases and
rewiring of ``hmac.compare_digest``, introspection; while the constant-time ways (``hmac.compare_digest`` under any
alias, ``secrets.compare_digest``, comparing digests of both sides, an XOR accumulated over every byte) pass."""

from __future__ import annotations

import random
import textwrap

import pytest

from security_verifiers.envs.code_repair.families import families
from security_verifiers.envs.code_repair.taint import findings, static_exploited

SIGNING = '''
"""Webhook signatures."""

import hashlib
import hmac
import os
{imports}
WEBHOOK_SECRET = os.environ.get("WEBHOOK_SECRET", "").encode()
SIGNATURE_HEADER = "X-Shop-Signature"
{module_level}

def sign(body: bytes) -> str:
    return hmac.new(WEBHOOK_SECRET, body, hashlib.sha256).hexdigest()


def verify(body: bytes, signature: str) -> bool:
{body}
'''

HOOKS = '''
"""Deliveries."""

import json

from shop import signing

_queue: list[dict] = []


def receive(headers: dict[str, str], body: bytes) -> int:
    signature = headers.get(signing.SIGNATURE_HEADER)
    kind = headers.get("X-Shop-Event", "")
    if kind.lower() != "invoice" or not signature or not signing.verify(body, signature):
        return 401
    _queue.append(json.loads(body))
    return 202
'''

DIRECT = {"check": "secret_compare",
          "entries": [{"module": "shop.signing", "function": "verify", "position": 1, "param": "signature"}]}
THROUGH = {"check": "secret_compare", "entries": [{"module": "shop.hooks", "function": "receive", "position": 0,
                                                   "param": "headers", "key": "X-Shop-Signature"}]}


def program(body: str, imports: str = "", module_level: str = "", hooks: str = HOOKS,
            extra: dict[str, str] | None = None) -> dict[str, str]:
    source = SIGNING.format(imports=imports, module_level=module_level,
                            body=textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))
    return {"shop/__init__.py": "", "shop/signing.py": source, "shop/hooks.py": hooks, **(extra or {})}


def exploited(files: dict[str, str]) -> bool:
    direct, through = findings(DIRECT, files), findings(THROUGH, files)
    assert bool(direct) == bool(through), (direct, through)  # the same weakness, reached from either entry
    return bool(direct)


#: Rewrites that keep the leak (or that the check cannot clear): name -> (body of verify, imports, module level).
LEAKY = {
    "eq": ("return signature == sign(body)", "", ""),
    "ne_branch": ("expected = sign(body)\nif signature != expected:\n    return False\nreturn True", "", ""),
    "not_ne": ("return not signature != sign(body)", "", ""),
    "reversed_operands": ("return sign(body) == signature", "", ""),
    "operator_eq": ("return operator.eq(signature, sign(body))", "import operator", ""),
    "operator_alias": ("return same(signature, sign(body))", "from operator import eq as same", ""),
    "operator_module_alias": ("return EQ(signature, sign(body))", "import operator", "EQ = operator.eq"),
    "_operator": ("return _operator.eq(signature, sign(body))", "import _operator", ""),
    "getattr_operator": ("return getattr(operator, 'eq')(signature, sign(body))", "import operator", ""),
    "dunder_eq": ("return signature.__eq__(sign(body))", "", ""),
    "str_dunder_eq": ("return str.__eq__(signature, sign(body))", "", ""),
    "list_eq": ("return [signature] == [sign(body)]", "", ""),
    "tuple_eq": ("return (signature, 1) == (sign(body), 1)", "", ""),
    "in_list": ("return signature in [sign(body)]", "", ""),
    "in_set": ("return signature in {sign(body)}", "", ""),
    "in_reversed": ("return sign(body) in (signature,)", "", ""),
    "dict_lookup": ("return {sign(body): True}.get(signature, False)", "", ""),
    "dict_subscript": ("table = {sign(body): True}\nreturn table[signature]", "", ""),
    "startswith_len": ("expected = sign(body)\nreturn signature.startswith(expected) and len(signature) == "
                       "len(expected)", "", ""),
    "endswith": ("expected = sign(body)\nreturn expected.endswith(signature) and len(signature) == len(expected)",
                 "", ""),
    "find": ("return sign(body).find(signature) == 0", "", ""),
    "count": ("return sign(body).count(signature) == 1", "", ""),
    "replace": ("return signature.replace(sign(body), '') == ''", "", ""),
    "removeprefix": ("return not signature.removeprefix(sign(body))", "", ""),
    "join_launder": ("return ''.join(signature) == sign(body)", "", ""),
    "fstring_launder": ("return f'{signature}' == sign(body)", "", ""),
    "str_launder": ("return str(signature) == sign(body)", "", ""),
    "slice_launder": ("return signature[:] == sign(body)", "", ""),
    "concat_launder": ("return signature + '' == sign(body)", "", ""),
    "percent_launder": ("return '%s' % signature == sign(body)", "", ""),
    "format_launder": ("return '{}'.format(signature) == sign(body)", "", ""),
    "encode_launder": ("return signature.encode() == sign(body).encode()", "", ""),
    "bytes_launder": ("return bytes(signature, 'utf-8') == sign(body).encode()", "", ""),
    "list_join_launder": ("parts = []\nparts.append(signature)\nreturn '-'.join(parts) == sign(body)", "", ""),
    "walrus": ("return (s := signature.strip()) == sign(body)", "", ""),
    "generator_all": ("expected = sign(body)\nreturn len(signature) == len(expected) and "
                      "all(a == b for a, b in zip(signature, expected))", "", ""),
    "loop_early_exit": ("expected = sign(body)\nif len(signature) != len(expected):\n    return False\n"
                        "for a, b in zip(signature, expected):\n    if a != b:\n        return False\nreturn True",
                        "", ""),
    "xor_early_exit": ("expected = sign(body)\nfor a, b in zip(signature, expected):\n    if ord(a) ^ ord(b):\n"
                       "        return False\nreturn len(signature) == len(expected)", "", ""),
    "xor_any": ("expected = sign(body)\nreturn len(signature) == len(expected) and "
                "not any(ord(a) ^ ord(b) for a, b in zip(signature, expected))", "", ""),
    "while_index": ("expected = sign(body)\ni = 0\nwhile i < len(expected):\n    if signature[i] != expected[i]:\n"
                    "        return False\n    i += 1\nreturn len(signature) == len(expected)", "", ""),
    "min_max": ("expected = sign(body)\nreturn min(signature, expected) == max(signature, expected)", "", ""),
    "sorted": ("return len(set(sorted([signature, sign(body)]))) == 1", "", ""),
    "builtin_hash": ("return hash(signature) == hash(sign(body))", "", ""),
    "crc32": ("return zlib.crc32(signature.encode()) == zlib.crc32(sign(body).encode())", "import zlib", ""),
    "regex_escape": ("return re.fullmatch(re.escape(sign(body)), signature) is not None", "import re", ""),
    "map_eq": ("return all(map(operator.eq, signature, sign(body)))", "import operator", ""),
    "lambda_eq": ("same = lambda a, b: a == b\nreturn same(signature, sign(body))", "", ""),
    "helper_eq": ("return _same(signature, sign(body))", "", "def _same(a, b):\n    return a == b\n"),
    "nested_helper": ("def same(a, b):\n    return a == b\nreturn same(signature, sign(body))", "", ""),
    "reduce_early": ("return functools.reduce(lambda ok, ab: ok and ab[0] == ab[1], zip(signature, sign(body)), "
                     "True)", "import functools", ""),
    "match_statement": ("match signature:\n    case x if x == sign(body):\n        return True\n"
                        "    case _:\n        return False", "", ""),
    "assert": ("try:\n    assert signature == sign(body)\nexcept AssertionError:\n    return False\nreturn True",
               "", ""),
    "program_class": ("return _Sig(signature) == sign(body)", "",
                      "class _Sig(str):\n    pass\n"),
    "unknown_call": ("return _cache_check(signature)", "",
                     "_cache_check = __import__('functools').lru_cache()(lambda s: s)\n"),
    "decorated": ("return _checked(signature, sign(body))", "import functools",
                  "@functools.lru_cache(maxsize=None)\ndef _checked(a, b):\n    return hmac.compare_digest(a, b)\n"),
    "global_store": ("global LAST\nLAST = signature\nreturn hmac.compare_digest(signature, sign(body))", "",
                     "LAST = ''\n"),
    "list_store": ("SEEN.append(signature)\nreturn hmac.compare_digest(signature, sign(body))", "", "SEEN = []\n"),
    "dict_store": ("SEEN[signature] = 1\nreturn hmac.compare_digest(signature, sign(body))", "", "SEEN = {}\n"),
    "attribute_store": ("verify.last = signature\nreturn hmac.compare_digest(signature, sign(body))", "", ""),
    "patched_hmac": ("return hmac.compare_digest(signature, sign(body))", "",
                     "hmac.compare_digest = lambda a, b: a == b\n"),
    "setattr_hmac": ("return hmac.compare_digest(signature, sign(body))", "import operator",
                     "setattr(hmac, 'compare_digest', operator.eq)\n"),
    "shadowed_hmac": ("return hmac.compare_digest(signature, sign(body))", "",
                      "class _H:\n    compare_digest = staticmethod(lambda a, b: a == b)\n\n\nhmac = _H()\n"),
    "rebound_alias": ("return CHECK(signature, sign(body))", "import operator",
                      "CHECK = hmac.compare_digest\n\n\ndef _swap():\n    global CHECK\n    CHECK = operator.eq\n"),
    "conditional_alias": ("return CHECK(signature, sign(body))", "import operator",
                          "CHECK = hmac.compare_digest if os.environ.get('X') else operator.eq\n"),
    "globals_lookup": ("return globals()['hmac'].compare_digest(signature, sign(body))", "", ""),
    "frame": ("sys._getframe().f_locals\nreturn hmac.compare_digest(signature, sign(body))", "import sys", ""),
    "inspect": ("inspect.currentframe()\nreturn hmac.compare_digest(signature, sign(body))", "import inspect", ""),
    "exec": ("exec('pass')\nreturn hmac.compare_digest(signature, sign(body))", "", ""),
    "eval_module_level": ("return hmac.compare_digest(signature, sign(body))", "",
                          "eval('1')\n"),
    "getattr_dynamic": ("name = 'compare_' + 'digest'\nreturn getattr(hmac, name)(signature, sign(body))", "", ""),
    "dunder_globals": ("return sign.__globals__['hmac'].compare_digest(signature, sign(body))", "", ""),
    "gc": ("gc.collect()\nreturn hmac.compare_digest(signature, sign(body))", "import gc", ""),
    "vars": ("return vars(hmac)['compare_digest'](signature, sign(body))", "", ""),
    "star_args": ("pair = [signature, sign(body)]\nreturn _same(*pair)", "", "def _same(a, b):\n    return a == b\n"),
    "kwargs": ("return _same(b=sign(body), a=signature)", "", "def _same(a, b):\n    return a == b\n"),
    "default_comparator": ("return _check(signature, sign(body))", "import operator",
                           "def _check(a, b, eq=operator.eq):\n    return eq(a, b)\n"),
    "escaping_closure": ("LATER.append(lambda: signature == sign(body))\n"
                         "return hmac.compare_digest(signature, sign(body))", "", "LATER = []\n"),
    "type_dunder": ("return type(signature).__eq__(signature, sign(body))", "", ""),
    "object_dunder": ("return object.__eq__(signature, sign(body)) is True", "", ""),
    "class_attribute": ("return _Cmp.eq(signature, sign(body))", "import operator",
                        "class _Cmp:\n    eq = staticmethod(operator.eq)\n"),
    "int_compare": ("return int(signature, 16) == int(sign(body), 16)", "", ""),
    "counter": ("return collections.Counter(signature) == collections.Counter(sign(body))", "import collections",
                ""),
    "digest_per_character": ("expected = sign(body)\nif len(signature) != len(expected):\n    return False\n"
                             "for a, b in zip(signature, expected):\n    if not hmac.compare_digest(a, b):\n"
                             "        return False\nreturn True", "", ""),
    "digest_per_slice": ("expected = sign(body)\nfor i in range(0, len(expected), 4):\n"
                         "    if not hmac.compare_digest(signature[i:i + 4], expected[i:i + 4]):\n"
                         "        return False\nreturn len(signature) == len(expected)", "", ""),
    "hash_per_character": ("expected = sign(body)\nfor a, b in zip(signature, expected):\n"
                           "    if hashlib.sha256(a.encode()).digest() != hashlib.sha256(b.encode()).digest():\n"
                           "        return False\nreturn len(signature) == len(expected)", "", ""),
    "patch_in_function": ("return hmac.compare_digest(signature, sign(body))", "import operator",
                          "def _patch():\n    setattr(hmac, 'compare_digest', operator.eq)\n\n\n_patch()\n"),
    "sys_modules": ("me = sys.modules[__name__]\nreturn me.hmac.compare_digest(signature, sign(body))", "import sys",
                    ""),
}

#: Rewrites that compare in constant time (or compare only what is not secret): name -> (body, imports, module).
SAFE = {
    "compare_digest": ("return hmac.compare_digest(signature.encode(), sign(body).encode())", "", ""),
    "compare_digest_str": ("return hmac.compare_digest(signature, sign(body))", "", ""),
    "secrets": ("return secrets.compare_digest(signature, sign(body))", "import secrets", ""),
    "from_import_alias": ("return same(signature, sign(body))", "from hmac import compare_digest as same", ""),
    "module_alias": ("return EQ(signature, sign(body))", "", "EQ = hmac.compare_digest\n"),
    "local_alias": ("eq = hmac.compare_digest\nreturn eq(signature, sign(body))", "", ""),
    "getattr_literal": ("return getattr(hmac, 'compare_digest')(signature, sign(body))", "", ""),
    "len_guard": ("expected = sign(body)\nif len(signature) != len(expected):\n    return False\n"
                  "return hmac.compare_digest(signature, expected)", "", ""),
    "hash_both": ("return hashlib.sha256(signature.encode()).digest() == hashlib.sha256(sign(body).encode())"
                  ".digest()", "", ""),
    "hmac_both": ("key = os.urandom(32)\nmine = hmac.new(key, signature.encode(), 'sha256').digest()\n"
                  "return mine == hmac.new(key, sign(body).encode(), 'sha256').digest()", "", ""),
    "xor_accumulate": ("expected = sign(body).encode()\ngiven = signature.encode()\n"
                       "if len(given) != len(expected):\n    return False\nresult = 0\n"
                       "for x, y in zip(given, expected):\n    result |= x ^ y\nreturn result == 0", "", ""),
    "normalised_first": ("given = signature.strip().lower()\nif given.startswith('sha256='):\n"
                         "    given = given[len('sha256='):]\n"
                         "return hmac.compare_digest(given.encode('ascii', 'replace'), sign(body).encode())", "", ""),
    "empty_check": ("if not signature or signature is None or signature == '':\n    return False\n"
                    "return hmac.compare_digest(signature, sign(body))", "", ""),
    "literal_membership": ("if signature in ('', 'none') or len(signature) not in (64,):\n    return False\n"
                           "return hmac.compare_digest(signature, sign(body))", "", ""),
    "helper": ("return _same(signature, sign(body))", "",
               "def _same(a: str, b: str) -> bool:\n    return hmac.compare_digest(a.encode(), b.encode())\n"),
    "lambda_helper": ("return _same(signature, sign(body))", "",
                      "_same = lambda a, b: hmac.compare_digest(a, b)\n"),
    "logging": ("if not hmac.compare_digest(signature, sign(body)):\n"
                "    log.warning('bad signature %s', signature[:8])\n    return False\nreturn True",
                "import logging", "log = logging.getLogger(__name__)\n"),
    "regex_literal": ("if not HEX.fullmatch(signature):\n    return False\n"
                      "return hmac.compare_digest(signature, sign(body))", "import re",
                      "HEX = re.compile(r'[0-9a-f]{64}')\n"),
    "exception_message": ("if not hmac.compare_digest(signature, sign(body)):\n"
                          "    raise ValueError(f'bad signature {signature!r}')\nreturn True", "", ""),
    "unbound_methods": ("given = str.encode(str.strip(signature))\n"
                        "return hmac.compare_digest(given, bytes.fromhex(sign(body)).hex().encode())", "", ""),
    "isinstance_guard": ("if not isinstance(signature, str) or len(signature) > 200:\n    return False\n"
                         "return hmac.compare_digest(signature, sign(body))", "", ""),
    "prefix_slice_and_pieces": ("scheme, _, digest = signature.partition('=')\nrest = signature[len(scheme) + 1:]\n"
                                "if scheme.lower() != 'sha256' or not rest:\n    return False\n"
                                "return hmac.compare_digest('sha256=' + digest, sign(body))", "", ""),
    "try_except": ("try:\n    given = signature.encode('ascii')\nexcept UnicodeEncodeError:\n    return False\n"
                   "return hmac.compare_digest(given, sign(body).encode())", "", ""),
}


@pytest.mark.parametrize("name", sorted(LEAKY))
def test_leaky_rewrites_are_exploited(name: str) -> None:
    body, imports, module_level = LEAKY[name]
    assert exploited(program(body, imports, module_level)), name


@pytest.mark.parametrize("name", sorted(SAFE))
def test_constant_time_rewrites_pass(name: str) -> None:
    body, imports, module_level = SAFE[name]
    files = program(body, imports, module_level)
    assert not findings(DIRECT, files), findings(DIRECT, files)
    assert not findings(THROUGH, files), findings(THROUGH, files)


def test_across_modules() -> None:
    """The comparison moved into another module of the program is followed there."""
    util = ("def same(a, b):\n    return a == b\n\n\n"
            "def safe(a, b):\n    import hmac\n    return hmac.compare_digest(a, b)\n")
    leaky = program("return util.same(signature, sign(body))", "from shop import util", extra={"shop/util.py": util})
    safe = program("return util.safe(signature, sign(body))", "from shop import util", extra={"shop/util.py": util})
    relative = program("return same(signature, sign(body))", "from .util import same", extra={"shop/util.py": util})
    assert exploited(leaky) and exploited(relative)
    assert not exploited(safe)


def test_rewired_from_another_module() -> None:
    """Another module of the program replacing what the check function uses is a rewiring too."""
    boot = "import operator\n\nfrom shop import signing\n\nsigning.hmac = operator\n"
    files = program("return hmac.compare_digest(signature, sign(body))", extra={"shop/boot.py": boot})
    assert exploited(files)


def test_other_items_of_the_mapping_are_not_the_attackers_secret() -> None:
    """Only the item under the rule's key is followed: the event kind may be compared freely, the signature not."""
    files = program("return hmac.compare_digest(signature, sign(body))")
    assert not findings(THROUGH, files)
    leaky = HOOKS.replace('kind.lower() != "invoice"', 'headers.get("X-Shop-Signature") != kind')
    assert findings(THROUGH, program("return hmac.compare_digest(signature, sign(body))", hooks=leaky))
    # a key the check cannot resolve gives the attacker's value (here used safely)
    dynamic = HOOKS.replace("headers.get(signing.SIGNATURE_HEADER)", "headers.get(_name())").replace(
        "_queue: list", "def _name():\n    return 'X-Shop-Signature'\n\n\n_queue: list")
    assert not findings(THROUGH, program("return hmac.compare_digest(signature, sign(body))", hooks=dynamic))
    everything = HOOKS.replace('kind.lower() != "invoice" or ', "").replace(
        "signature = headers.get(signing.SIGNATURE_HEADER)",
        "signature = {k.lower(): v for k, v in headers.items()}.get('x-shop-signature')")
    assert not findings(THROUGH, program("return hmac.compare_digest(signature, sign(body))", hooks=everything))
    compared = HOOKS.replace("signature = headers.get(signing.SIGNATURE_HEADER)",
                             "signature = headers.get(signing.SIGNATURE_HEADER)\n    if signature in SEEN:\n"
                             "        return 409").replace("_queue: list", "SEEN: set = set()\n_queue: list")
    assert findings(THROUGH, program("return hmac.compare_digest(signature, sign(body))", hooks=compared))


def test_missing_or_broken_entry_is_exploited() -> None:
    files = program("return hmac.compare_digest(signature, sign(body))")
    renamed = {**files, "shop/signing.py": files["shop/signing.py"].replace("def verify(", "def verify_sig(")}
    assert findings(DIRECT, renamed)
    assert findings(DIRECT, {**files, "shop/signing.py": "def verify(:\n"})
    assert findings({"check": "nonsense"}, files)
    assert findings({"check": "secret_compare", "entries": []}, files)


@pytest.mark.parametrize("variant", families()["timing_unsafe_comparison"].all_variants)
def test_family_programs(variant: str) -> None:
    """Every static probe of the family: the vulnerable version exploited, the reference fix not (several seeds)."""
    build = families()["timing_unsafe_comparison"].build
    for seed in range(4):
        program_ = build(random.Random(seed), variant)
        static = [p.id for p in program_.exploits() if p.detect is not None and p.detect.kind == "static"]
        assert static
        assert static_exploited(program_, program_.files) == dict.fromkeys(static, True)
        assert static_exploited(program_, program_.fixed) == dict.fromkeys(static, False)


@pytest.mark.parametrize("variant", families()["timing_unsafe_comparison"].all_variants)
def test_family_fix_rewritten_with_equality_is_exploited(variant: str) -> None:
    """Undoing the fix in the family's own program (compare_digest back to ``==`` on the encoded values)."""
    program_ = families()["timing_unsafe_comparison"].build(random.Random(7), variant)
    undone = {path: text.replace("hmac.compare_digest(", "_eq(").replace(
        "\nimport hmac\n", "\nimport hmac\n\n\ndef _eq(a, b):\n    return a == b\n") for path, text in
        program_.fixed.items()}
    assert any(undone[path] != program_.fixed[path] for path in undone)
    assert all(static_exploited(program_, undone).values())
