"""What every memwall figure shares: full --help, `--out`, plain tick labels, wrapped names, a title,
nothing clipped. tests/check_figures.py runs each script with MEMWALL_FIGURE_CHECK=FILE.json: save()
then appends what it drew (titles, axis labels, legend entries, the labels of drawn artists, tick
labels, pixel size) so that the test checks the artists, not only that a PNG exists."""
import argparse
import json
import os
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import ticker  # noqa: E402


def parser(doc):
    """An argument parser whose --help prints the script's whole docstring (not its first line cut)."""
    return argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)


def add_out(p, default):
    p.add_argument("--out", default=default, help=f"figure to write: .png, .pdf or .svg (default: {default})")


def wrap(name, width=22):
    """A long scenario or layout name on several lines, never cut."""
    return "\n".join(textwrap.wrap(str(name), width)) or str(name)


def _plain(value, _pos=None):
    """Tick text without scientific notation: 2925, 0.05, 1.2M."""
    if value == 0:
        return "0"
    a = abs(value)
    for scale, suffix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")):
        if a >= scale:
            return f"{value / scale:g}{suffix}"
    if a >= 1e4:
        return f"{value / 1e3:g}k"
    if a >= 1:
        return f"{value:,.6g}" if a < 1e4 else f"{value:,.0f}"
    return f"{value:.3g}"


def plain_ticks(ax):
    """Plain numbers on both axes, linear or log (no '2.925x10^3', no offset text)."""
    for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
        if scale == "log":
            low, high = sorted(axis.get_view_interval())
            # Less than two decades: ticks at 1, 2, 5 x 10^k, so that the axis still reads.
            subs = (1.0, 2.0, 5.0) if low > 0 and high / low < 100 else (1.0,)
            axis.set_major_locator(ticker.LogLocator(base=10, subs=subs))
            axis.set_major_formatter(ticker.FuncFormatter(_plain))
            axis.set_minor_formatter(ticker.NullFormatter())
        elif scale == "linear" and isinstance(axis.get_major_formatter(), ticker.ScalarFormatter):
            axis.set_major_formatter(ticker.FuncFormatter(_plain))


def _drawn_labels(ax):
    labels = []
    for artist in list(ax.lines) + list(ax.collections) + list(ax.patches) + list(ax.containers):
        label = artist.get_label() if hasattr(artist, "get_label") else None
        if label and not label.startswith("_"):
            labels.append(label)
    return labels


def _shown_ticks(axis):
    """Labels of the major ticks inside the view (what a reader sees on that axis)."""
    low, high = sorted(axis.get_view_interval())
    return [t.label1.get_text() for t in axis.get_major_ticks()
            if t.label1.get_visible() and t.get_loc() is not None and low <= t.get_loc() <= high and t.label1.get_text()]


def save(fig, path, dpi=130, as_drawn=False):
    """Saves with plain ticks and a tight box (titles, legends and rotated labels inside the image),
    then records the figure's artists for tests/check_figures.py when MEMWALL_FIGURE_CHECK names a file.
    `as_drawn`: exactly as the caller drew it (the seed's figure, compared pixel for pixel)."""
    if not as_drawn:
        for ax in fig.axes:
            plain_ticks(ax)
    fig.savefig(path, dpi=dpi, **({} if as_drawn else {"bbox_inches": "tight"}))
    check = os.environ.get("MEMWALL_FIGURE_CHECK")
    if not check:
        return
    fig.canvas.draw()
    record = {"path": os.path.abspath(path), "suptitle": fig._suptitle.get_text() if fig._suptitle else "",
              "axes": []}
    for ax in fig.axes:
        legend = ax.get_legend()
        record["axes"].append({
            "title": ax.get_title() or ax.get_title("left"),
            "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
            "legend": [t.get_text() for t in legend.get_texts()] if legend else [],
            "drawn": _drawn_labels(ax),
            "ticks": [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()],
            "xticks": _shown_ticks(ax.xaxis), "yticks": _shown_ticks(ax.yaxis),
            # A panel sharing an axis with another may leave its numbers to that one.
            "shared": [len(ax.get_shared_x_axes().get_siblings(ax)) > 1, len(ax.get_shared_y_axes().get_siblings(ax)) > 1],
            "offsets": [ax.xaxis.get_offset_text().get_text(), ax.yaxis.get_offset_text().get_text()],
            "visible": ax.get_visible() and ax.axison,
        })
    records = json.load(open(check)) if os.path.exists(check) else []
    records.append(record)
    json.dump(records, open(check, "w"))
    plt.close(fig)
