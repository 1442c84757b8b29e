
def _public(host: str) -> bool:
    """Whether ``host`` resolves, and only to public addresses."""
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return all(ipaddress.ip_address(info[4][0]).is_global for info in infos)
