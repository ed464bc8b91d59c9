"""`uji acp`: the ACP connection on stdin and stdout, newline-delimited JSON-RPC 2.0.

The protocol owns the real stdout: it is moved to a descriptor of its own before anything
runs, and descriptor 1 then points at stderr, so a stray print, a Lua `print` or a child
process's output can never corrupt the stream. Stdin is moved likewise (children read
/dev/null).
"""

from __future__ import annotations

import asyncio
import os

from uji.paths import Paths

# A prompt with images can be a long line: the SDK's default, 50 MB.
LINE_LIMIT = 50 * 1024 * 1024


async def _streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    protocol_in, protocol_out = os.dup(0), os.dup(1)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(protocol_in, "rb", 0)
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(protocol_out, "wb", 0)
    )
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


async def serve(paths: Paths) -> int:
    """Answer the client until it closes our stdin."""
    from acp import run_agent
    from uji.acp.agent import UjiAcpAgent

    reader, writer = await _streams()
    agent = UjiAcpAgent(paths)
    try:
        await run_agent(agent, writer, reader)
    finally:
        await agent.close()
    return 0
