"""Grids as lists of equal-length strings."""

from collections import deque


def transpose(rows):
    return ["".join(col) for col in zip(*rows, strict=False)]


def rotate(rows):
    """Rotate a quarter turn clockwise."""
    return ["".join(col) for col in zip(*reversed(rows), strict=False)]


def flood_count(rows, r, c):
    """Number of '.' cells connected to (r, c) (0 when (r, c) is a wall)."""
    if rows[r][c] != ".":
        return 0
    seen, todo = {(r, c)}, deque([(r, c)])
    while todo:
        y, x = todo.popleft()
        for ny, nx in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
            inside = 0 <= ny < len(rows) and 0 <= nx < len(rows[0])
            if inside and (ny, nx) not in seen and rows[ny][nx] == ".":
                seen.add((ny, nx))
                todo.append((ny, nx))
    return len(seen)


def life(cells, steps, size=12):
    """Game of life on a size x size torus; cells is a set of (row, col)."""
    cells = set(cells)
    for _ in range(steps):
        counts = {}
        for y, x in cells:
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    if dy or dx:
                        key = ((y + dy) % size, (x + dx) % size)
                        counts[key] = counts.get(key, 0) + 1
        cells = {k for k, n in counts.items() if n == 3 or (n == 2 and k in cells)}
    return cells
