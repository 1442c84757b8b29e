"""What the T_org_T community site accepts as a picture."""

MAX_BYTES = 512 * 1024
SIGNATURES = {b"\x89PNG\r\n\x1a\n": "png", b"\xff\xd8\xff": "jpeg", b"GIF87a": "gif", b"GIF89a": "gif"}


def image_kind(data: bytes) -> str:
    """The format of an image, from its first bytes."""
    for magic, kind in SIGNATURES.items():
        if data.startswith(magic):
            return kind
    raise ValueError("not a PNG, JPEG or GIF image")


def check(data: bytes) -> str:
    """The format of an acceptable picture; ValueError for anything else."""
    if len(data) > MAX_BYTES:
        raise ValueError("the picture is too large")
    return image_kind(data)
