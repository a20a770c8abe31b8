#!/usr/bin/env python3
"""A build without libsystemd (-DWARDEN_SYSTEMD=OFF, or AUTO where it is
missing; docs/install.md), tested without a tree of its own, as
no_postgres_test.sh tests one without PostgreSQL:

 1. warden_nosd, linked in this tree from the very CLI objects `warden` is
    made of and the built-in notify sender (src/cli/notify_send_builtin.cc),
    links no libsystemd and still speaks the notify protocol: a worker run
    as systemd runs a Type=notify unit's main process (NOTIFY_SOCKET,
    WATCHDOG_USEC, WATCHDOG_PID) sends READY=1, WATCHDOG=1 and STOPPING=1
    from its own pid to a socket path and to an abstract socket, and no
    WATCHDOG=1 when WATCHDOG_PID names another process;
 2. configuring the source tree where pkg-config finds no libsystemd (a
    copy of its search path without libsystemd.pc) picks the built-in
    sender under the default AUTO, no build rule names libsystemd, and
    -DWARDEN_SYSTEMD=ON fails there, saying so. With -DWARDEN_POSTGRES=OFF,
    which turns the tests off: a configure of seconds.

    no_systemd_test.py WARDEN_NOSD WARDEN SOURCE_DIR WORK_DIR
"""
import array
import glob
import os
import shutil
import socket
import subprocess
import sys
import threading
import time


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def need(*tools):
    for tool in tools:
        if shutil.which(tool) is None:
            print(f"no_systemd_test: {tool} not found (scripts/deps.sh installs it)")
            sys.exit(1 if os.environ.get("CI", "") not in ("", "false", "0") else 77)


class Listener:
    """A service manager's end: a datagram socket with SO_PASSCRED."""

    def __init__(self, address):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.sock.bind(address)
        self.sock.settimeout(0.2)
        self.messages = []  # (pid, text)
        self.stop = False
        self.thread = threading.Thread(target=self.receive)
        self.thread.start()

    def receive(self):
        creds_size = array.array("i", [0, 0, 0]).itemsize * 3
        while not self.stop:
            try:
                data, ancillary, _, _ = self.sock.recvmsg(4096, socket.CMSG_SPACE(creds_size))
            except socket.timeout:
                continue
            pid = -1
            for level, kind, value in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    pid = array.array("i", value[:creds_size])[0]
            self.messages.append((pid, data.decode("utf-8", "replace")))

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()

    def with_line(self, line):
        return [(pid, text) for pid, text in self.messages if line in text.split("\n")]


def run_worker(nosd, db, address, watchdog_pid):
    """`warden worker --exit-when-idle` as a unit's main process; returns
    (its pid, the listener's messages)."""
    listener = Listener(address)
    try:
        env = dict(os.environ, NOTIFY_SOCKET=address if address[0] != "\0" else "@" + address[1:],
                   WATCHDOG_USEC="200000")
        # WATCHDOG_PID: the shell's pid, which the worker keeps when exec'd.
        proc = subprocess.Popen(
            ["/bin/sh", "-c", f"export WATCHDOG_PID={watchdog_pid}; exec \"$@\"", "sh", nosd,
             "--db", db, "--config", "/dev/null", "worker", "--allow-cmd", "--exit-when-idle",
             "--log-level", "error"], env=env)
        if proc.wait(timeout=60) != 0:
            fail(f"the worker exited {proc.returncode}")
        time.sleep(0.3)  # the last datagrams
    finally:
        listener.close()
    return proc.pid, listener.messages


def main():
    nosd, warden, src, work = sys.argv[1:5]
    need("cmake", "ldd", "pkg-config")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    ldd = subprocess.run(["ldd", nosd], capture_output=True, text=True, check=True).stdout
    if "libsystemd" in ldd:
        fail(f"{nosd} links libsystemd")
    if "libsystemd" not in subprocess.run(["ldd", warden], capture_output=True, text=True,
                                          check=True).stdout:
        print(f"note: {warden} does not link libsystemd either (built with the built-in sender)")

    db = os.path.join(work, "jobs.db")
    # A job that runs a second: pings come every 100 ms meanwhile.
    subprocess.run([nosd, "--db", db, "--config", "/dev/null", "add", "--cmd", "sleep 1"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    path = os.path.join(work, "notify")
    pid, messages = run_worker(nosd, db, path, "$$")
    for line in ("READY=1", "STOPPING=1", "WATCHDOG=1"):
        sent = [m for m in messages if line in m[1].split("\n")]
        if not sent:
            fail(f"no {line} on {path}: {messages}")
        if any(p != pid for p, _ in sent):
            fail(f"{line} from another pid than the worker's {pid}: {sent}")
    if len([m for m in messages if "WATCHDOG=1" in m[1].split("\n")]) < 3:
        fail(f"fewer than 3 WATCHDOG=1 in the job's second: {messages}")
    print(f"socket path: {len(messages)} messages from pid {pid}, READY=1, WATCHDOG=1, STOPPING=1")

    subprocess.run([nosd, "--db", db, "--config", "/dev/null", "add", "--cmd", "sleep 0.5"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    abstract = f"\0warden-no-systemd-{os.getpid()}"
    # WATCHDOG_PID 1: the watchdog is another process's.
    _, messages = run_worker(nosd, db, abstract, "1")
    texts = [t for _, t in messages]
    if not any("READY=1" in t.split("\n") for t in texts):
        fail(f"no READY=1 on the abstract socket: {texts}")
    if any("WATCHDOG=1" in t.split("\n") for t in texts):
        fail(f"WATCHDOG=1 sent for another pid's watchdog: {texts}")
    print("abstract socket: READY=1; no WATCHDOG=1 for another pid's watchdog")

    # The configure: pkg-config's search path, without libsystemd.pc.
    pc = os.path.join(work, "pkgconfig")
    os.makedirs(pc)
    search = subprocess.run(["pkg-config", "--variable", "pc_path", "pkg-config"],
                            capture_output=True, text=True, check=True).stdout.strip()
    for d in search.split(":") + os.environ.get("PKG_CONFIG_PATH", "").split(":"):
        for f in glob.glob(os.path.join(d, "*.pc")) if d else []:
            if os.path.basename(f) != "libsystemd.pc" and not os.path.exists(
                    os.path.join(pc, os.path.basename(f))):
                os.symlink(f, os.path.join(pc, os.path.basename(f)))
    env = dict(os.environ, PKG_CONFIG_LIBDIR=pc, PKG_CONFIG_PATH="")
    tree = os.path.join(work, "tree")
    configure = ["cmake", "-S", src, "-B", tree, "-G", "Unix Makefiles",
                 "-DCMAKE_BUILD_TYPE=Release", "-DWARDEN_POSTGRES=OFF"]
    out = subprocess.run(configure, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"configure without libsystemd:\n{out.stdout}{out.stderr}")
    if "sd_notify built-in" not in out.stdout:
        fail(f"AUTO without libsystemd did not pick the built-in sender:\n{out.stdout}")
    rules = [os.path.join(d, f) for d, _, fs in os.walk(tree) for f in fs
             if f in ("flags.make", "link.txt", "build.make")]
    if not rules:
        fail(f"no build rules in {tree}")
    for rule in rules:
        with open(rule, encoding="utf-8") as r:
            text = r.read()
        if "libsystemd" in text or "-lsystemd" in text:
            fail(f"{rule} names libsystemd")
    if not any("notify_send_builtin.cc" in open(r, encoding="utf-8").read() for r in rules):
        fail("the built-in sender is not built")
    shutil.rmtree(tree)
    out = subprocess.run(configure + ["-DWARDEN_SYSTEMD=ON"], env=env, capture_output=True,
                         text=True)
    if out.returncode == 0 or "libsystemd" not in out.stdout + out.stderr:
        fail(f"-DWARDEN_SYSTEMD=ON without libsystemd: exit {out.returncode}\n{out.stderr}")
    print("configure without libsystemd: AUTO takes the built-in sender, ON fails")


if __name__ == "__main__":
    main()
