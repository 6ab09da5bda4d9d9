"""A TCP proxy in front of the lease store that can delay each generator's traffic.

    proxy.py --listen IP:PORT --upstream IP:PORT --control FILE

This machine's kernel has no `sch_netem` (CONFIG_NET_SCH_NETEM is off), so delay is
made here, the way toxiproxy does it: every generator reaches the store through
this proxy (in the store's namespace, on the store's address), which forwards
bytes both ways and holds each chunk for the delay that `FILE` (JSON, re-read when
it changes) gives the client's address: `{"127.77.0.11": {"delay_ms": 200,
"jitter_ms": 50}}`. Order is kept (a chunk never overtakes an earlier one), a new
connection waits one delay before it reaches the store, and when either side
closes or fails both sides are closed, as a store's own socket would be. TLS passes
through untouched. Loss and partitions are the kernel's (nftables, netns.py).
"""

import argparse
import asyncio
import json
import os
import random
import signal

conf = {}
conf_mtime = None


def reload(path):
    global conf, conf_mtime
    try:
        m = os.stat(path).st_mtime_ns
        if m != conf_mtime:
            with open(path) as f:
                conf = json.load(f)
            conf_mtime = m
    except (OSError, ValueError):
        pass


def delay_of(ip):
    c = conf.get(ip)
    if not c:
        return 0.0
    d = c.get("delay_ms", 0) + random.uniform(-1, 1) * c.get("jitter_ms", 0)
    return max(d, 0) / 1000


async def pump(reader, writer, ip, done):
    """Copies reader to writer, each chunk after its delay, in order."""
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def deliver():
        while True:
            at, data = await queue.get()
            wait = at - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if data is None:
                return
            writer.write(data)
            await writer.drain()

    sender = asyncio.create_task(deliver())
    last = 0.0
    try:
        while True:
            data = await reader.read(65536)
            last = max(last, loop.time() + delay_of(ip))
            await queue.put((last, data or None))
            if not data:
                break
        await sender
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        sender.cancel()
        done.set()


async def handle(cr, cw, upstream):
    ip = (cw.get_extra_info("peername") or ("?",))[0]
    d = delay_of(ip)
    if d:
        await asyncio.sleep(d)
    try:
        ur, uw = await asyncio.open_connection(*upstream)
    except OSError:
        cw.close()
        return
    done = asyncio.Event()
    tasks = [
        asyncio.create_task(pump(cr, uw, ip, done)),
        asyncio.create_task(pump(ur, cw, ip, done)),
    ]
    await done.wait()
    # One side ended: close both, as the store's own socket would be.
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for w in (cw, uw):
        try:
            w.close()
        except OSError:
            pass


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--listen", required=True)
    p.add_argument("--upstream", required=True)
    p.add_argument("--control", required=True)
    a = p.parse_args()
    lh, lp = a.listen.rsplit(":", 1)
    uh, up = a.upstream.rsplit(":", 1)
    reload(a.control)
    server = await asyncio.start_server(
        lambda r, w: handle(r, w, (uh, int(up))), lh, int(lp), reuse_address=True
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for s in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(s, stop.set)
    print(f"proxy: listening on {a.listen}", flush=True)  # the harness waits for this line
    async with server:
        while not stop.is_set():
            reload(a.control)
            try:
                await asyncio.wait_for(stop.wait(), 0.05)
            except asyncio.TimeoutError:
                pass


if __name__ == "__main__":
    asyncio.run(main())
