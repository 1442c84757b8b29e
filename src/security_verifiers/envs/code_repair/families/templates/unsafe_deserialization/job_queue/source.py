"""Worker of the T_org_T notification service: the public API queues jobs, this worker runs them."""

import pickle

from T_pkg_T.handlers import HANDLERS


def encode_job(task: str, **args) -> bytes:
    """The queue message of a job (the API enqueues these)."""
    return pickle.dumps({"task": task, "args": args})


def decode_job(message: bytes) -> dict:
    try:
        job = pickle.loads(message)
    except Exception as error:
        raise ValueError("malformed job message") from error
    if not isinstance(job, dict) or not isinstance(job.get("task"), str) \
            or not isinstance(job.get("args"), dict):
        raise ValueError("malformed job message")
    return job


def T_run_T(message: bytes) -> dict:
    """Run one queued job; returns its outcome for the job log."""
    try:
        job = decode_job(message)
    except ValueError as error:
        return {"ok": False, "error": str(error)}
    function = HANDLERS.get(job["task"])
    if function is None:
        return {"ok": False, "error": f"unknown task: {job['task']}"}
    try:
        return {"ok": True, "task": job["task"], "result": function(**job["args"])}
    except (TypeError, ValueError) as error:
        return {"ok": False, "task": job["task"], "error": str(error)}
