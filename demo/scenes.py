"""Scenes of the demo project, drawn with Pillow: each builder takes a seeded random
generator, a `save(image, role)` callback and the pair number, and returns
(variant, prompt parts, good response parts, bad response parts)."""

from PIL import Image, ImageDraw, ImageFont

RGB = {
    "red": (214, 39, 40),
    "blue": (40, 100, 215),
    "green": (44, 160, 44),
    "yellow": (250, 205, 30),
    "orange": (255, 127, 14),
    "purple": (148, 80, 189),
    "white": (255, 255, 255),
    "grey": (205, 205, 205),
    "black": (20, 20, 20),
}
SHAPES = ("circle", "square", "triangle")
SHAPE_COLOURS = ("red", "blue", "green", "yellow", "orange", "purple")
BACKGROUNDS = ("white", "grey", "yellow", "blue", "green")
NUMBERS = ("zero", "one", "two", "three", "four", "five", "six", "seven")
MARK = (220, 0, 0)

# ---------------------------------------------------------------- drawing primitives


def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError, ImportError):  # old Pillow or no FreeType: the bitmap font
        return ImageFont.load_default()


def _canvas(background, size=(256, 256)):
    image = Image.new("RGB", size, RGB.get(background, background))
    return image, ImageDraw.Draw(image)


def _text(draw, centre, text, size, fill=(0, 0, 0)):
    font = _font(size)
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    x, y = centre[0] - (right - left) / 2 - left, centre[1] - (bottom - top) / 2 - top
    draw.text((x, y), text, fill=fill, font=font)


def _shape(draw, kind, centre, radius, colour):
    x, y = centre
    style = {"fill": RGB[colour], "outline": (0, 0, 0), "width": 2}
    if kind == "circle":
        draw.ellipse((x - radius, y - radius, x + radius, y + radius), **style)
    elif kind == "square":
        draw.rectangle((x - radius, y - radius, x + radius, y + radius), **style)
    else:
        corners = [(x, y - radius), (x + radius, y + radius * 0.8), (x - radius, y + radius * 0.8)]
        draw.polygon(corners, **style)


def _cell(index, cols):
    step = 256 / cols
    row, col = divmod(index, cols)
    return step * (col + 0.5), step * (row + 0.5)


def _scene(background, objects, cols=3):
    """`objects`: (shape, colour, cell) triples on a cols × cols grid."""
    image, draw = _canvas(background)
    for kind, colour, cell in objects:
        _shape(draw, kind, _cell(cell, cols), 256 / cols * 0.34, colour)
    return image


def _word(word, ink, background):
    image, draw = _canvas(background)
    _text(draw, (128, 128), word, 40, RGB[ink])
    return image


def pick_other(rng, options, *excluded):
    return rng.choice([option for option in options if option not in excluded])


def _a(word):
    return f"{'an' if word[0] in 'aeiou' else 'a'} {word}"


# ---------------------------------------------------------------- text to image


def t2i_scene(rng, save, number):
    variant = ("count", "text", "relation")[number % 3]
    if variant == "count":
        n, kind = rng.randint(2, 5), rng.choice(SHAPES)
        background = rng.choice(BACKGROUNDS)
        colour = pick_other(rng, SHAPE_COLOURS, background)
        cells = rng.sample(range(9), 6)
        prompt = f"{NUMBERS[n]} {colour} {kind}s on a {background} background"
        good = _scene(background, [(kind, colour, c) for c in cells[:n]])
        flaw = rng.choice(("count", "colour", "background"))
        if flaw == "count":
            bad = _scene(background, [(kind, colour, c) for c in cells[: n + rng.choice((-1, 1))]])
        elif flaw == "colour":
            wrong = pick_other(rng, SHAPE_COLOURS, colour, background)
            bad = _scene(background, [(kind, wrong, c) for c in cells[:n]])
        else:
            wrong = pick_other(rng, BACKGROUNDS, background, colour)
            bad = _scene(wrong, [(kind, colour, c) for c in cells[:n]])
    elif variant == "text":
        word = rng.choice(("HELLO", "ARBITER", "PIZZA", "GARDEN", "ROBOT", "SUNSET", "CAMERA"))
        ink, background = rng.choice(
            (("black", "white"), ("white", "blue"), ("red", "yellow"), ("blue", "grey"))
        )
        prompt = f'the word "{word}" written in {ink} letters on a {background} background'
        good = _word(word, ink, background)
        if rng.random() < 0.7:
            i = rng.randrange(1, len(word) - 1)
            typos = (word[:i] + word[i + 1 :], word[:i] + word[i] + word[i:])
            typos += (word[:i] + word[i + 1] + word[i] + word[i + 2 :],)
            bad = _word(rng.choice([t for t in typos if t != word]), ink, background)
        else:
            bad = _word(word, pick_other(rng, ("black", "red", "green", "purple"), ink), background)
    else:
        first, second = rng.sample(SHAPES, 2)
        colour_1, colour_2 = rng.sample(SHAPE_COLOURS, 2)
        background = rng.choice(("white", "grey"))
        row = rng.randrange(3) * 3
        prompt = f"{_a(colour_1)} {first} to the left of {_a(colour_2)} {second}, on {background}"
        good = _scene(background, [(first, colour_1, row), (second, colour_2, row + 2)])
        flaw = rng.choice(("swapped", "shape", "colours"))
        if flaw == "swapped":
            bad = _scene(background, [(second, colour_2, row), (first, colour_1, row + 2)])
        elif flaw == "shape":
            third = pick_other(rng, SHAPES, first, second)
            bad = _scene(background, [(first, colour_1, row), (third, colour_2, row + 2)])
        else:
            bad = _scene(background, [(first, colour_2, row), (second, colour_1, row + 2)])
    prompt_parts = [["text", f"Generate an image of {prompt}."]]
    return variant, prompt_parts, [["image", save(good, "good")]], [["image", save(bad, "bad")]]


# ---------------------------------------------------------------- image editing


def edit_scene(rng, save, number):
    variant = ("recolour", "remove", "background")[number % 3]
    background = rng.choice(("white", "grey"))
    colours = rng.sample(SHAPE_COLOURS, 3)
    objects = list(zip(SHAPES, colours, rng.sample(range(9), 3), strict=True))
    target = rng.randrange(3)
    kind, colour, _ = objects[target]
    others = [o for i, o in enumerate(objects) if i != target]

    def recoloured(index, new):
        return [(k, new if i == index else c, p) for i, (k, c, p) in enumerate(objects)]

    if variant == "recolour":
        new = pick_other(rng, SHAPE_COLOURS, *colours)
        instruction = f"Make the {kind} {new}. Keep everything else exactly as it is."
        good = _scene(background, recoloured(target, new))
        bad = rng.choice(
            (
                _scene(background, objects),  # nothing changed
                _scene(background, [(k, new, p) for k, _, p in objects]),  # everything changed
                _scene(background, recoloured((target + 1) % 3, new)),  # the wrong object
            )
        )
    elif variant == "remove":
        instruction = f"Remove the {colour} {kind}, and nothing else."
        good = _scene(background, others)
        bad = rng.choice(
            (
                _scene(background, [objects[target], others[1]]),  # removed the wrong one
                _scene(background, others[:1]),  # removed two
                # a new background as well
                _scene(pick_other(rng, BACKGROUNDS, background, *colours), others),
            )
        )
    else:
        options = ("white", "grey", "yellow", "blue", "green", "purple")
        new = pick_other(rng, options, background, *colours)
        instruction = f"Change the background to {new}; leave the shapes untouched."
        good = _scene(new, objects)
        bad = rng.choice(
            (
                _scene(new, others),  # a shape lost
                _scene(background, objects),  # nothing changed
                _scene(
                    new, recoloured(target, pick_other(rng, SHAPE_COLOURS, *colours))
                ),  # altered
            )
        )
    prompt = [["text", instruction], ["image", save(_scene(background, objects), "input")]]
    return variant, prompt, [["image", save(good, "good")]], [["image", save(bad, "bad")]]


# ---------------------------------------------------------------- interleaved stories


def _ground(draw, colour=(110, 170, 70)):
    draw.rectangle((0, 215, 256, 256), fill=colour)


def _tower(step, colour):
    image, draw = _canvas((235, 232, 225))
    _ground(draw, (150, 110, 70))
    for level in range(step + 1):
        y = 215 - (level + 1) * 52
        draw.rectangle((98, y, 158, y + 52), fill=RGB[colour], outline=(0, 0, 0), width=2)
    return image


def _house(draw, walls, lit=False):
    draw.rectangle((150, 150, 225, 215), fill=RGB[walls], outline=(0, 0, 0), width=2)
    draw.polygon([(142, 150), (187, 112), (233, 150)], fill=(150, 50, 40), outline=(0, 0, 0))
    draw.rectangle((175, 165, 200, 190), fill=(255, 230, 90) if lit else (60, 70, 90))


def _balloon(step, colour):
    image, draw = _canvas((165, 210, 245))
    _ground(draw)
    _house(draw, "white")
    for x in range(15, 120, 14):
        draw.rectangle((x, 180, x + 6, 215), fill=(120, 80, 40))
    draw.line((15, 192, 113, 192), fill=(120, 80, 40), width=3)
    x, y, r = ((60, 120, 22), (185, 70, 15), (215, 22, 5))[step]
    draw.line((x, y + r, 60 if step == 0 else x - 3, 185 if step == 0 else y + 3 * r), fill=0)
    draw.ellipse((x - r, y - r * 1.2, x + r, y + r), fill=RGB[colour], outline=(0, 0, 0))
    return image


def _sky(step, colour):
    image, draw = _canvas(((140, 200, 250), (250, 160, 90), (20, 30, 70))[step])
    if step == 0:
        draw.ellipse((40, 25, 100, 85), fill=RGB["yellow"])
    elif step == 1:
        draw.ellipse((40, 185, 100, 245), fill=RGB["orange"])
    else:
        draw.ellipse((40, 25, 90, 75), fill=(245, 245, 220))
        draw.ellipse((55, 18, 105, 68), fill=(20, 30, 70))
        for sx, sy in ((130, 30), (200, 55), (110, 95), (235, 20), (20, 120)):
            draw.regular_polygon((sx, sy, 4), 4, fill=(255, 255, 200))
    _ground(draw, (110, 170, 70) if step < 2 else (40, 70, 40))
    _house(draw, colour, lit=step == 2)
    return image


def _plant(step, colour):
    image, draw = _canvas((225, 240, 250))
    _ground(draw, (200, 190, 170))
    draw.polygon([(88, 150), (168, 150), (155, 215), (101, 215)], fill=RGB[colour], outline=0)
    draw.rectangle((92, 150, 164, 160), fill=(110, 75, 45))
    if step == 0:
        draw.ellipse((120, 140, 136, 152), fill=(90, 60, 20), outline=(0, 0, 0))
    else:
        top = 110 if step == 1 else 50
        draw.line((128, 152, 128, top), fill=RGB["green"], width=5)
        draw.ellipse((100, top + 10, 128, top + 24), fill=RGB["green"])
        draw.ellipse((128, top + 18, 156, top + 32), fill=RGB["green"])
    if step == 2:
        for dx, dy in ((0, -18), (18, 0), (0, 18), (-18, 0)):
            draw.ellipse((110 + dx, 32 + dy, 146 + dx, 68 + dy), fill=RGB["red"], outline=0)
        draw.ellipse((118, 40, 138, 60), fill=RGB["yellow"])
    return image


STORIES = (
    (
        _tower,
        "Mia building a tower of {c} blocks",
        (
            "Mia puts one {c} block on the floor.",
            "She stacks a second {c} block on top of it.",
            "With a third block her tower is finished.",
        ),
    ),
    (
        _balloon,
        "a {c} balloon that floats away",
        (
            "A {c} balloon is tied to the garden fence.",
            "The wind pulls it loose and it floats up over the roof.",
            "Soon it is only a tiny dot high in the sky.",
        ),
    ),
    (
        _sky,
        "one day at a little {c} house, from morning to night",
        (
            "In the morning the sun shines high above the {c} house.",
            "In the evening the sun sets and the sky turns orange.",
            "At night the moon and the stars come out and the window glows.",
        ),
    ),
    (
        _plant,
        "a seed growing in a {c} pot",
        (
            "Sam plants a seed in a {c} pot.",
            "A week later a small green sprout appears.",
            "By summer it has grown into a tall flower.",
        ),
    ),
)


def interleaved_scene(rng, save, number):
    story, round_ = number % len(STORIES), number // len(STORIES)
    draw_step, topic, lines = STORIES[story]
    # Each round through the stories shifts the colour: no two prompts are the same.
    colour = ("red", "blue", "yellow", "purple", "green")[(story + round_) % 5]
    steps = rng.choice((2, 3))
    wrong_step = rng.randrange(steps)
    if rng.random() < 0.5:
        variant, wrong = "wrong step", (draw_step(pick_other(rng, range(3), wrong_step), colour))
    else:
        variant = "wrong colour"
        wrong = draw_step(wrong_step, pick_other(rng, ("red", "blue", "green", "purple"), colour))
    good, bad = [], []
    for step in range(steps):
        text = ["text", lines[step].format(c=colour)]
        image = save(draw_step(step, colour), f"step{step + 1}")
        good += [text, ["image", image]]
        bad += [text, ["image", save(wrong, "bad") if step == wrong_step else image]]
    prompt = f"Tell a short story in {steps} steps about {topic.format(c=colour)}. "
    prompt += "Illustrate every step with one picture."
    return variant, [["text", prompt]], good, bad


# ---------------------------------------------------------------- reasoning


def _chart(title, labels, values, readings=None, marks=None):
    image, draw = _canvas("white", (320, 240))
    left, right, bottom, unit = 36, 312, 212, 16
    _text(draw, (174, 10), title, 14)
    for v in range(0, 11, 2):
        y = bottom - v * unit
        draw.line((left, y, right, y), fill=(225, 225, 225))
        _text(draw, (20, y), str(v), 12)
    draw.line((left, bottom - 10 * unit, left, bottom), fill=0, width=2)
    draw.line((left, bottom, right, bottom), fill=0, width=2)
    slot = (right - left) / len(values)
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        x0, x1, y = left + (i + 0.2) * slot, left + (i + 0.8) * slot, bottom - value * unit
        draw.rectangle((x0, y, x1, bottom), fill=(70, 130, 180))
        _text(draw, ((x0 + x1) / 2, bottom + 14), label, 13)
        if readings:
            _text(draw, ((x0 + x1) / 2, y - 10), str(readings[i]), 13, MARK)
        if marks and i in marks:
            draw.rectangle((x0 - 4, y - 20, x1 + 4, bottom + 2), outline=marks[i], width=3)
    return image


CHARTS = (
    ("Ice creams sold per day", ("Mon", "Tue", "Wed", "Thu", "Fri"), "day"),
    ("Fruit harvested (crates)", ("apples", "pears", "plums", "figs"), "fruit"),
    ("Rainy days per region", ("North", "South", "East", "West"), "region"),
)


def _bars(rng, number):
    title, labels, noun = CHARTS[number // 2 % len(CHARTS)]
    values = rng.sample(range(1, 11), len(labels))
    question = f"Which {noun} has the highest value, and by how much does it exceed the lowest?"

    def answer(readings, slip=0):
        high, low = readings.index(max(readings)), readings.index(min(readings))
        read = ", ".join(f"{lab} = {v}" for lab, v in zip(labels, readings, strict=True))
        diff = readings[high] - readings[low] + slip
        trace = (
            f"Reading each bar against the axis: {read}. The highest is {labels[high]} "
            f"({readings[high]}) and the lowest is {labels[low]} ({readings[low]}), so the "
            f"difference is {readings[high]} - {readings[low]} = {diff}."
        )
        marks = {high: RGB["green"], low: MARK}
        image = _chart(title, labels, values, readings, marks)
        return trace, image, f"Answer: {labels[high]}, {diff} more than {labels[low]}."

    good = answer(values)
    if rng.random() < 0.5:
        variant, misread = "misread bar", list(values)
        top = values.index(max(values))
        misread[top] = sorted(values)[-2] - 1  # the tallest bar read too low
        bad = answer(misread)
    else:
        variant, bad = "arithmetic slip", answer(values, rng.choice((-2, -1, 1, 2)))
    chart = _chart(title, labels, values)
    return variant, question, chart, good, bad


def _count(rng, number):
    triangles, others = rng.randint(3, 7), rng.randint(2, 4)
    cells = rng.sample(range(16), triangles + others)
    objects = [("triangle", rng.choice(SHAPE_COLOURS), c) for c in cells[:triangles]]
    objects += [
        (rng.choice(("circle", "square")), rng.choice(SHAPE_COLOURS), c) for c in cells[triangles:]
    ]
    question = "How many triangles are in the picture? Explain how you counted."

    def answer(counted):
        image = _scene("white", objects, cols=4)
        draw = ImageDraw.Draw(image)
        rows = [0, 0, 0, 0]
        for k, cell in enumerate(sorted(counted)):
            x, y = _cell(cell, 4)
            draw.ellipse((x - 29, y - 29, x + 29, y + 29), outline=MARK, width=3)
            _text(draw, (x - 24, y - 24), str(k + 1), 14, MARK)
            rows[cell // 4] += 1
        per_row = ", ".join(f"row {r + 1}: {n}" for r, n in enumerate(rows))
        trace = (
            f"I scan the picture row by row and number every triangle I find ({per_row}). "
            f"Adding the rows up gives {len(counted)} triangles."
        )
        return trace, image, f"Answer: {len(counted)}"

    good = answer(cells[:triangles])
    if rng.random() < 0.5:
        variant, bad = "missed one", answer(cells[1:triangles])
    else:
        variant, bad = "counted a non-triangle", answer(cells[: triangles + 1])
    return variant, question, _scene("white", objects, cols=4), good, bad


def reasoning_scene(rng, save, number):
    variant, question, diagram, good, bad = (_bars if number % 2 else _count)(rng, number)
    parts = []
    for role, (trace, image, final) in (("good", good), ("bad", bad)):
        parts.append([["text", trace], ["image", save(image, role)], ["text", final]])
    prompt = [["text", question], ["image", save(diagram, "question")]]
    return variant, prompt, parts[0], parts[1]


# ---------------------------------------------------------------- records and seeding
