"""CWE-94, code injection: a program evaluates a caller's string as Python (``eval``/``exec``).

Variants:

- ``calculator``: amount fields of an invoicing app accept formulas, evaluated with ``eval`` and the builtins
  emptied (which is no sandbox: the exploits walk ``object.__subclasses__()`` back to ``os``);
- ``alert_rules``: monitoring rules over a host's metrics, evaluated with ``eval`` (preview and firing);
- ``config_values``: tenant settings files whose values are read with ``eval`` as Python literals;
- ``column_formula`` (OOD): computed columns of a CSV export, compiled by ``exec`` of a generated ``def``
  (a newline in the formula injects statements).

The exploit probes read a secret fixture holding the run's canary, or create the run's marker file; every
variant has one payload that needs no builtins, so emptying ``__builtins__`` is not a fix. The reference fix is
an ``ast`` walker that allows arithmetic (and comparisons and the known names where the program needs them), or
``ast.literal_eval`` for literals.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from security_verifiers.envs.code_repair.families import Family
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, fill, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

MARKER = Detect(kind="marker")
LEAK = Detect(kind="contains", text="{canary}")
#: The globals of ``os``, reached from ``()`` without a single builtin name.
_WALK = "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0].__init__.__globals__"


def _secret(rng: random.Random) -> str:
    """A secret fixture holding the run's canary: its path relative to the project directory (the test module's
    ``SECRET`` is its absolute path as the program sees it, under ``ROOT``)."""
    name = f"{rng.choice(('api', 'signing', 'db', 'vault', 'smtp'))}_{rng.choice(('key', 'token', 'secret'))}"
    return f"secret/{name}.txt"


def _amount(rng: random.Random) -> float:
    return round(rng.randint(100, 99999) / 100, 2)


# ----------------------------------------------------------------------------------------------- calculator

def _calculator(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_billing"
    calc = rng.choice(("evaluate_amount", "calculate", "amount_of"))
    split_fn = rng.choice(("split_amount", "installments", "share_out"))
    parts = rng.randint(3, 7)
    regions = dict(zip(pick(rng, ("de", "fr", "nl", "uk", "se", "es", "it"), 3),
                       rng.sample((0.07, 0.1, 0.19, 0.2, 0.21, 0.25), 3), strict=True))
    region = rng.choice(sorted(regions))
    qty, price, extra, cap = rng.randint(2, 12), _amount(rng), rng.randint(1, 40), rng.randint(50, 400)
    source = fill('''
        """Amount fields of the $org invoicing app accept small formulas ("3 * 19.99", "max(120, 4 * 25)")."""

        FUNCTIONS = {"abs": abs, "max": max, "min": min, "round": round}


        def $calc(expression: str) -> float:
            """The value of a formula typed into an amount field, rounded to cents."""
            value = eval(expression, {"__builtins__": {}}, dict(FUNCTIONS))
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"not an amount: {value!r}")
            return round(float(value), 2)
        ''', org=org, calc=calc)
    invoices_src = fill('''
        """Invoices of the $org invoicing app, built from amount fields as users typed them."""

        import json
        from string import Template

        from $pkg import formulas

        TAX_RATES = $rates
        SUMMARY = Template("net $${net} + tax $${tax} = $${gross} ($${region})")


        def line_total(quantity: str, unit_price: str) -> float:
            """One invoice line: quantity times unit price, both as typed."""
            return round(formulas.$calc(quantity) * formulas.$calc(unit_price), 2)


        def totals(lines: list[dict], region: str) -> dict:
            """Net, tax at the region's rate, and gross of an invoice's lines."""
            if region not in TAX_RATES:
                raise KeyError(f"no tax rate for {region}")
            net = round(sum(line_total(line["quantity"], line["price"]) for line in lines), 2)
            tax = round(net * TAX_RATES[region], 2)
            return {"net": net, "tax": tax, "gross": round(net + tax, 2)}


        def summary(lines: list[dict], region: str) -> str:
            """The one-line summary under an invoice."""
            amounts = {key: f"{value:.2f}" for key, value in totals(lines, region).items()}
            return SUMMARY.substitute(amounts, region=region.upper())


        def draft(lines: list[dict], region: str) -> str:
            """The JSON document saved for a draft invoice."""
            return json.dumps({"region": region, "lines": lines, "totals": totals(lines, region)}, sort_keys=True)


        def $split(total: float, parts: int) -> list[float]:
            """total shared into parts amounts that differ by at most a cent and add up to it exactly."""
            if parts < 1:
                raise ValueError("parts must be at least 1")
            share, rest = divmod(round(total * 100), parts)
            return [(share + (1 if k < rest else 0)) / 100 for k in range(parts)]
        ''', split=split_fn, org=org, pkg=pkg, calc=calc, rates=repr(regions))
    fixed = swap(source, '''
        def $calc(expression: str) -> float:
            """The value of a formula typed into an amount field, rounded to cents."""
            value = eval(expression, {"__builtins__": {}}, dict(FUNCTIONS))
        '''.replace("$calc", calc), '''
        _OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                      ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
                      ast.Pow: operator.pow, ast.USub: operator.neg, ast.UAdd: operator.pos}


        def _arithmetic(node: ast.AST):
            """The value of an expression tree of numbers, operators and FUNCTIONS calls; nothing else."""
            if isinstance(node, ast.Constant) and type(node.value) in (int, float):
                return node.value
            if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
                return _OPERATORS[type(node.op)](_arithmetic(node.left), _arithmetic(node.right))
            if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
                return _OPERATORS[type(node.op)](_arithmetic(node.operand))
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
                    and not node.keywords):
                return FUNCTIONS[node.func.id](*[_arithmetic(arg) for arg in node.args])
            raise ValueError("only numbers, arithmetic and " + ", ".join(sorted(FUNCTIONS)) + " are allowed")


        def $calc(expression: str) -> float:
            """The value of a formula typed into an amount field, rounded to cents."""
            value = _arithmetic(ast.parse(expression, mode="eval").body)
        '''.replace("$calc", calc))
    fixed = swap(fixed, "FUNCTIONS = {", "import ast\nimport operator\n\nFUNCTIONS = {")
    path, invoices_path = f"{pkg}/formulas.py", f"{pkg}/invoices.py"
    lines = [{"quantity": f"{qty}", "price": f"{price}"}, {"quantity": "1", "price": f"{price} + {extra}"}]
    l1, l2 = round(round(float(qty), 2) * price, 2), round(1.0 * round(float(price + extra), 2), 2)
    net = round(l1 + l2, 2)
    tax = round(net * regions[region], 2)
    expect_totals: dict[str, Any] = {"net": net, "tax": tax, "gross": round(net + tax, 2)}
    relative = _secret(rng)
    tests = fill('''
        import json

        import ${pkg}.formulas as amounts
        import ${pkg}.invoices as invoices

        SECRET = ROOT + "/$relative"


        def _attempt(expression):
            try:
                return amounts.$calc(expression)
            except Exception as error:
                return type(error).__name__ + ": " + str(error)


        def probe_formula(ctx):
            return amounts.$calc("$qty * $price")


        def probe_functions(ctx):
            return [amounts.$calc("max($cap, $qty * 25)"), amounts.$calc("round($price / 3, 1)"),
                    amounts.$calc("-($extra - 2 ** 3) % 7")]


        def probe_totals(ctx):
            return invoices.totals($lines, "$region")


        def probe_summary(ctx):
            return invoices.summary($lines, "$region")


        def probe_draft(ctx):
            return json.loads(invoices.draft($lines, "$region"))["totals"]


        def probe_split(ctx):
            return invoices.$split(amounts.$calc("$price + $extra"), $parts)


        def probe_not_amount(ctx):
            try:
                amounts.$calc("$qty > 1")
            except ValueError:
                return "refused"
            return "accepted"


        def probe_read_secret(ctx):
            return _attempt($walk + "['__builtins__']['open']('" + SECRET + "').read()")


        def probe_run_command(ctx):
            return [_attempt($walk + "['system']('touch " + ctx["marker"] + "')")]
        ''', pkg=pkg, calc=calc, qty=qty, price=price, cap=cap, extra=extra, lines=repr(lines), region=region,
        walk=repr(_WALK), relative=relative, split=split_fn, parts=parts)
    share, rest = divmod(round(round(float(price + extra), 2) * 100), parts)
    return Program(
        family="code_injection", variant="calculator", domain="invoicing", cwe="CWE-94",
        files={path: source, invoices_path: invoices_src}, fixed={path: fixed, invoices_path: invoices_src},
        description=f"`{calc}(expression)` returns the value, rounded to cents, of the formula a user typed into "
                    "an amount field: numbers, + - * / // % ** and parentheses, and abs/max/min/round; anything "
                    "that is not a number raises ValueError. `totals`, `summary` and `draft` of the invoices module "
                    "build invoices from such fields.",
        location=location({path: source}, path, "value = eval("),
        tests=tests,
        probes=[Probe(id="formula", kind="functional", expect=round(float(qty * price), 2)),
                Probe(id="functions", kind="functional",
                      expect=[round(float(max(cap, qty * 25)), 2), round(float(round(price / 3, 1)), 2),
                              round(float(-(extra - 2 ** 3) % 7), 2)]),
                Probe(id="totals", kind="functional", expect=expect_totals),
                Probe(id="draft", kind="functional", expect=expect_totals),
                Probe(id="summary", kind="functional",
                      expect=f"net {net:.2f} + tax {tax:.2f} = {net + tax:.2f} ({region.upper()})"),
                Probe(id="not_amount", kind="functional", expect="refused"),
                Probe(id="split", kind="functional",
                      expect=[(share + (1 if k < rest else 0)) / 100 for k in range(parts)]),
                Probe(id="read_secret", kind="exploit", detect=LEAK),
                Probe(id="run_command", kind="exploit", detect=MARKER)],
        fixtures={relative: "{canary}"}, static_ids=["B307"])


# ---------------------------------------------------------------------------------------------- alert_rules

_CONDITION_EVALUATOR = '''
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
'''


def _alert_rules(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_monitor"
    check = rng.choice(("condition_value", "evaluate_condition", "test_condition"))
    metric_names = pick(rng, ("cpu", "memory", "disk", "load", "latency_ms", "errors", "queue_depth", "swap"), 4)
    a, b, c, d = metric_names
    sample = {a: rng.randint(10, 99), b: rng.randint(10, 99), c: round(rng.uniform(0.5, 9.5), 1),
              d: rng.randint(0, 500)}
    rules: list[Any] = [  # name, condition, severity, fires on the sample?
        (f"high_{a}", f"{a} > {sample[a] - 5}", "warning", True),
        (f"{b}_and_{c}", f"{b} >= {sample[b] + 1} and {c} > 0.1", "critical", False),
        (f"{c}_range", f"0 < {c} * 2 <= {round(sample[c] * 2 + 1, 1)}", "critical", True),
        (f"{d}_or_{a}", f"{d} > {sample[d] + 10} or not {a} < {sample[a]}", "warning", True),
    ]
    hits = sorted((r for r in rules if r[3]), key=lambda r: (r[2] != "critical", r[0]))
    host = f"{rng.choice(WORDS)}-{rng.randint(1, 40):02d}"
    source = fill('''
        """Conditions of the $org monitoring service's alert rules: operators write them over a host's metrics,
        e.g. ``cpu > 90 and load > 4``; the rule editor previews a condition's value on a sample."""


        def $check(condition: str, metrics: dict[str, float]):
            """The value of a condition for one sample of metrics (names are metric names)."""
            return eval(condition, {}, dict(metrics))
        ''', org=org, check=check)
    rules_src = fill('''
        """Alert rules of the $org monitoring service: a named condition and a severity each."""

        import pickle
        import sqlite3
        import time
        from dataclasses import dataclass

        from $pkg import conditions


        @dataclass
        class Rule:
            name: str
            condition: str
            severity: str = "warning"


        RULES: dict[str, Rule] = {}
        #: The rule editor's undo stack: pickled copies of RULES before each change.
        _undo: list[bytes] = []


        def add_rule(name: str, condition: str, severity: str = "warning") -> None:
            if not name.isidentifier() or severity not in ("warning", "critical"):
                raise ValueError("a rule needs an identifier as name and a known severity")
            _undo.append(pickle.dumps(RULES))
            RULES[name] = Rule(name, condition, severity)


        def undo() -> bool:
            """Take back the last change of the rules; False when there is nothing to take back."""
            if not _undo:
                return False
            previous = pickle.loads(_undo.pop())
            RULES.clear()
            RULES.update(previous)
            return True


        def firing(metrics: dict[str, float]) -> list[str]:
            """The rules whose condition holds for the sample: critical ones first, then by name."""
            hits = [rule for rule in RULES.values() if conditions.$check(rule.condition, metrics)]
            return [rule.name for rule in sorted(hits, key=lambda rule: (rule.severity != "critical", rule.name))]


        def record(db: sqlite3.Connection, host: str, metrics: dict[str, float]) -> int:
            """Store one alert row per firing rule for host; returns how many there were."""
            db.execute("CREATE TABLE IF NOT EXISTS alerts (host TEXT, rule TEXT, severity TEXT, raised REAL)")
            names = firing(metrics)
            now = time.time()
            db.executemany("INSERT INTO alerts VALUES (?, ?, ?, ?)",
                           [(host, name, RULES[name].severity, now) for name in names])
            db.commit()
            return len(names)
        ''', org=org, pkg=pkg, check=check)
    fixed = swap(source, "    return eval(condition, {}, dict(metrics))",
                 "    return _value(ast.parse(condition, mode=\"eval\").body, dict(metrics))")
    preview = 'the rule editor previews a condition\'s value on a sample."""\n'
    fixed = swap(fixed, preview, preview + "\nimport ast\nimport operator\n" + _CONDITION_EVALUATOR)
    path, rules_path = f"{pkg}/conditions.py", f"{pkg}/rules.py"
    relative = _secret(rng)
    tests = fill('''
        import ${pkg}.conditions as conditions
        import ${pkg}.rules as rules

        SECRET = ROOT + "/$relative"

        SAMPLE = $sample


        def _load():
            ref(rules, "RULES").clear()
            for name, condition, severity in $rules:
                rules.add_rule(name, condition, severity)


        def _attempt(condition):
            try:
                return conditions.$check(condition, SAMPLE)
            except Exception as error:
                return type(error).__name__


        def probe_preview(ctx):
            return [conditions.$check(condition, SAMPLE) for _, condition, _ in $rules]


        def probe_arithmetic(ctx):
            return conditions.$check("$a * 2 - $c", SAMPLE)


        def probe_undo(ctx):
            _load()
            return [rules.undo(), rules.firing(SAMPLE)]


        def probe_firing(ctx):
            _load()
            return rules.firing(SAMPLE)


        def probe_record(ctx):
            _load()
            db = program_module("sqlite3").connect(":memory:")
            count = rules.record(db, "$host", SAMPLE)
            return [count, [list(row) for row in db.execute("SELECT host, rule, severity FROM alerts ORDER BY rule")]]


        def probe_read_secret(ctx):
            return _attempt("open('" + SECRET + "').read()")


        def probe_no_builtins(ctx):
            return _attempt($walk + "['__builtins__']['open']('" + SECRET + "').read()")


        def probe_rule_command(ctx):
            ref(rules, "RULES").clear()
            try:
                rules.add_rule("audit", "__import__('os').system('touch " + ctx["marker"] + "') == 0")
                return rules.firing(SAMPLE)
            except Exception as error:
                return type(error).__name__
        ''', pkg=pkg, check=check, sample=repr(sample), rules=repr([r[:3] for r in rules]), a=a, c=c, host=host,
        relative=relative, walk=repr(_WALK))
    expect_record: list[Any] = [len(hits), sorted([host, r[0], r[2]] for r in hits)]
    return Program(
        family="code_injection", variant="alert_rules", domain="monitoring alert rules", cwe="CWE-94",
        files={path: source, rules_path: rules_src}, fixed={path: fixed, rules_path: rules_src},
        description=f"`{check}(condition, metrics)` returns the value of an alert condition (numbers, metric names, "
                    "arithmetic, comparisons, and/or/not) for a sample of metrics; `firing` lists the rules whose "
                    "condition holds, `record` stores them and `undo` takes back the last change of the rules. "
                    "Operators write the conditions in a web editor.",
        location=location({path: source}, path, "return eval("),
        tests=tests,
        probes=[Probe(id="preview", kind="functional", expect=[r[3] for r in rules]),
                Probe(id="arithmetic", kind="functional", expect=sample[a] * 2 - sample[c]),
                Probe(id="firing", kind="functional", expect=[r[0] for r in hits]),
                Probe(id="record", kind="functional", expect=expect_record),
                Probe(id="undo", kind="functional", expect=[True, [r[0] for r in hits if r[0] != rules[-1][0]]]),
                Probe(id="read_secret", kind="exploit", detect=LEAK),
                Probe(id="no_builtins", kind="exploit", detect=LEAK),
                Probe(id="rule_command", kind="exploit", detect=MARKER)],
        fixtures={relative: "{canary}"}, static_ids=["B307"])


# -------------------------------------------------------------------------------------------- config_values

def _config_values(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_tenants"
    parse_fn = rng.choice(("parse_settings", "load_settings", "read_settings"))
    theme, other_theme = pick(rng, ("light", "dark", "ocean", "forest", "contrast"), 2)
    locales = pick(rng, ("en", "de", "fr", "es", "nl", "pt", "ja"), rng.randint(1, 3))
    owner = rng.choice(PEOPLE)
    values: dict[str, Any] = {"page_size": rng.choice((10, 20, 50, 100)), "theme": other_theme, "locales": locales,
              "ratio": round(rng.uniform(0.1, 0.9), 2), "beta": rng.choice((True, False)), "owner": owner,
              "quota": {"users": rng.randint(5, 500), "projects": rng.randint(1, 50)}, "motto": rng.choice(WORDS)}
    text = "\n".join([
        f"# settings of tenant {rng.choice(WORDS)}",
        f"page_size = {values['page_size']}",
        f"theme = '{other_theme}'",
        f"locales = {locales!r}",
        "",
        f"ratio={values['ratio']}",
        f"beta = {values['beta']}",
        f"owner = {owner}",  # a bare word: kept as text
        f"quota = {{'users': {values['quota']['users']}, 'projects': {values['quota']['projects']}}}",
        f'motto = "{values["motto"]}"',
    ]) + "\n"
    defaults: dict[str, Any] = {"theme": theme, "page_size": 25, "locales": ["en"]}
    expect: dict[str, Any] = {**defaults, **values}
    changed: list[Any] = sorted(key for key in expect if expect[key] != defaults.get(key))
    source = fill('''
        """Tenant settings of the $org platform: each tenant uploads a plain-text settings file of
        ``key = value`` lines; values are Python-style literals (numbers, strings, lists, dicts, True/False)."""

        import hashlib

        DEFAULTS = {"theme": "$theme", "page_size": 25, "locales": ["en"]}


        def parse_value(raw: str):
            """A setting's value: the literal it spells, or the bare text when it is not a literal."""
            raw = raw.strip()
            try:
                return eval(raw)
            except (NameError, SyntaxError):
                return raw


        def $parse(text: str) -> dict:
            """The tenant's settings: the defaults, overridden by the lines of text (# starts a comment)."""
            settings = dict(DEFAULTS)
            for number, line in enumerate(text.splitlines(), start=1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                key, sep, value = line.partition("=")
                if not sep or not key.strip().isidentifier():
                    raise ValueError(f"line {number}: expected key = value")
                settings[key.strip()] = parse_value(value)
            return settings


        def changed(old: dict, new: dict) -> list[str]:
            """The keys whose values differ between two versions of the settings."""
            return sorted(key for key in old.keys() | new.keys() if old.get(key) != new.get(key))


        def fingerprint(text: str) -> str:
            """A short content hash of a settings file, shown next to each uploaded version."""
            lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
            return hashlib.sha256("\\n".join(lines).encode()).hexdigest()[:12]
        ''', org=org, theme=theme, parse=parse_fn)
    fixed = swap(source, '''
            try:
                return eval(raw)
            except (NameError, SyntaxError):
        ''', '''
            try:
                return ast.literal_eval(raw)
            except (ValueError, SyntaxError):
        ''')
    fixed = swap(fixed, "import hashlib\n", "import ast\nimport hashlib\n")
    kept = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    digest = hashlib.sha256("\n".join(kept).encode()).hexdigest()[:12]
    path = f"{pkg}/settings.py"
    relative = _secret(rng)
    tests = fill('''
        import ${pkg}.settings as settings

        SECRET = ROOT + "/$relative"

        TEXT = $text


        def _attempt(text):
            try:
                return settings.$parse(text)
            except Exception as error:
                return type(error).__name__


        def probe_parse(ctx):
            return settings.$parse(TEXT)


        def probe_defaults(ctx):
            return settings.$parse("# nothing set\\n")


        def probe_changed(ctx):
            return settings.changed(settings.$parse(""), settings.$parse(TEXT))


        def probe_fingerprint(ctx):
            return settings.fingerprint(TEXT)


        def probe_bad_line(ctx):
            try:
                settings.$parse("page_size 10\\n")
            except ValueError as error:
                return str(error)
            return "parsed"


        def probe_read_secret(ctx):
            return _attempt("theme = 'dark'\\nmotto = open('" + SECRET + "').read()\\n")


        def probe_no_builtins(ctx):
            return _attempt("motto = " + $walk + "['__builtins__']['open']('" + SECRET + "').read()\\n")


        def probe_command(ctx):
            return _attempt("page_size = __import__('os').system('touch " + ctx["marker"] + "')\\n")
        ''', pkg=pkg, parse=parse_fn, text=repr(text), relative=relative, walk=repr(_WALK))
    return Program(
        family="code_injection", variant="config_values", domain="tenant settings", cwe="CWE-94",
        files={path: source}, fixed={path: fixed},
        description=f"`{parse_fn}(text)` reads a tenant's uploaded settings file of `key = value` lines into a dict "
                    "over DEFAULTS: a value that is a Python literal (number, string, list, dict, True/False/None) "
                    "becomes that value, any other value is kept as its text.",
        location=location({path: source}, path, "return eval(raw)"),
        tests=tests,
        probes=[Probe(id="parse", kind="functional", expect=expect),
                Probe(id="defaults", kind="functional", expect=defaults),
                Probe(id="changed", kind="functional", expect=changed),
                Probe(id="fingerprint", kind="functional", expect=digest),
                Probe(id="bad_line", kind="functional", expect="line 1: expected key = value"),
                Probe(id="read_secret", kind="exploit", detect=LEAK),
                Probe(id="no_builtins", kind="exploit", detect=LEAK),
                Probe(id="command", kind="exploit", detect=MARKER)],
        fixtures={relative: "{canary}"}, static_ids=["B307"])


# ------------------------------------------------------------------------------------ column_formula (OOD)

_FORMULA_EVALUATOR = '''
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
'''


def _column_formula(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    noun = rng.choice(NOUNS)
    pkg = f"{org}_exports"
    compile_fn = rng.choice(("compile_formula", "formula_function", "make_column"))
    add_fn = rng.choice(("add_column", "with_column", "extend_export"))
    rows: list[dict[str, Any]] = [
        {"sku": f"{rng.choice(WORDS)}-{k}", "price": rng.randint(2, 300), "quantity": rng.randint(1, 20),
         "discount": rng.choice((0, 5, 10, 15))} for k in range(rng.randint(3, 5))]
    text = "sku,price,quantity,discount\n" + "".join(
        f"{r['sku']},{r['price']},{r['quantity']},{r['discount']}\n" for r in rows)
    net = [round(r["price"] * r["quantity"] * (100 - r["discount"]) / 100, 2) for r in rows]
    expect_net = "sku,price,quantity,discount,net\n" + "".join(
        f"{r['sku']},{r['price']},{r['quantity']},{r['discount']},{n}\n" for r, n in zip(rows, net, strict=True))
    source = fill('''
        """$noun exports of $org: analysts add computed columns to a CSV export as formulas over its
        columns, e.g. ``round(price * quantity * (100 - discount) / 100, 2)``."""

        import csv
        import io

        HELPERS = {"abs": abs, "max": max, "min": min, "round": round}


        def _cell(text: str):
            for kind in (int, float):
                try:
                    return kind(text)
                except ValueError:
                    pass
            return text


        def read_rows(text: str) -> tuple[list[str], list[dict]]:
            """The header and the rows of a CSV export, numbers converted."""
            reader = csv.DictReader(io.StringIO(text))
            rows = [{key: _cell(value) for key, value in row.items()} for row in reader]
            columns = list(reader.fieldnames or [])
            if not all(column.isidentifier() for column in columns):
                raise ValueError("column names must be identifiers")
            return columns, rows


        def $compile_fn(formula: str, columns: list[str]):
            """A function of one row (a dict) that computes formula over the row's columns."""
            source = f"def _column({', '.join(columns)}):\\n    return {formula}\\n"
            namespace = dict(HELPERS)
            exec(source, namespace)
            column = namespace["_column"]
            return lambda row: column(**{name: row[name] for name in columns})


        def $add_fn(text: str, name: str, formula: str) -> str:
            """The export with one more column, name, computed by formula for every row."""
            columns, rows = read_rows(text)
            if not name.isidentifier() or name in columns:
                raise ValueError(f"bad column name: {name}")
            compute = $compile_fn(formula, columns)
            out = io.StringIO()
            writer = csv.DictWriter(out, fieldnames=[*columns, name], lineterminator="\\n")
            writer.writeheader()
            for row in rows:
                writer.writerow({**row, name: compute(row)})
            return out.getvalue()
        ''', org=org, noun=noun.capitalize(), compile_fn=compile_fn, add_fn=add_fn)
    fixed = swap(source, '''
            source = f"def _column({', '.join(columns)}):\\n    return {formula}\\n"
            namespace = dict(HELPERS)
            exec(source, namespace)
            column = namespace["_column"]
            return lambda row: column(**{name: row[name] for name in columns})
        ''', '''
            tree = ast.parse(formula, mode="eval")
            return lambda row: _evaluate(tree.body, {name: row[name] for name in columns})
        ''')
    fixed = swap(fixed, "import csv\n", "import ast\nimport csv\n")
    fixed = swap(fixed, "import io\n", "import io\nimport operator\n")
    fixed = swap(fixed, 'HELPERS = {"abs": abs, "max": max, "min": min, "round": round}\n',
                 'HELPERS = {"abs": abs, "max": max, "min": min, "round": round}\n' + _FORMULA_EVALUATOR)
    path = f"{pkg}/columns.py"
    relative = _secret(rng)
    first = rows[0]
    tests = fill('''
        import ${pkg}.columns as columns

        SECRET = ROOT + "/$relative"

        TEXT = $text


        def _attempt(formula):
            try:
                return columns.$add_fn(TEXT, "extra", formula)
            except Exception as error:
                return type(error).__name__


        def probe_net(ctx):
            return columns.$add_fn(TEXT, "net", "round(price * quantity * (100 - discount) / 100, 2)")


        def probe_compiled(ctx):
            formula = "max(price - discount, 1) * 2 + quantity % 3"
            compute = columns.$compile_fn(formula, ["price", "quantity", "discount"])
            return compute($first)


        def probe_rows(ctx):
            return columns.read_rows(TEXT)[0]


        def probe_duplicate(ctx):
            try:
                columns.$add_fn(TEXT, "price", "price")
            except ValueError:
                return "refused"
            return "added"


        def probe_read_secret(ctx):
            return _attempt("open('" + SECRET + "').read()")


        def probe_no_builtins(ctx):
            return _attempt($walk + "['__builtins__']['open']('" + SECRET + "').read()")


        def probe_statement(ctx):
            return _attempt("0\\nopen('" + ctx["marker"] + "', 'w').close()")
        ''', pkg=pkg, add_fn=add_fn, compile_fn=compile_fn, text=repr(text), relative=relative, walk=repr(_WALK),
        first=repr({k: first[k] for k in ("price", "quantity", "discount")}))
    return Program(
        family="code_injection", variant="column_formula", domain="report export", cwe="CWE-94",
        files={path: source}, fixed={path: fixed},
        description=f"`{add_fn}(text, name, formula)` returns the CSV export `text` with a new column `name` "
                    "computed per row by `formula`, an arithmetic expression over the export's columns that may "
                    f"call abs/max/min/round; `{compile_fn}` turns a formula into a function of one row.",
        location=location({path: source}, path, "source = f\"def _column(", extra_lines=2),
        tests=tests,
        probes=[Probe(id="net", kind="functional", expect=expect_net),
                Probe(id="compiled", kind="functional",
                      expect=max(first["price"] - first["discount"], 1) * 2 + first["quantity"] % 3),
                Probe(id="rows", kind="functional", expect=["sku", "price", "quantity", "discount"]),
                Probe(id="duplicate", kind="functional", expect="refused"),
                Probe(id="read_secret", kind="exploit", detect=LEAK),
                Probe(id="no_builtins", kind="exploit", detect=LEAK),
                Probe(id="statement", kind="exploit", detect=MARKER)],
        fixtures={relative: "{canary}"}, static_ids=["B102"])


_BUILDERS = {"calculator": _calculator, "alert_rules": _alert_rules, "config_values": _config_values,
             "column_formula": _column_formula}


def build(rng: random.Random, variant: str) -> Program:
    return _BUILDERS[variant](rng)


FAMILY = Family(name="code_injection", cwe="CWE-94", title="Code injection (eval/exec of user input)",
                variants=("calculator", "alert_rules", "config_values"), ood_variants=("column_formula",),
                build=build)
