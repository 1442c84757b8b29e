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

from security_verifiers.envs.code_repair.families import Variants
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, Templates, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

TEMPLATES = Templates(__name__)
VARIANTS = Variants()

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

@VARIANTS.add()
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
    source = TEMPLATES.render("calculator/source.py", org=org, calc=calc)
    invoices_src = TEMPLATES.render("calculator/invoices_src.py", split=split_fn, org=org, pkg=pkg, calc=calc,
                                    rates=repr(regions))
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
    tests = TEMPLATES.render("calculator/tests.py", pkg=pkg, calc=calc, qty=qty, price=price, cap=cap, extra=extra,
                             lines=repr(lines), region=region, walk=repr(_WALK), relative=relative, split=split_fn,
                             parts=parts)
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

_CONDITION_EVALUATOR = TEMPLATES.render("shared/condition_evaluator.py")


@VARIANTS.add()
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
    source = TEMPLATES.render("alert_rules/source.py", org=org, check=check)
    rules_src = TEMPLATES.render("alert_rules/rules_src.py", org=org, pkg=pkg, check=check)
    fixed = swap(source, "    return eval(condition, {}, dict(metrics))",
                 "    return _value(ast.parse(condition, mode=\"eval\").body, dict(metrics))")
    preview = 'the rule editor previews a condition\'s value on a sample."""\n'
    fixed = swap(fixed, preview, preview + "\nimport ast\nimport operator\n" + _CONDITION_EVALUATOR)
    path, rules_path = f"{pkg}/conditions.py", f"{pkg}/rules.py"
    relative = _secret(rng)
    tests = TEMPLATES.render("alert_rules/tests.py", pkg=pkg, check=check, sample=repr(sample),
                             rules=repr([r[:3] for r in rules]), a=a, c=c, host=host, relative=relative,
                             walk=repr(_WALK))
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

@VARIANTS.add()
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
    source = TEMPLATES.render("config_values/source.py", org=org, theme=theme, parse=parse_fn)
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
    tests = TEMPLATES.render("config_values/tests.py", pkg=pkg, parse=parse_fn, text=repr(text), relative=relative,
                             walk=repr(_WALK))
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

_FORMULA_EVALUATOR = TEMPLATES.render("shared/formula_evaluator.py")


@VARIANTS.add(ood=True)
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
    source = TEMPLATES.render("column_formula/source.py", org=org, noun=noun.capitalize(), compile_fn=compile_fn,
                              add_fn=add_fn)
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
    tests = TEMPLATES.render("column_formula/tests.py", pkg=pkg, add_fn=add_fn, compile_fn=compile_fn, text=repr(text),
                             relative=relative, walk=repr(_WALK),
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


FAMILY = VARIANTS.family(name="code_injection", cwe="CWE-94", title="Code injection (eval/exec of user input)")
