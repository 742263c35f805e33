"""Reading memwall HDF5 traces (docs/trace-schema.md) with Debian's h5py and numpy."""
import h5py
import numpy as np


class Trace:
    """A trace file's tables as numpy structured arrays, plus its attributes."""

    def __init__(self, path, job=None):
        """`job`: in a jobs file's trace (several jobs on one fabric), the job's name or index, whose
        rows and record are read; a jobs trace without it is refused with the jobs it holds."""
        with h5py.File(path, "r") as f:
            self.path = path
            self.attrs = {k: _text(v) for k, v in f.attrs.items()}
            self.phases = f["phases"][()]
            self.comms = f["comms"][()]
            self.links = f["links"][()]
            self.per_gpu = f["summary/per_gpu"][()]
            self.power = f["power"][()] if "power" in f else None  # GPU power over time (memwall >= issue 15)
            # each server's and the whole job's power over time (memwall >= issue 30)
            self.power_servers = f["power_servers"][()] if "power_servers" in f else None
            self.power_job = f["power_job"][()] if "power_job" in f else None
            self.summary = {k: _text(v) for k, v in f["summary"].attrs.items()}
            enum = h5py.check_enum_dtype(f["phases"].dtype["phase"])
            self.phase_names = {value: name for name, value in enum.items()}
            self.units = {k[5:]: _text(v) for k, v in f["phases"].attrs.items() if k.startswith("unit_")}
        if "jobs" in self.attrs:
            self._select_job(job)
        elif job is not None:
            raise SystemExit(f"{path}: a scenario's trace, not a jobs file's: no job to pick")
        if self.links.dtype.names and "name" in self.links.dtype.names:  # HDF5 strings reach numpy as bytes
            self.link_names = [_text(n) for n in self.links["name"]]
            self.link_kinds = [_text(n) for n in self.links["kind"]]

    def _select_job(self, job):
        """Keeps one job's rows of a jobs file's trace (each table's `job` column) and its record."""
        import json
        jobs = json.loads(self.attrs["jobs"])
        names = [j["job"] for j in jobs]
        pick = [j for j in jobs if j["job"] == job or str(j["index"]) == str(job)] if job is not None else []
        if not pick:
            raise SystemExit(f"{self.path}: a trace of several jobs ({', '.join(names)}): pick one with --job NAME")
        index = pick[0]["index"]
        for table in ("phases", "comms", "links", "per_gpu", "power", "power_servers", "power_job"):
            rows = getattr(self, table)
            if rows is not None:
                setattr(self, table, rows[rows["job"] == index])
        records = {r["name"]: r for r in json.loads(self.summary["jobs"])}
        record = records[pick[0]["job"]]
        self.summary = {k: v for k, v in record.items() if not isinstance(v, (dict, list))}
        self.summary.update({"breakdown_" + k: v for k, v in record.get("breakdown", {}).items()})
        self.attrs["scenario_name"] = pick[0]["job"]

    @property
    def name(self):
        return self.summary.get("name", self.attrs.get("scenario_name", self.path))

    def phase_label(self, value):
        return self.phase_names[int(value)]

    @property
    def stream(self):
        """Per phase row: 0 on the compute stream (rows tile the run), 1 on the communication stream
        (collectives overlapped with compute). Traces without the column have only the first."""
        if "stream" in self.phases.dtype.names:
            return self.phases["stream"]
        return np.zeros(len(self.phases), dtype=np.uint8)

    def by_phase(self):
        """{phase name: (seconds summed over GPUs, joules summed over GPUs)} of the compute stream, in
        enum order, then the overlapped collectives as 'NAME (overlapped)'. A collective's row on the
        compute stream is the time the GPU waited for it: its exposed part."""
        out = {}
        for stream, suffix in ((0, ""), (1, " (overlapped)")):
            for value in sorted(self.phase_names):
                rows = self.phases[(self.phases["phase"] == value) & (self.stream == stream)]
                if len(rows) == 0:
                    continue
                energy = rows["e_arith_j"] + rows["e_hbm_j"] + rows["e_static_j"] + rows["e_network_j"]
                out[self.phase_names[value] + suffix] = (float(np.sum(rows["t_end_s"] - rows["t_start_s"])),
                                                         float(np.sum(energy)))
        return out

    def collectives(self):
        """{collective kind: (busy GPU-seconds, exposed GPU-seconds, network joules)}. Without overlap
        every collective is exposed; with it, exposed is the compute stream's wait for it."""
        out = {}
        for value, name in sorted(self.phase_names.items()):
            if name not in ("allreduce", "allgather", "reducescatter"):
                continue
            rows = self.phases[self.phases["phase"] == value]
            if len(rows) == 0:
                continue
            seconds = rows["t_end_s"] - rows["t_start_s"]
            on_stream = self.stream[self.phases["phase"] == value] == 1
            busy = float(np.sum(seconds[on_stream])) if np.any(on_stream) else float(np.sum(seconds))
            exposed = float(np.sum(seconds[~on_stream]))
            out[name] = (busy, exposed, float(np.sum(rows["e_network_j"])))
        return out

def _text(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.generic):
        return value.item()
    return value
