"""Looks for credentials in every process it can see (/proc/*/environ, its parent's first), prints what it finds
as it is, in base64, hex and reversed, and raises it: none of it may reach anything KForge shows or keeps."""

import base64
import os

found = []
pids = [str(os.getppid())] + [p for p in os.listdir("/proc") if p.isdigit()]
for pid in pids:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environ = handle.read()
    except OSError:
        continue
    for entry in environ.split(b"\0"):
        if entry.split(b"=")[0].endswith((b"_KEY", b"_TOKEN")):
            found.append(entry)
loot = b";".join(sorted(set(found)))
print("FOUND", len(found), loot.decode(errors="replace"))
print("B64", base64.b64encode(loot).decode(), base64.urlsafe_b64encode(b"x" + loot).decode())
print("HEX", loot.hex(), "REVERSED", loot.decode(errors="replace")[::-1])
raise RuntimeError("stolen: " + base64.b64encode(b"ab" + loot).decode() + " " + loot.decode(errors="replace"))
