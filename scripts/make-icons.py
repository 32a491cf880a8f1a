#!/usr/bin/env python3
"""Draw Tandem's icon (two overlapping discs on a rounded square) as RGBA PNGs.
Pure standard library, so the icons can be regenerated anywhere."""
import struct, sys, zlib, os

def png(path, size):
    def px(x, y):
        s = size
        u, v = (x + 0.5) / s, (y + 0.5) / s
        # rounded square mask
        r = 0.2
        dx = max(abs(u - 0.5) - (0.5 - r), 0); dy = max(abs(v - 0.5) - (0.5 - r), 0)
        if dx * dx + dy * dy > r * r:
            return (0, 0, 0, 0)
        bg = (24, 32, 48, 255)
        def disc(cx, cy, rad):
            return (u - cx) ** 2 + (v - cy) ** 2 <= rad * rad
        a, b = disc(0.39, 0.5, 0.22), disc(0.61, 0.5, 0.22)
        if a and b:
            return (250, 250, 250, 255)
        if a:
            return (72, 187, 120, 255)   # local: green
        if b:
            return (99, 140, 255, 255)   # cloud: blue
        return bg
    raw = b"".join(b"\x00" + b"".join(bytes(px(x, y)) for x in range(size)) for y in range(size))
    def chunk(t, d):
        c = struct.pack(">I", len(d)) + t + d
        return c + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)) \
        + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(data)

out = sys.argv[1] if len(sys.argv) > 1 else "icons"
os.makedirs(out, exist_ok=True)
for name, size in [("32x32.png", 32), ("128x128.png", 128), ("128x128@2x.png", 256), ("icon.png", 512)]:
    png(os.path.join(out, name), size)
