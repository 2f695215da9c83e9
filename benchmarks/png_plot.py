"""A line plot written as a PNG with NumPy and zlib only (matplotlib is not installed here).

`line_plot(path, series, xlabel, ylabel)`: `series` is [(label, xs, ys, (r, g, b))]; the axes
get ticks at round values, the legend names each series. Text uses a 5x7 bitmap font with the
characters the benchmark plots need. The PNG is written by tensorweave's own encoder
(tensorweave/kernels/png.py).
"""
import numpy as np

from tensorweave.kernels.png import encode_png

# 5x7 glyphs, rows top to bottom ('#' = ink).
_FONT = {
    '0': ".###.|#...#|#..##|#.#.#|##..#|#...#|.###.",
    '1': "..#..|.##..|..#..|..#..|..#..|..#..|.###.",
    '2': ".###.|#...#|....#|...#.|..#..|.#...|#####",
    '3': "#####|...#.|..#..|...#.|....#|#...#|.###.",
    '4': "...#.|..##.|.#.#.|#..#.|#####|...#.|...#.",
    '5': "#####|#....|####.|....#|....#|#...#|.###.",
    '6': "..##.|.#...|#....|####.|#...#|#...#|.###.",
    '7': "#####|....#|...#.|..#..|.#...|.#...|.#...",
    '8': ".###.|#...#|#...#|.###.|#...#|#...#|.###.",
    '9': ".###.|#...#|#...#|.####|....#|...#.|.##..",
    ',': ".....|.....|.....|.....|.##..|..#..|.#...",
    '.': ".....|.....|.....|.....|.....|.##..|.##..",
    '-': ".....|.....|.....|#####|.....|.....|.....",
    '+': ".....|..#..|..#..|#####|..#..|..#..|.....",
    ' ': ".....|.....|.....|.....|.....|.....|.....",
    'a': ".....|.....|.###.|....#|.####|#...#|.####",
    'c': ".....|.....|.###.|#....|#....|#...#|.###.",
    'd': "....#|....#|.##.#|#..##|#...#|#...#|.####",
    'e': ".....|.....|.###.|#...#|#####|#....|.###.",
    'f': "..##.|.#..#|.#...|###..|.#...|.#...|.#...",
    'g': ".....|.####|#...#|#...#|.####|....#|.###.",
    'h': "#....|#....|#.##.|##..#|#...#|#...#|#...#",
    'i': "..#..|.....|.##..|..#..|..#..|..#..|.###.",
    'k': "#....|#....|#..#.|#.#..|##...|#.#..|#..#.",
    'l': ".##..|..#..|..#..|..#..|..#..|..#..|.###.",
    'm': ".....|.....|##.#.|#.#.#|#.#.#|#...#|#...#",
    'n': ".....|.....|#.##.|##..#|#...#|#...#|#...#",
    'o': ".....|.....|.###.|#...#|#...#|#...#|.###.",
    'p': ".....|.....|####.|#...#|####.|#....|#....",
    'r': ".....|.....|#.##.|##..#|#....|#....|#....",
    's': ".....|.....|.####|#....|.###.|....#|####.",
    't': ".#...|.#...|###..|.#...|.#...|.#..#|..##.",
    'u': ".....|.....|#...#|#...#|#...#|#..##|.##.#",
    'w': ".....|.....|#...#|#...#|#.#.#|#.#.#|.#.#.",
    'x': ".....|.....|#...#|.#.#.|..#..|.#.#.|#...#",
    'y': ".....|.....|#...#|#...#|.####|....#|.###.",
    '(': "...#.|..#..|.#...|.#...|.#...|..#..|...#.",
    ')': ".#...|..#..|...#.|...#.|...#.|..#..|.#...",
    '/': "....#|....#|...#.|..#..|.#...|#....|#....",
    '=': ".....|.....|#####|.....|#####|.....|.....",
}


def _text(canvas, x, y, text, color, scale=2):
    for index, char in enumerate(text.lower()):
        rows = _FONT.get(char, _FONT[" "]).split("|")
        for row in range(7):
            for col in range(5):
                if rows[row][col] == "#":
                    top, left = y + row * scale, x + (index * 6 + col) * scale
                    canvas[top:top + scale, left:left + scale] = color


def _line(canvas, x0, y0, x1, y1, color, width=2):
    steps = int(max(abs(x1 - x0), abs(y1 - y0), 1)) * 2
    xs = np.linspace(x0, x1, steps + 1).round().astype(int)
    ys = np.linspace(y0, y1, steps + 1).round().astype(int)
    height, wide = canvas.shape[:2]
    for dx in range(width):
        for dy in range(width):
            keep = (ys + dy >= 0) & (ys + dy < height) & (xs + dx >= 0) & (xs + dx < wide)
            canvas[ys[keep] + dy, xs[keep] + dx] = color


def _ticks(low, high, count=5):
    span = (high - low) / count
    magnitude = 10 ** np.floor(np.log10(span))
    step = min((m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= span),
               default=10 * magnitude)
    return np.arange(np.ceil(low / step) * step, high + 1e-9, step)


def write_png(path, rgb):
    with open(path, "wb") as handle:
        handle.write(encode_png(np.asarray(rgb, np.uint8), compression=9))


def line_plot(path, series, xlabel, ylabel, title="", size=(900, 540)):
    width, height = size
    left, right, top, bottom = 90, 20, 50, 70
    canvas = np.full((height, width, 3), 255, np.uint8)
    xs_all = np.concatenate([np.asarray(xs, float) for _, xs, _, _ in series])
    ys_all = np.concatenate([np.asarray(ys, float) for _, _, ys, _ in series])
    x_low, x_high = 0.0, float(xs_all.max()) * 1.02
    y_low, y_high = 0.0, float(ys_all.max()) * 1.05

    def px(x):
        return left + (x - x_low) / (x_high - x_low) * (width - left - right)

    def py(y):
        return height - bottom - (y - y_low) / (y_high - y_low) * (height - top - bottom)

    grey, black = (215, 215, 215), (0, 0, 0)
    for tick in _ticks(x_low, x_high):
        _line(canvas, px(tick), top, px(tick), height - bottom, grey, 1)
        _text(canvas, int(px(tick)) - 10, height - bottom + 8, f"{tick:g}", black)
    for tick in _ticks(y_low, y_high):
        _line(canvas, left, py(tick), width - right, py(tick), grey, 1)
        _text(canvas, 10, int(py(tick)) - 7, f"{tick:g}", black)
    _line(canvas, left, height - bottom, width - right, height - bottom, black)
    _line(canvas, left, top, left, height - bottom, black)
    _text(canvas, width // 2 - 6 * len(xlabel), height - 30, xlabel, black)
    _text(canvas, 10, 15, ylabel, black)
    if title:
        _text(canvas, left + 60, 15, title, black)
    for index, (label, xs, ys, color) in enumerate(series):
        points = [(px(x), py(y)) for x, y in zip(xs, ys)]
        for (x0, y0), (x1, y1) in zip(points, points[1:]):
            _line(canvas, x0, y0, x1, y1, color)
        legend_y = top + 10 + index * 24
        _line(canvas, width - 380, legend_y + 7, width - 350, legend_y + 7, color, 4)
        _text(canvas, width - 340, legend_y, label, color)
    write_png(path, canvas)
