"""Reading memwall sweep results (CSV) for the analysis scripts."""
import csv


def load(path):
    """Rows with status ok, numbers converted; other columns stay text."""
    out = []
    for row in csv.DictReader(open(path)):
        if row["status"] != "ok":
            continue
        for k, v in row.items():
            try:
                row[k] = float(v)
            except (TypeError, ValueError):
                pass
        out.append(row)
    return out


def fabric_label(row):
    return row.get("_fabric") or row.get("cluster.fabric", "")
