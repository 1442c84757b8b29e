"""Pipeline definitions of the Quarry CI service: each repository keeps one in its `.quarry.yml`.

A definition names its stages in order and its jobs; `defaults` (usually written once as a YAML anchor and merged
into the jobs with `<<: *defaults`) gives every job its image and timeout unless the job sets its own.
"""

import yaml

DEFAULT_IMAGE = "python:3.12-slim"
DEFAULT_TIMEOUT = 600


class PipelineError(ValueError):
    """A definition that cannot be run, with the reason."""


def load_definition(text: str) -> dict:
    """The definition a `.quarry.yml` holds, as plain data."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise PipelineError(f"not valid YAML: {error}") from None
    if not isinstance(data, dict):
        raise PipelineError("a definition is a mapping")
    return data


def _job(name: str, spec: object, stages: list, defaults: dict) -> dict:
    if not isinstance(spec, dict):
        raise PipelineError(f"job {name!r} must be a mapping")
    stage = spec.get("stage", stages[0])
    if stage not in stages:
        raise PipelineError(f"job {name!r} is in the unknown stage {stage!r}")
    script = spec.get("script")
    if isinstance(script, str):
        script = [script]
    if not script or not isinstance(script, list) or not all(isinstance(line, str) for line in script):
        raise PipelineError(f"job {name!r} needs a script of command lines")
    timeout = spec.get("timeout", defaults.get("timeout", DEFAULT_TIMEOUT))
    if not isinstance(timeout, int) or isinstance(timeout, bool) or not 0 < timeout <= 3600:
        raise PipelineError(f"job {name!r} has a timeout outside 1..3600 seconds")
    needs = spec.get("needs", [])
    return {"name": name, "stage": stage, "image": str(spec.get("image", defaults.get("image", DEFAULT_IMAGE))),
            "timeout": timeout, "needs": sorted(str(n) for n in needs), "script": list(script)}


def plan(text: str) -> list:
    """The jobs of a definition in the order they run: stage by stage, by name within a stage."""
    data = load_definition(text)
    stages = data.get("stages") or ["test"]
    if not isinstance(stages, list) or not all(isinstance(stage, str) for stage in stages):
        raise PipelineError("stages must be a list of names")
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise PipelineError("defaults must be a mapping")
    jobs = data.get("jobs")
    if not isinstance(jobs, dict) or not jobs:
        raise PipelineError("a definition needs at least one job")
    planned = [_job(str(name), spec, stages, defaults) for name, spec in jobs.items() if not str(name).startswith(".")]
    names = {job["name"] for job in planned}
    for job in planned:
        missing = [need for need in job["needs"] if need not in names]
        if missing:
            raise PipelineError(f"job {job['name']!r} needs unknown jobs {missing}")
    return sorted(planned, key=lambda job: (stages.index(job["stage"]), job["name"]))


def variables(text: str) -> dict:
    """The definition's variables as the environment of its jobs: every value a string (true/false in lower case)."""
    values = load_definition(text).get("variables") or {}
    if not isinstance(values, dict):
        raise PipelineError("variables must be a mapping")
    env = {}
    for name, value in values.items():
        if isinstance(value, bool):
            value = str(value).lower()
        env[str(name)] = "" if value is None else str(value)
    return env
