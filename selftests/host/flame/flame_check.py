#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""test_flame.sh's checks of a pea flame graph, against the folded input
it was drawn from, read here independently of the tool:

  flame_check.py svg SVG FOLDED            the document and its geometry
  flame_check.py pick SVG NAME             "ID X Y": a frame's centre
  flame_check.py png PNG SVG FOLDED        a screenshot's pixels
  flame_check.py zoomed PNG SVG ID         a screenshot zoomed to ID
  flame_check.py search DOM FOLDED REGEX   chromium's DOM after #search=
  flame_check.py session JSON SVG FOLDED ID REGEX DIR
                                           cdp_drive.py's session in DIR

Each check prints "ok - ..." or "not ok - ..." (test_flame.sh numbers
them); the geometry is the writer's (tools/pea/flame_svg.c): 1180 px of
graph from x = 10, 16 px a depth, labels cut at 7.44 px a character.
"""
import collections
import json
import os
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

SVG_NS = '{http://www.w3.org/2000/svg}'
XPAD, GW, CHAR_W = 10, 1180, 7.44
GLYPH_W = 7.22                      # DejaVu Sans Mono's advance at 12 px
BG = (246, 246, 242)
HIT = (60, 200, 90)                 # a search match


def ok(cond, desc):
    print('%s - %s' % ('ok' if cond else 'not ok', desc))
    return cond


def note(text):
    for line in str(text).splitlines()[:8]:
        print('# ' + line)


# ---- the folded input, read without the tool ----

def read_folded(path):
    stacks = collections.Counter()
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.rstrip('\r\n')
            if not line:
                continue
            stack, weight = line.rsplit(' ', 1)
            stacks[tuple(stack.split(';'))] += int(weight)
    return stacks


def kind_of(frame, idx):
    """(name, kind) of a folded frame, as flamegraph.pl marks it."""
    if frame.endswith('_[k]'):
        name = frame[:-4]
        if re.search(r' \[[^\]]+\]$', name):
            return name, 'module'
        return name, 'kernel'
    return frame, 'process' if idx == 0 else 'user'


def prefixes(stacks):
    """{(name, ...): (weight, kind)} of every frame of the merged tree."""
    tree = {}
    for stack, w in stacks.items():
        path = ()
        for i, f in enumerate(stack):
            name, kind = kind_of(f, i)
            path += (name,)
            old = tree.get(path, (0, kind))
            tree[path] = (old[0] + w, kind)
    return tree


# ---- the SVG ----

class Frame:
    pass


def svg_frames(path):
    root = ET.parse(path).getroot()
    frames = []
    for g in root.iter(SVG_NS + 'g'):
        if g.get('class') != 'f':
            continue
        f = Frame()
        f.id = g.get('id')
        f.d, f.s, f.w = int(g.get('data-d')), int(g.get('data-s')), int(g.get('data-w'))
        f.title = g.find(SVG_NS + 'title').text
        r = g.find(SVG_NS + 'rect')
        f.x, f.y = float(r.get('x')), float(r.get('y'))
        f.width, f.height = float(r.get('width')), float(r.get('height'))
        m = re.fullmatch(r'rgb\((\d+),(\d+),(\d+)\)', r.get('fill'))
        f.fill = tuple(int(v) for v in m.groups())
        f.label = g.find(SVG_NS + 'text').text or ''
        f.name = f.title[:f.title.rfind(' (')]
        frames.append(f)
    # each frame's path: its parent is the frame below that spans it
    by_depth = collections.defaultdict(list)
    for f in frames:
        by_depth[f.d].append(f)
    for f in sorted(frames, key=lambda f: f.d):
        if f.d == 0:
            f.path, f.parent = (), None
            continue
        up = [p for p in by_depth[f.d - 1] if p.s <= f.s and f.s + f.w <= p.s + p.w]
        f.parent = up[0] if len(up) == 1 else None
        f.path = (f.parent.path if f.parent else ('?',)) + (f.name,)
    return root, frames


def family(rgb):
    r, g, b = rgb
    if r == g == b == 200:
        return 'root'
    if 110 <= r <= 140 and 140 <= g <= 170 and 200 <= b <= 230:
        return 'process'
    if 210 <= r <= 250 and 45 <= g <= 85 and 45 <= b <= 75:
        return 'user'
    if 230 <= r <= 255 and 140 <= g <= 180 and 10 <= b <= 40:
        return 'kernel'
    if 200 <= r <= 230 and 190 <= g <= 225 and 40 <= b <= 70:
        return 'module'
    return 'none'


def label_for(name, width):
    fit = int((width - 6) // CHAR_W)
    if fit < 3:
        return ''
    if len(name) <= fit:
        return name
    return name[:fit - 2] + '..'


def check_svg(svg, folded):
    try:
        root, frames = svg_frames(svg)
    except ET.ParseError as e:
        ok(False, 'the SVG parses as XML: %s' % e)
        return
    ok(root.tag == SVG_NS + 'svg' and root.get('width') == '1200',
       'the SVG is well-formed XML, an <svg> 1200 px wide')
    stacks = read_folded(folded)
    tree = prefixes(stacks)
    total = sum(stacks.values())
    ok(int(root.get('data-total')) == total and frames[0].w == total and
       frames[0].name == 'all', 'the root "all" weighs the input\'s total, %d' % total)
    got = {f.path: f.w for f in frames if f.d}
    want = {p: w for p, (w, _) in tree.items()}
    if not ok(got == want, 'the frames are the input\'s merged prefixes, %d of them, '
              'with their weights' % len(want)):
        note('missing: %s' % sorted(set(want) - set(got))[:3])
        note('extra: %s' % sorted(set(got) - set(want))[:3])
    depth = max(len(s) for s in stacks)
    bad_w, bad_px = [], []
    for d in range(depth + 1):
        at = [f for f in frames if f.d == d]
        want_w = sum(w for s, w in stacks.items() if len(s) >= d)
        if sum(f.w for f in at) != want_w:
            bad_w.append(d)
        px = sum(f.width for f in at)
        if abs(px - want_w / total * GW) > 0.005 * len(at) + 0.01:
            bad_px.append((d, px, want_w / total * GW))
    ok(not bad_w, 'at each of %d depths the weights sum to the weight of the stacks '
       'that reach it (the total at the root) %s' % (depth + 1, bad_w))
    ok(not bad_px, 'at each depth the frame widths sum to that weight\'s share of '
       '1180 px (within the 2-decimal rounding) %s' % bad_px[:2])
    bad = [f.id for f in frames
           if abs(f.x - (XPAD + f.s / total * GW)) > 0.006 or
           abs(f.width - f.w / total * GW) > 0.006]
    ok(not bad, 'each frame is at x = 10 + offset/total*1180 and w = weight/total*1180 %s'
       % bad[:3])
    bad = []
    for p in frames:
        kids = sorted((f for f in frames if f.parent is p), key=lambda f: f.s)
        if not kids:
            continue
        names = [k.name.encode() for k in kids]
        own = p.w - sum(k.w for k in kids)
        s = p.s + own
        for k in kids:
            if k.s != s:
                bad.append(k.id)
            s += k.w
        if names != sorted(names):
            bad.append(p.id)
    ok(not bad, 'children sit side by side in name order after their parent\'s own '
       'weight %s' % bad[:3])
    bad = [f.id for f in frames
           if f.title != '%s (%d samples, %.2f%%)' % (f.name, f.w, 100.0 * f.w / total)]
    ok(not bad, 'every title is "NAME (WEIGHT samples, SHARE%%)" %s' % bad[:3])
    a = [f for f in frames if f.path[-1:] == ('a',)]
    ok(len(a) == 1 and a[0].title == 'a (612 samples, 56.51%)',
       'frame a\'s title is "a (612 samples, 56.51%%)" (%s)' % (a[0].title if a else None))
    want_kind = {p: k for p, (_, k) in tree.items()}
    bad = [(f.name, f.fill) for f in frames
           if family(f.fill) != (want_kind[f.path] if f.d else 'root')]
    ok(not bad, 'every frame\'s colour is of its kind\'s family %s' % bad[:3])
    ok({family(f.fill) for f in frames} == {'root', 'process', 'user', 'kernel', 'module'},
       'the example has frames of every kind')
    same = collections.defaultdict(set)
    for f in frames:
        same[f.name].add(f.fill)
    ok(all(len(v) == 1 for v in same.values()), 'a name has one colour wherever it is')
    bad = [(f.label, f.name) for f in frames if f.label != label_for(f.name, f.width)]
    clipped = [f for f in frames if f.label.endswith('..')]
    ok(not bad and clipped, 'labels are the names cut to their frames\' widths '
       '(%d cut with "..") %s' % (len(clipped), bad[:3]))


def pick(svg, name):
    _, frames = svg_frames(svg)
    f = [f for f in frames if f.name == name][0]
    print('%s %d %d' % (f.id, round(f.x + f.width / 2), round(f.y + f.height / 2)))


# ---- PNG screenshots ----

def read_png(path):
    with open(path, 'rb') as fh:
        data = fh.read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise ValueError('not a PNG')
    pos, idat, w = 8, b'', None
    while pos < len(data):
        n, typ = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if typ == b'IHDR':
            w, h, bits, ctype, _, _, lace = struct.unpack('>IIBBBBB', body)
            if bits != 8 or ctype not in (2, 6) or lace:
                raise ValueError('PNG format %d/%d/%d' % (bits, ctype, lace))
            bpp = 3 if ctype == 2 else 4
        elif typ == b'IDAT':
            idat += body
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 0xff
            elif ft == 2:
                line[i] = (line[i] + b) & 0xff
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xff
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 0xff
        rows.append(line)
        prev = line
    return w, h, lambda x, y: tuple(rows[y][x * bpp:x * bpp + 3])


def close(a, b, tol=3):
    return all(abs(p - q) <= tol for p, q in zip(a, b))


def dark(rgb):
    return max(rgb) < 100


def dominant(px, x0, x1, y0, y1):
    c = collections.Counter(px(x, y) for x in range(x0, x1) for y in range(y0, y1))
    return c.most_common(1)[0][0] if c else None


def check_png(png, svg, folded):
    root, frames = svg_frames(svg)
    try:
        w, h, px = read_png(png)
    except (OSError, ValueError, zlib.error) as e:
        ok(False, 'the screenshot is a PNG: %s' % e)
        return
    ok((w, h) == (1200, int(root.get('height'))),
       'the screenshot is the SVG\'s size, 1200x%s (got %dx%d)' % (root.get('height'), w, h))
    bad, seen = [], set()
    for f in frames:
        if f.width < 6:
            continue
        x0, x1 = int(f.x) + 2, int(f.x + f.width) - 1
        lx = int(f.x + 3 + len(f.label) * GLYPH_W) + 2
        if x1 - max(x0, lx) >= 2:
            x0 = max(x0, lx)
        c = dominant(px, x0, x1, int(f.y) + 2, int(f.y) + 13)
        if c is None or not close(c, f.fill):
            bad.append((f.name, f.fill, c))
        else:
            seen.add(family(c))
    ok(not bad, 'every frame 6 px wide or more shows its colour where the SVG puts it %s'
       % bad[:3])
    ok(seen == {'root', 'process', 'user', 'kernel', 'module'},
       'the pixels show all four kinds\' colours and the root\'s (%s)' % sorted(seen))
    # legibility: dark glyphs inside each label's box, none past it
    labelled = [f for f in frames if f.label]
    widest = max((f for f in labelled if f.d), key=lambda f: f.width)
    bad, low = [], []
    for f in labelled:
        y0, y1 = int(f.y) + 1, int(f.y + f.height)
        lx0 = int(f.x + 3)
        lx1 = int(f.x + 3 + len(f.label) * GLYPH_W) + 2
        inside = sum(dark(px(x, y)) for x in range(lx0, min(lx1, 1200)) for y in range(y0, y1))
        past = sum(dark(px(x, y)) for x in range(lx1 + 1, int(f.x + f.width) - 1)
                   for y in range(y0, y1))
        glyphs = len(f.label.replace(' ', ''))
        if past or lx1 > f.x + f.width + 1:
            bad.append((f.label, past))
        if inside < 6 * glyphs:
            low.append((f.label, inside, glyphs))
        if f is widest:
            ok(inside >= 6 * glyphs, 'the widest frame (%s) shows its label in dark pixels: '
               '%d for %d glyphs' % (f.name, inside, glyphs))
    ok(not low, 'every label has dark glyph pixels (6 a glyph at least) %s' % low[:3])
    ok(not bad, 'no label\'s text passes its own box (clipped to the frame) %s' % bad[:3])
    ok(not any(dark(px(x, y)) for x in range(0, 1200)
               for y in range(int(frames[0].y) + 16, h - 20)),
       'nothing is drawn under the root but the details line')


def check_zoomed(png, svg, zid):
    _, frames = svg_frames(svg)
    w, h, px = read_png(png)
    z = [f for f in frames if f.id == zid][0]
    y = int(z.y) + 7
    cols = [c for c in range(int(XPAD + 3 + len(z.name) * GLYPH_W) + 4, XPAD + GW - 2, 40)]
    ok(all(close(px(c, y), z.fill) for c in cols),
       'zoomed to %s: its colour fills the width, x 10 to 1190' % z.name)
    under = [f for f in frames if f.d > z.d and f.s >= z.s and f.s + f.w <= z.s + z.w]
    bad = []
    for f in under:
        nx = XPAD + (f.s - z.s) / z.w * GW
        nw = f.w / z.w * GW
        if nw < 8:
            continue
        c = dominant(px, int(nx + nw) - 4, int(nx + nw) - 1, int(f.y) + 2, int(f.y) + 13)
        if not close(c, f.fill):
            bad.append((f.name, f.fill, c))
    ok(under and not bad, 'the %d frames on it are drawn rescaled, each at its new place '
       'in its colour %s' % (len(under), bad[:3]))
    anc = [f for f in frames if f.d < z.d and f.d > 0]
    bad = [f.name for f in anc if close(px(XPAD + GW - 4, int(f.y) + 7), f.fill, 8) or
           px(XPAD + GW - 4, int(f.y) + 7) == BG]
    ok(anc and not bad, 'the frames under it span the width, dimmed %s' % bad[:3])


def check_search(dom, folded, regex):
    stacks = read_folded(folded)
    total = sum(stacks.values())
    rx = re.compile(regex)
    want = sum(w for s, w in stacks.items()
               if any(rx.search(kind_of(f, i)[0]) for i, f in enumerate(s)))
    with open(dom, encoding='utf-8') as f:
        text = f.read()
    m = re.search(r'<text id="matched"[^>]*>([^<]*)</text>', text)
    expect = 'Matched: %.2f%% (%d samples)' % (100.0 * want / total, want)
    ok(m and m.group(1) == expect, 'search /%s/: "%s" (got "%s")'
       % (regex, expect, m.group(1) if m else None))
    hits = re.findall(r'<g class="f hit"[^>]*><title>([^<]*) \(', text)
    names = {kind_of(f, i)[0] for s in stacks for i, f in enumerate(s)}
    want_hits = sorted(n for n in names if rx.search(n))
    ok(sorted(set(hits)) == want_hits and hits,
       'the %d frames whose names match are highlighted, no other' % len(hits))


def check_zoom_state(st, byid, z):
    bad = []
    for g in st['frames']:
        f = byid[g['id']]
        cls = g['cls'].split()
        if f.d >= z.d and f.s >= z.s and f.s + f.w <= z.s + z.w:
            nx, nw = XPAD + (f.s - z.s) / z.w * GW, f.w / z.w * GW
            if 'out' in cls or abs(g['x'] - nx) > 0.006 or abs(g['w'] - nw) > 0.006 or \
               g['label'] != label_for(f.name, round(nw, 2)):
                bad.append(('in', f.name, g))
        elif f.d < z.d and f.s <= z.s and f.s + f.w >= z.s + z.w:
            if 'anc' not in cls or g['x'] != XPAD or g['w'] != GW:
                bad.append(('under', f.name, g))
        elif 'out' not in cls:
            bad.append(('out', f.name, g))
    return bad


def as_written(st, byid):
    return [g['id'] for g in st['frames']
            if g['cls'] != 'f' or abs(g['x'] - byid[g['id']].x) > 0.006 or
            abs(g['w'] - byid[g['id']].width) > 0.006 or g['label'] != byid[g['id']].label]


def check_session(path, svg, folded, zid, regex, outdir):
    """cdp_drive.py's session: hover, click, reset, search, Escape."""
    _, frames = svg_frames(svg)
    byid = {f.id: f for f in frames}
    z = byid[zid]
    try:
        with open(path, encoding='utf-8') as f:
            got = json.load(f)
    except (OSError, ValueError) as e:
        ok(False, 'the browser session was recorded: %s' % e)
        return
    ok('error' not in got, 'the browser session ran to its end %s' % got.get('error', ''))
    ok(got.get('hover') == z.title, 'the pointer over %s: the details line is its title '
       '"%s" (got "%s")' % (z.name, z.title, got.get('hover')))
    st = got.get('zoom')
    ok(st and st['zoom'] == zid, 'a click at %s\'s centre zoomed to it (%s)'
       % (z.name, st and st['zoom']))
    bad = check_zoom_state(st, byid, z) if st else ['no state']
    ok(not bad, 'zoomed: the frame fills 1180 px, those on it rescaled and relabelled, '
       'those under it full width and dimmed, the rest hidden %s' % bad[:2])
    check_zoomed(os.path.join(outdir, 'zoom.png'), svg, zid)
    st = got.get('reset')
    bad = as_written(st, byid) if st else ['no state']
    ok(st and st['zoom'] == 'f0' and not bad,
       'a click on "Reset zoom" puts every frame back as written %s' % bad[:3])
    st = got.get('search')
    stacks = read_folded(folded)
    total = sum(stacks.values())
    rx = re.compile(regex)
    want = sum(w for s, w in stacks.items()
               if any(rx.search(kind_of(f, i)[0]) for i, f in enumerate(s)))
    expect = 'Matched: %.2f%% (%d samples)' % (100.0 * want / total, want)
    ok(st and st['matched'] == expect, '"Search", /%s/ typed in its prompt: "%s" (got "%s")'
       % (regex, expect, st and st['matched']))
    hits = sorted(g['id'] for g in st['frames'] if 'hit' in g['cls'].split()) if st else []
    want_hits = sorted(f.id for f in frames if f.d and rx.search(f.name))
    ok(hits and hits == want_hits, 'exactly the %d frames whose names match are '
       'highlighted' % len(want_hits))
    try:
        w, h, px = read_png(os.path.join(outdir, 'search.png'))
    except (OSError, ValueError, zlib.error) as e:
        ok(False, 'the search screenshot is a PNG: %s' % e)
        return
    bad = []
    for f in frames:
        if f.width < 6:
            continue
        lx = int(f.x + 3 + len(f.label) * GLYPH_W) + 2
        x0, x1 = int(f.x) + 2, int(f.x + f.width) - 1
        if x1 - max(x0, lx) >= 2:
            x0 = max(x0, lx)
        c = dominant(px, x0, x1, int(f.y) + 2, int(f.y) + 13)
        want_c = HIT if f.id in want_hits else f.fill
        if not close(c, want_c):
            bad.append((f.name, want_c, c))
    ok(not bad, 'on screen the matches are green, every other frame keeps its colour %s'
       % bad[:3])
    st = got.get('escape')
    bad = as_written(st, byid) if st else ['no state']
    ok(st and st['zoom'] == 'f0' and not bad and st['matched'].strip() == '',
       'Escape, zoomed and searching: both undone %s' % bad[:3])


def main(argv):
    cmd = argv[1]
    if cmd == 'svg':
        check_svg(argv[2], argv[3])
    elif cmd == 'pick':
        pick(argv[2], argv[3])
    elif cmd == 'png':
        check_png(argv[2], argv[3], argv[4])
    elif cmd == 'zoomed':
        check_zoomed(argv[2], argv[3], argv[4])
    elif cmd == 'search':
        check_search(argv[2], argv[3], argv[4])
    elif cmd == 'session':
        check_session(argv[2], argv[3], argv[4], argv[5], argv[6], argv[7])
    else:
        sys.exit('flame_check.py: unknown check %s' % cmd)


if __name__ == '__main__':
    main(sys.argv)
