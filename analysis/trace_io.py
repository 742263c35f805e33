"""Reading memwall HDF5 traces (see README, "Traces") with Debian's h5py and numpy."""
import h5py
import numpy as np


class Trace:
    """A trace file's tables as numpy structured arrays, plus its attributes."""

    def __init__(self, path):
        with h5py.File(path, "r") as f:
            self.path = path
            self.attrs = {k: _text(v) for k, v in f.attrs.items()}
            self.phases = f["phases"][()]
            self.comms = f["comms"][()]
            self.links = f["links"][()]
            self.per_gpu = f["summary/per_gpu"][()]
            self.summary = {k: _text(v) for k, v in f["summary"].attrs.items()}
            enum = h5py.check_enum_dtype(f["phases"].dtype["phase"])
            self.phase_names = {value: name for name, value in enum.items()}
            self.units = {k[5:]: _text(v) for k, v in f["phases"].attrs.items() if k.startswith("unit_")}

    @property
    def name(self):
        return self.summary.get("name", self.attrs.get("scenario_name", self.path))

    def phase_label(self, value):
        return self.phase_names[int(value)]

    def by_phase(self):
        """{phase name: (seconds summed over GPUs, joules summed over GPUs)}, in enum order."""
        out = {}
        for value in sorted(self.phase_names):
            rows = self.phases[self.phases["phase"] == value]
            if len(rows) == 0:
                continue
            energy = rows["e_arith_j"] + rows["e_hbm_j"] + rows["e_static_j"] + rows["e_network_j"]
            out[self.phase_names[value]] = (float(np.sum(rows["t_end_s"] - rows["t_start_s"])), float(np.sum(energy)))
        return out


def _text(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.generic):
        return value.item()
    return value
