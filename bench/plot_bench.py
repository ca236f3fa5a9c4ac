#!/usr/bin/env python3
"""plot_bench.py RESULTS.tsv OUT_DIR - one PNG per format: mean PSNR against single-thread speed (log
scale), one labelled point per tool and mode, from the ROW lines bench/run_bench.sh collects. Pillow only
(matplotlib is not installed on the project machine)."""
import math, sys
from PIL import Image, ImageDraw
tsv, out = sys.argv[1], sys.argv[2]
rows = {}
for line in open(tsv):
    v = line.rstrip("\n").split("\t")
    if v[0] != "ROW":
        continue
    try:
        rows.setdefault(v[1], []).append((v[2], v[3], float(v[-3]), float(v[-2])))
    except ValueError:
        pass  # no single-thread speed (nvcompress)
colours = {"kiln": (200, 60, 30), "stb_dxt": (40, 110, 200), "libsquish": (40, 150, 60), "etcpak": (150, 80, 180),
           "etc2comp": (20, 140, 150)}
for fmt, pts in rows.items():
    W, H, L, R, T, B = 860, 480, 70, 130, 40, 60
    img = Image.new("RGB", (W, H), "white")
    d = ImageDraw.Draw(img)
    xs = [math.log10(p[3]) for p in pts if p[3] > 0]
    ys = [p[2] for p in pts]
    x0, x1 = math.floor(min(xs)), math.ceil(max(xs))
    y0, y1 = math.floor(min(ys) - 0.2), math.ceil(max(ys) + 0.2)
    if x1 == x0: x1 += 1
    X = lambda x: L + (x - x0) / (x1 - x0) * (W - L - R)
    Y = lambda y: H - B - (y - y0) / (y1 - y0) * (H - T - B)
    d.rectangle([L, T, W - R, H - B], outline="black")
    for e in range(x0, x1 + 1):
        for m in (1, 2, 5):
            x = e + math.log10(m)
            if x0 <= x <= x1:
                d.line([X(x), T, X(x), H - B], fill=(225, 225, 225))
                d.text((X(x) - 10, H - B + 6), "%g" % (10 ** x), fill="black")
    step = 0.5 if y1 - y0 <= 4 else 1
    y = y0
    while y <= y1:
        d.line([L, Y(y), W - R, Y(y)], fill=(225, 225, 225))
        d.text((8, Y(y) - 6), "%.1f" % y, fill="black")
        y += step
    d.text((W / 2 - 120, H - 22), "Mpix/s, one thread (log scale)", fill="black")
    d.text((L, 10), "%s: mean PSNR (dB) vs speed, decoded by kiln" % fmt.upper(), fill="black")
    for tool, mode, psnr, mps in pts:
        if mps <= 0: continue
        c = colours.get(tool, (90, 90, 90))
        px, py = X(math.log10(mps)), Y(psnr)
        d.ellipse([px - 4, py - 4, px + 4, py + 4], fill=c)
        d.text((px + 6, py - 6), "%s %s" % (tool, mode), fill=c)
    img.save("%s/%s.png" % (out, fmt))
    print("run_bench.sh: wrote %s/%s.png" % (out, fmt), file=sys.stderr)
