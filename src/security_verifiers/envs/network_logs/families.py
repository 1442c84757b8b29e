"""One family taxonomy for E1: the generator's families and every dataset's labels map onto the same names.

Per-family metrics are only comparable across data sources if one kind of attack has one name: IoT-23's
``C&C-HeartBeat-Attack``, the generator's beacons and a C&C heartbeat in any other capture must all be
``cc_heartbeat``. :data:`FAMILIES` lists every family with its label and what it covers; the ``*_LABELS``
tables map each dataset's labels onto it, and a label missing from its table is an error (a loader never
invents a family name). The data card prints these tables.
"""

from __future__ import annotations

from typing import Literal

Label = Literal["Malicious", "Benign"]

#: Every family: (label, what it covers).
FAMILIES: dict[str, tuple[Label, str]] = {
    # attacks
    "portscan_horizontal": ("Malicious", "one port probed across many hosts"),
    "portscan_vertical": ("Malicious", "many ports of one host probed"),
    "reconnaissance": ("Malicious", "probing and scanning whose shape the dataset does not record"),
    "telnet_bruteforce": ("Malicious", "guessing telnet credentials (Mirai and kin)"),
    "ssh_bruteforce": ("Malicious", "guessing SSH passwords"),
    "ftp_bruteforce": ("Malicious", "guessing FTP passwords"),
    "web_bruteforce": ("Malicious", "guessing a web application's passwords"),
    "intrusion_attempt": ("Malicious", "an attempt on a service, password guessing or an exploit, kind unrecorded"),
    "exploit": ("Malicious", "exploiting a vulnerable service (incl. shellcode delivery, Heartbleed)"),
    "web_exploit": ("Malicious", "injection into a web application (SQL injection, XSS)"),
    "cc_heartbeat": ("Malicious", "a bot's periodic check-ins with its C&C server"),
    "cc_channel": ("Malicious", "other C&C traffic (commands, a bot's registration)"),
    "botnet": ("Malicious", "a bot's traffic whose purpose the dataset does not record"),
    "backdoor": ("Malicious", "remote access through a planted backdoor"),
    "malware_download": ("Malicious", "fetching malware (a dropper's payload, a bot's update)"),
    "exfiltration": ("Malicious", "uploading stolen data"),
    "infiltration": ("Malicious", "an insider foothold and the activity it starts"),
    "ddos_flood": ("Malicious", "flooding a victim (UDP, SYN, ICMP or HTTP; from one source or many)"),
    "http_slowloris": ("Malicious", "slow HTTP denial of service (slowloris, slow POST)"),
    "denial_of_service": ("Malicious", "denial of service whose method the dataset does not record"),
    "dns_tunneling": ("Malicious", "data or commands smuggled in DNS queries"),
    "lateral_smb": ("Malicious", "spreading host to host over SMB/RPC"),
    "fuzzing": ("Malicious", "feeding malformed input to a service"),
    "crypto_attack": ("Malicious", "attacks on a cipher (UNSW-NB15's Generic)"),
    "worm": ("Malicious", "self-propagating malware"),
    "malicious_unspecified": ("Malicious", "labelled malicious with no detail"),
    # benign
    "benign": ("Benign", "labelled benign with no detail (the datasets' benign rows)"),
    "benign_backup": ("Benign", "backups: repeated large uploads to one target"),
    "benign_bulk_download": ("Benign", "a large download as many HTTPS range requests to one CDN server"),
    "benign_camera_upload": ("Benign", "a cloud camera uploading a clip"),
    "benign_cloud_sync": ("Benign", "a user's or sync client's upload to a cloud service"),
    "benign_config_backup": ("Benign", "an automation host pulling switch configurations over telnet"),
    "benign_db": ("Benign", "an application's database connections"),
    "benign_directory": ("Benign", "LDAP, Kerberos and RPC to a domain controller"),
    "benign_discovery": ("Benign", "SSDP, mDNS, LLMNR, NetBIOS and PLC discovery"),
    "benign_dnp3": ("Benign", "DNP3 polling of an RTU"),
    "benign_dns": ("Benign", "DNS lookups, alone or in bursts"),
    "benign_failed_conn": ("Benign", "connections to a host or service that is down"),
    "benign_git": ("Benign", "fetching from a Git server"),
    "benign_iot_chatter": ("Benign", "an IoT device's housekeeping: SNTP polls, mDNS/SSDP, DHCP, vendor-cloud pings"),
    "benign_keepalive": ("Benign", "long-lived connections an app keeps open (push, live dashboards)"),
    "benign_long_session": ("Benign", "a long session a flow meter writes as consecutive 120 s records"),
    "benign_mail": ("Benign", "IMAP and SMTP submission"),
    "benign_modbus": ("Benign", "Modbus polling of a PLC"),
    "benign_monitoring": ("Benign", "SNMP polls and pings by monitoring"),
    "benign_monitoring_scan": ("Benign", "a monitoring server's discovery sweep"),
    "benign_mqtt": ("Benign", "MQTT to a local broker"),
    "benign_ntp": ("Benign", "time synchronisation"),
    "benign_opcua": ("Benign", "OPC UA sessions"),
    "benign_page_load": ("Benign", "a page or app screen loading: a burst of short connections to CDNs"),
    "benign_print": ("Benign", "print jobs"),
    "benign_rdp": ("Benign", "remote desktop to a jump host"),
    "benign_s7_program": ("Benign", "an engineer downloading a program to a PLC"),
    "benign_smb": ("Benign", "file sharing"),
    "benign_ssh": ("Benign", "administrators, scheduled jobs and configuration management over SSH"),
    "benign_syslog": ("Benign", "log shipping"),
    "benign_telemetry": ("Benign", "a device's periodic reports to its vendor cloud"),
    "benign_telnet_admin": ("Benign", "an administrator's telnet session to a legacy device"),
    "benign_update": ("Benign", "downloading a software or firmware update"),
    "benign_update_check": ("Benign", "asking whether there is an update; connectivity checks"),
    "benign_video": ("Benign", "camera streams to a recorder"),
    "benign_voip": ("Benign", "SIP signalling"),
    "benign_web": ("Benign", "web and API requests, streaming"),
    "benign_windows_domain": ("Benign", "a Windows domain member's AD lookups, Kerberos, LDAP, NetBIOS, SYSVOL"),
}

#: IoT-23 ``detailed-label`` of a Malicious row -> family (the published label set; ``-``: no detail).
IOT23_LABELS: dict[str, str] = {
    "-": "malicious_unspecified",
    "PartOfAHorizontalPortScan": "portscan_horizontal",
    "PartOfAHorizontalPortScan-Attack": "portscan_horizontal",
    "C&C-PartOfAHorizontalPortScan": "portscan_horizontal",
    "C&C-HeartBeat": "cc_heartbeat",
    "C&C-HeartBeat-Attack": "cc_heartbeat",
    "C&C-HeartBeat-FileDownload": "cc_heartbeat",
    "C&C": "cc_channel",
    "C&C-Torii": "cc_channel",
    "C&C-Mirai": "cc_channel",
    "C&C-FileDownload": "malware_download",
    "FileDownload": "malware_download",
    "DDoS": "ddos_flood",
    "Attack": "intrusion_attempt",
    "Okiru": "botnet",
    "Okiru-Attack": "intrusion_attempt",
}

#: CIC-IDS-2017 ``Label`` -> family (web attacks by their last words; their dash is mis-encoded in some copies).
CICIDS2017_LABELS: dict[str, str] = {
    "BENIGN": "benign",
    "DDoS": "ddos_flood",
    "DoS Hulk": "ddos_flood",
    "DoS GoldenEye": "ddos_flood",
    "DoS slowloris": "http_slowloris",
    "DoS Slowhttptest": "http_slowloris",
    "PortScan": "portscan_vertical",
    "FTP-Patator": "ftp_bruteforce",
    "SSH-Patator": "ssh_bruteforce",
    "Heartbleed": "exploit",
    "Infiltration": "infiltration",
    "Bot": "botnet",
    "Botnet": "botnet",
    "Infiltration - Portscan": "infiltration",
    "Web Attack Brute Force": "web_bruteforce",
    "Web Attack XSS": "web_exploit",
    "Web Attack Sql Injection": "web_exploit",
}

#: UNSW-NB15 ``attack_cat`` of a label-1 row (case and spaces ignored) -> family; label 0 is ``benign``.
UNSW_NB15_LABELS: dict[str, str] = {
    "": "malicious_unspecified",
    "analysis": "reconnaissance",
    "backdoor": "backdoor",
    "backdoors": "backdoor",
    "dos": "denial_of_service",
    "exploits": "exploit",
    "fuzzers": "fuzzing",
    "generic": "crypto_attack",
    "reconnaissance": "reconnaissance",
    "shellcode": "exploit",
    "worms": "worm",
}

#: CTU-13 ``Label`` (``flow=From-Botnet-V47-TCP-CC73-Not-Encrypted``, ``flow=From-Normal-V47-Grill``...) -> family,
#: by its words (lower case, a trailing number dropped: ``CC73`` is ``cc``): a Botnet label naming its C&C
#: channel (``cc``, ``irc``) is ``cc_channel``, any other Botnet label (spam attempts, DNS, click fraud) is
#: ``botnet``, a Normal label ``benign``. The labels are free text that differs by scenario, hence words, not
#: whole labels. ``background`` is absent on purpose: CTU-13's Background flows were never checked, neither
#: benign nor malicious, and the reader keeps them out of the items (see ``loaders.Ctu13File``).
CTU13_LABELS: dict[str, str] = {
    "normal": "benign",
    "cc": "cc_channel",
    "irc": "cc_channel",
    "botnet": "botnet",
}

#: Every table, by the dataset name items record in ``meta["dataset"]``.
DATASET_LABELS: dict[str, dict[str, str]] = {
    "iot-23": IOT23_LABELS, "cic-ids-2017": CICIDS2017_LABELS, "unsw-nb15": UNSW_NB15_LABELS, "ctu-13": CTU13_LABELS,
}


def label_of(family: str) -> Label:
    """The label every item of ``family`` has (outside the ambiguous items' sampled labels)."""
    return FAMILIES[family][0]
