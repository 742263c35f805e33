"""A single-node SLURM cluster for tests, from Debian's packages (slurmctld, slurmd, munge): a
generated munge key, a slurm.conf naming this host with its cores, the three daemons in the
foreground under the caller's control, all in one temporary directory. Leaving the `with` block stops
the daemons (SIGTERM, then SIGKILL) and removes the directory, whatever happened inside.

    with LocalCluster() as cluster:
        subprocess.run(["sbatch", ...], env=cluster.env)
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalCluster:
    def __init__(self, cpus=None, timeout_s=60):
        self.cpus = cpus or os.cpu_count() or 1
        self.timeout_s = timeout_s
        self.procs = []
        self.dir = None
        self.env = None

    def __enter__(self):
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def pids(self):
        return [p.pid for p in self.procs]

    def _daemon(self, name, argv):
        log = open(os.path.join(self.dir, name + ".out"), "w")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
        self.procs.append(p)
        return p

    def _start(self):
        self.dir = tempfile.mkdtemp(prefix="memwall-slurm-")
        os.chmod(self.dir, 0o700)
        d = self.dir
        host = socket.gethostname().split(".")[0]
        for sub in ("state", "spool", "munge"):
            os.makedirs(os.path.join(d, sub), mode=0o700)
        key = os.path.join(d, "munge", "munge.key")
        subprocess.run(["/usr/sbin/mungekey", "--create", "--keyfile", key], check=True, capture_output=True)
        os.chmod(key, 0o400)
        sock = os.path.join(d, "munge", "munge.socket")
        conf = os.path.join(d, "slurm.conf")
        with open(conf, "w") as f:
            f.write(f"""ClusterName=memwall-test
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
AuthType=auth/munge
AuthInfo=socket={sock}
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
MinJobAge=3600
NodeName={host} NodeAddr=127.0.0.1 CPUs={self.cpus} State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        self.env = dict(os.environ, SLURM_CONF=conf)
        self._daemon("munged", ["/usr/sbin/munged", "--foreground", "--force", "--key-file", key, "--socket", sock,
                                "--pid-file", os.path.join(d, "munge", "munged.pid"),
                                "--log-file", os.path.join(d, "munge", "munged.log"),
                                "--seed-file", os.path.join(d, "munge", "munged.seed")])
        self._wait(lambda: os.path.exists(sock), "munged's socket")
        self._daemon("slurmctld", ["/usr/sbin/slurmctld", "-D", "-i", "-f", conf])
        self._daemon("slurmd", ["/usr/sbin/slurmd", "-D", "-f", conf])

        def node_up():
            p = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True, text=True, env=self.env)
            return p.returncode == 0 and p.stdout.strip() in ("idle", "mixed", "allocated")

        self._wait(node_up, "the node to come up")

    def _wait(self, ready, what):
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            for p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"a SLURM test daemon exited ({p.args[0]}, {p.returncode}) while waiting for "
                                       f"{what}:\n{self.logs()}")
            if ready():
                return
            time.sleep(0.2)
        raise RuntimeError(f"timed out waiting for {what}:\n{self.logs()}")

    def logs(self):
        text = ""
        for name in ("munged.out", "slurmctld.out", "slurmd.out", "slurmctld.log", "slurmd.log"):
            path = os.path.join(self.dir or "", name)
            if self.dir and os.path.exists(path):
                text += f"== {name}\n" + open(path, errors="replace").read()[-3000:]
        return text

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 10
        for p in reversed(self.procs):
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
