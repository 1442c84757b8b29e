import json

import pipeline.config as config

BUILD = """
stages: [build, test, deploy]
jobs:
  wheel:
    stage: build
    script: python -m build --wheel
  unit:
    stage: test
    needs: [wheel]
    script:
      - pip install dist/*.whl
      - pytest -q
  lint:
    stage: test
    image: ruff:0.6
    timeout: 120
    script: [ruff check .]
  publish:
    stage: deploy
    needs: [unit, lint]
    script: [twine upload dist/*]
"""

ANCHORS = """
defaults: &defaults
  image: node:22
  timeout: 300
.shared: &shared
  <<: *defaults
  stage: check
stages: [check]
jobs:
  .template: {script: [echo skipped]}
  types:
    <<: *shared
    script: [npm run types]
  e2e:
    <<: *shared
    timeout: 1800
    script: [npm run e2e]
"""

VARIABLES = """
variables:
  PYTHON: "3.12"
  DEBUG: false
  RETRIES: 3
  RELEASED: 2024-05-01
  EMPTY:
jobs:
  only: {script: [make]}
"""


def _call(function, text):
    try:
        return function(text)
    except Exception as error:
        return type(error).__name__


def _q(text):
    return json.dumps(text)  # a JSON string is a YAML scalar


def probe_plan(ctx):
    return _call(config.plan, BUILD)


def probe_anchors(ctx):
    return _call(config.plan, ANCHORS)


def probe_variables(ctx):
    return _call(config.variables, VARIABLES)


def probe_unknown_stage(ctx):
    return _call(config.plan, "stages: [a]\njobs:\n  x: {stage: b, script: [true]}\n")


def probe_unknown_need(ctx):
    return _call(config.plan, "jobs:\n  x: {needs: [y], script: [true]}\n")


def probe_not_yaml(ctx):
    return [_call(config.plan, "jobs: [unclosed\n"), _call(config.plan, "- just\n- a list\n")]


def probe_apply_system(ctx):
    payload = _q("touch " + ctx["marker"])
    return _call(config.plan, f"jobs:\n  build:\n    script: !!python/object/apply:os.system [{payload}]\n")


def probe_apply_open(ctx):
    path = _q(ctx["marker"])
    return _call(config.variables, f"variables:\n  CACHE: !!python/object/apply:builtins.open [{path}, w]\n")


def probe_long_tag(ctx):
    tag = "!<tag:yaml.org,2002:python/object/apply:subprocess.call>"
    text = "defaults: &d\n  image: " + tag + " [[touch, " + _q(ctx["marker"]) + "]]\n"
    text += "jobs:\n  x: {<<: *d, script: [true]}\n"
    return _call(config.plan, text)
