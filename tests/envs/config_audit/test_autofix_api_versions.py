"""Autofix of k8s-removed-api-version: the object moves to the replacement apiVersion, with what the new version
requires (apps/v1 selector, networking.k8s.io/v1 Ingress backends and pathType, autoscaling/v2 targets); the
result validates, keeps the inventory and the finding is gone."""

from __future__ import annotations

import pytest
import yaml

from security_verifiers.engines.configs import inventory
from security_verifiers.engines.rego import RegoEngine
from security_verifiers.engines.validate import validate
from security_verifiers.envs.config_audit.autofix import autofix
from security_verifiers.envs.config_audit.scoring import inventory_preserved

ENGINE = RegoEngine()
RULE = "k8s-removed-api-version"

CASES = {
    # apps/v1 requires a selector: taken from the template labels
    "deployment-without-selector": """apiVersion: extensions/v1beta1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: web
          image: nginx:1.25
""",
    # no template labels either: app=<name> on both
    "statefulset-without-labels": """apiVersion: apps/v1beta1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  template:
    spec:
      containers:
        - name: db
          image: postgres:16
""",
    "ingress": """apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: web
spec:
  backend:
    serviceName: web
    servicePort: 80
  rules:
    - host: example.com
      http:
        paths:
          - path: /
            backend:
              serviceName: web
              servicePort: http
""",
    "cronjob": """apiVersion: batch/v1beta1
kind: CronJob
metadata:
  name: backup
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: backup
              image: backup:2.1
""",
    "hpa": """apiVersion: autoscaling/v2beta1
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: web
  minReplicas: 1
  maxReplicas: 4
  metrics:
    - type: Resource
      resource:
        name: cpu
        targetAverageUtilization: 70
""",
    "pdb": """apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  minAvailable: 1
  selector:
    matchLabels:
      app: web
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_migration_fixes_the_finding_and_stays_valid(name: str) -> None:
    text = CASES[name]
    findings = [f for f in ENGINE.scan("kubernetes", text) if f.rule_id == RULE]
    assert len(findings) == 1
    result = autofix("kubernetes", text, findings)
    assert result.fixed_rules == (RULE,)
    assert not [f for f in ENGINE.scan("kubernetes", result.text) if f.rule_id == RULE]
    checked = validate("kubernetes", result.text)
    assert checked.ok and not checked.unchecked, checked.errors
    assert inventory_preserved(inventory("kubernetes", text), inventory("kubernetes", result.text)) is None


def test_migrated_deployment_selects_its_template_labels() -> None:
    text = CASES["deployment-without-selector"]
    fixed = yaml.safe_load(autofix("kubernetes", text, ENGINE.scan("kubernetes", text)).text)
    assert fixed["apiVersion"] == "apps/v1"
    assert fixed["spec"]["selector"] == {"matchLabels": {"app": "web"}}


def test_a_kind_that_is_gone_is_left_alone() -> None:
    text = "apiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata:\n  name: restricted\nspec: {}\n"
    result = autofix("kubernetes", text, [f for f in ENGINE.scan("kubernetes", text) if f.rule_id == RULE])
    assert result.text == text and result.skipped_rules == (RULE,)
