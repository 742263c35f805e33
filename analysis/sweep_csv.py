"""Reading memwall sweep results (`--out R.csv` or `--out R.h5`) for the analysis scripts."""
import csv
import os
import sys


def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def _rows_csv(path):
    with open(path, newline="") as f:
        return [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(f)]


def _rows_hdf5(path):
    import h5py  # only needed for HDF5 results

    with h5py.File(path, "r") as f:
        if "points" not in f or "columns" not in f["points"].attrs:
            raise ValueError(f"{path}: not a memwall sweep results file (no /points columns)")
        group = f["points"]
        columns = [c.decode() if isinstance(c, bytes) else str(c) for c in group.attrs["columns"]]
        data = {}
        for c in columns:
            values = group[c][()]
            if group[c].dtype.kind == "f":  # numeric column (NaN where a point has no value)
                data[c] = [float(v) for v in values]
            else:
                data[c] = [_number(v.decode() if isinstance(v, bytes) else str(v)) for v in values]
        count = len(data[columns[0]]) if columns else 0
        return [{c: data[c][i] for c in columns} for i in range(count)]


def load(path):
    """Rows with status ok, numbers as floats; other columns stay text. Exits with a message (status 2)
    for a missing or unreadable file."""
    try:
        if os.path.splitext(path)[1].lower() in (".h5", ".hdf5"):
            rows = _rows_hdf5(path)
        else:
            rows = _rows_csv(path)
    except (OSError, ValueError, KeyError) as e:
        sys.stderr.write(f"{os.path.basename(sys.argv[0])}: {path}: {e}\n")
        sys.exit(2)
    return [r for r in rows if r.get("status") == "ok"]


def fabric_label(row):
    return row.get("_fabric") or row.get("cluster.fabric", "")
