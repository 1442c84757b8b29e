"""E1's baselines measured on samples of real public captures: where the samples came from and what was measured.

The samples are third-party data, so they are not shipped and the card cannot recompute these figures at build
time; they were measured with ``benchmarks/e1_sim_to_real.py`` on the files named here and are recorded by hand,
with the generator version they were measured at. A test fails when the generator's version moves past it, so a
generator change cannot leave stale figures in the card: re-fetch the samples (``SOURCES``), re-run the
benchmark, and update this table.
"""

from __future__ import annotations

from typing import NamedTuple

#: The generator version (and so the GBDT's training items) these figures were measured at.
MEASURED_AT_GENERATOR = "2.2.0"
#: The benchmark command, run in a directory holding the samples as ``SOURCES`` lays them out.
COMMAND = ("python benchmarks/e1_sim_to_real.py cicids2017/ cicids2017-improved/ unsw-nb15/ iot23/ ctu13/ "
           "--baselines heuristic,gbdt,always-abstain")


class Source(NamedTuple):
    """One real sample: the public repository it was read from and how rows were taken."""

    dataset: str
    repo: str
    commit: str
    paths: str
    size: str
    available: str
    taken: str


class Measured(NamedTuple):
    """One baseline on one sample (Malicious on benign = false alarm; 95% Wilson intervals in the benchmark)."""

    dataset: str
    baseline: str
    benign_n: int
    false_alarm: float
    benign_abstain: float
    attack_n: int
    detection: float | None
    #: At generator 2.0.0, before issue 28's fixes (``None``: the sample was first read later).
    before_false_alarm: float | None
    before_detection: float | None


SOURCES: tuple[Source, ...] = (
    Source("CIC-IDS-2017 (TrafficLabelling CSV)", "Shreyas26X/NetSentinel", "8aa11d55c5ae",
           "dataset/Friday-WorkingHours-Afternoon-DDos.pcap_ISCX.csv", "136 kB",
           "299 benign (the file's first minute)", "all 299, contiguous"),
    Source("CIC-IDS-2017 improved (Engelen et al. 2021)", "ScubaInstructor/fuh", "86d1bab5ca17",
           "nids-daten/sampled_CICIDS2017_improved_rnd_5000/*.csv", "2.8 MB benign, 24 MB attacks",
           "5,000 benign (random of 1.58 M) / 38,419 attack", "3,000 / 1,000 at random (seed 0)"),
    Source("UNSW-NB15 (testing-set CSV)", "Ankit300302/Intelligent-IDS", "8e09b2f3541f",
           "UNSW_NB15_testing-set.csv", "814 kB", "243 / 4,285",
           "243 / 1,000 at random (seed 0); 499 rows not TCP/UDP/ICMP skipped, 229 / 515 read"),
    Source("IoT-23 (conn.log.labeled, as CSV)", "aucad/sensor-data", "d3721027ab5b",
           "iot-23/CTU-Honeypot-Capture-{4,5,7}-1, CTU-Malware-Capture-{8,20,21,34,42,44}-1 -labeled.csv", "6.1 MB",
           "17,156 / 29,506", "3,000 / 1,000 at random (seed 0), in time order"),
    Source("CTU-13 scenario 6 (.binetflow, Menti bot)", "jingzbu/BiNetflowToSIGs", "3110aca22a03",
           "Data/capture20110816.binetflow.slice_{1..13}_{1,2} (26 consecutive 5-minute slices, joined)", "76.8 MB",
           "7,494 Normal / 4,630 Botnet (546,795 Background: never checked, not items)",
           "all; 7,489 / 4,630 read (5 Normal ARP rows skipped)"),
)

#: ``before``: the same samples at generator 2.0.0 before issue 28's fixes (the CIC-improved sample then read
#: through a renamed copy with a 1 s clock; the loaders now read its release as is, with its microsecond clock).
MEASURED: tuple[Measured, ...] = (
    Measured("CIC-IDS-2017", "heuristic", 299, 0.0, 0.629, 0, None, 0.582, None),
    Measured("CIC-IDS-2017", "gbdt", 299, 0.140, 0.281, 0, None, 0.826, None),
    Measured("CIC-IDS-2017 improved", "heuristic", 2997, 0.007, 0.089, 1000, 0.206, 0.027, 0.482),
    Measured("CIC-IDS-2017 improved", "gbdt", 2997, 0.0, 0.222, 1000, 0.570, 0.010, 0.802),
    Measured("UNSW-NB15", "heuristic", 229, 0.0, 1.0, 515, 0.0, 0.0, 0.025),
    Measured("UNSW-NB15", "gbdt", 229, 0.183, 0.769, 515, 0.190, 1.0, 0.996),
    Measured("IoT-23", "heuristic", 3000, 0.072, 0.021, 1000, 0.465, 0.335, 0.466),
    Measured("IoT-23", "gbdt", 3000, 0.137, 0.138, 1000, 0.978, 0.209, 0.992),
    Measured("CTU-13", "heuristic", 7489, 0.037, 0.025, 4630, 0.941, None, None),
    Measured("CTU-13", "gbdt", 7489, 0.030, 0.739, 4630, 0.993, None, None),
)

#: What the figures say, for the card (kept beside the figures so that both change together).
FINDINGS: tuple[str, ...] = (
    "What drove the false alarms, and what changed: the GBDT read `id.resp_p = 0` and `unknown` addresses",
    "(UNSW-NB15's sets record neither) as values, and the UNSW set's `-` service as \"no protocol\"; the heuristic",
    "called a window filled by one server a flood when the clock could not show the rate (CIC-IDS-2017's minutes:",
    "187 HTTPS downloads of ~100 kB from one CDN server in one minute), and one-way UDP (NTP, mDNS, SSDP: 35% of",
    "IoT-23's benign flows) a failure; the generator made no bulk downloads, no IoT housekeeping, no Windows",
    "domain chatter, no sessions cut at a flow meter's 120 s timeout and no unanswered datagrams without sizes.",
    "Now: unrecorded fields are NaN features, one-way UDP is not a failure, a clockless window is a flood only",
    "if its connections carry nothing back and a coarse clock does not spread them over minutes, the generator",
    "has those benign families, and the GBDT averages five models trained on five seeds (at generator 2.0.0,",
    "one model's false alarms on these samples ranged 66-85% on CIC-IDS-2017 and 25-47% on UNSW-NB15 across",
    "training seeds 0-4, its UNSW-NB15 detection 18-62%).",
    "",
    "CTU-13 (read since generator 2.1.0, no before): 4,398 of its 4,630 bot flows are spam SYNs nobody answered;",
    "of the 199 C&C flows the heuristic detects 37 (it abstains on 158), the GBDT 197. CTU-13 records only a",
    "flow's total packets, so the per-direction counts are unrecorded (the GBDT still reads their placeholder 0).",
    "",
    "Generator 2.2.0: an application's unanswered `connect()` resends its SYN on the OS's schedule (Linux 1, 3, 7,",
    "15, 31, 63 s; Windows 3, 9 s), a scanner's probe goes once or twice. Before, every generated unanswered attempt",
    "had at most three SYNs in 3 s, so a lone retried connection looked like a scan probe: 117 of UNSW-NB15's 229",
    "benign rows are such retries (Argus `REQ`, about 20 SYNs over 15 s); the GBDT's median p on them fell from",
    "0.41 to 0.30 and its false alarms on them from 11 to 0. The other changes in the GBDT's figures are mostly",
    "its new training items (the generator's version seeds them), not this fix.",
    "",
    "Goal (at most 20% false alarms for both baselines): met on every sample, but on UNSW-NB15's testing-set form",
    "only narrowly (GBDT 18.3%, 95% interval 13.9-23.9%). Its rows carry no timestamps, addresses, ports or",
    "window: only a flow's sizes, state and Argus service. The remaining false alarms are small TCP sessions with",
    "no named service (58 benign and 203 attack rows in the sample): with no window, the generated items of that",
    "shape are about half attacks (the hard pairs share their flow by design), so the GBDT's p sits at the",
    "Malicious/Abstain boundary (0.5) and its training luck decides. The GBDT's reward there (0.815) is still below",
    "always-Abstain's (0.890); the heuristic abstains on every such row (it clears nothing without a port or a",
    "window). Detection",
    "on real attacks is stated above; the CIC-improved sample is rows drawn at random from a week, so its",
    "windows hold a host's unrelated flows hours apart and rate rules rarely fire (detection is low for both).",
)
