"""Log ingestion for T_org_T: services ship plain-text lines ("<time> <LEVEL> <source>: <message>"),
the ingester keeps them as structured records."""

import re

LINE = re.compile(r"^(?P<ts>\d{4}-\d\d-\d\dT[\d:.]+Z?)\s+(?P<level>[A-Z]+)\s+(?P<source>[\w.-]+):\s+"
                  r"(?P<message>.*?)\s*$")
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
MAX_LINE = 64 * 1024


def T_parse_fn_T(line: str) -> dict | None:
    """The fields of one log line, or None when it is not a well-formed line."""
    if len(line) > MAX_LINE:
        return None
    match = LINE.match(line)
    if match is None or match["level"] not in LEVELS:
        return None
    return match.groupdict()

