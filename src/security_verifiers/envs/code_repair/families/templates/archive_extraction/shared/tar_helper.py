
def _tar(path, members):
    with tarfile.open(path, "w:gz" if path.endswith("gz") else "w") as archive:
        for name, text, *link in members:
            info = tarfile.TarInfo(name)
            if link:
                info.type, info.linkname = tarfile.SYMTYPE, link[0]
                archive.addfile(info)
            else:
                data = text.encode()
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return path
