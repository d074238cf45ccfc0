"""A Modbus TCP device for the Modbus bridge's tests (seed 001 §2.4), on pymodbus: an independent implementation.

Units 1 and 2 (unit 2 answers like unit 1; any other unit: gateway target failed), each with the four tables of
--size addresses (0 .. size-1; past that: illegal address). A control port takes one JSON object per line and answers
one line:
  {"op": "set", "unit": 1, "table": "holding", "address": 0, "values": [1, 2]}   -> {"ok": true}
  {"op": "get", "unit": 1, "table": "holding", "address": 0, "count": 2}       -> {"values": [1, 2]}
  {"op": "delay", "ms": 500}          every answer waits this long (a device slower than timeoutMs)
  {"op": "fault", "table": "holding", "address": 7, "code": 4}   that address answers exception 4 (0 clears)
  {"op": "writes"}                    -> {"writes": [[unit, table, address, values, time], ...]} the Modbus writes, in
                                         order, each with its wall-clock time in ms (the bench's write latency)
  {"op": "requests"}                  -> {"requests": n} the Modbus requests answered
Usage: modbus-device.py --port 55020 --control 55021 [--size 2000]
"""

import argparse
import asyncio
import json
import logging
import time

from pymodbus.constants import ExcCodes
from pymodbus.datastore import ModbusServerContext
from pymodbus.datastore.context import ModbusBaseDeviceContext
from pymodbus import pymodbus_apply_logging_config
from pymodbus.server import ModbusTcpServer

TABLE_OF_FC = {1: "coil", 5: "coil", 15: "coil", 2: "discrete", 3: "holding", 6: "holding", 16: "holding", 4: "input"}


class State:
    def __init__(self, size):
        self.size = size
        self.tables = {u: {t: [0] * size for t in ("coil", "discrete", "holding", "input")} for u in (1, 2)}
        self.delay = 0.0
        self.faults = {}
        self.writes = []
        self.requests = 0


class Device(ModbusBaseDeviceContext):
    def __init__(self, state, unit):
        self.state = state
        self.unit = unit

    def reset(self):
        pass

    async def answer(self, func_code, address, count):
        self.state.requests += 1
        if self.state.delay > 0:
            await asyncio.sleep(self.state.delay)
        table = TABLE_OF_FC.get(func_code)
        if table is None:
            return None, ExcCodes.ILLEGAL_FUNCTION
        for a in range(address, address + count):
            code = self.state.faults.get((table, a))
            if code:
                return None, ExcCodes(code)
        if address < 0 or address + count > self.state.size:
            return None, ExcCodes.ILLEGAL_ADDRESS
        return table, None

    async def async_getValues(self, func_code, address, count=1):
        table, exc = await self.answer(func_code, address, count)
        if exc is not None:
            return exc
        values = self.state.tables[self.unit][table][address : address + count]
        return [bool(v) for v in values] if table in ("coil", "discrete") else list(values)

    async def async_setValues(self, func_code, address, values):
        table, exc = await self.answer(func_code, address, len(values))
        if exc is not None:
            return exc
        values = [int(v) for v in values]
        self.state.tables[self.unit][table][address : address + len(values)] = values
        self.state.writes.append([self.unit, table, address, values, time.time() * 1000])
        return None


async def control(state, reader, writer):
    try:
        while line := await reader.readline():
            try:
                msg = json.loads(line)
                op = msg["op"]
                if op == "set":
                    t = state.tables[msg.get("unit", 1)][msg["table"]]
                    a = msg["address"]
                    t[a : a + len(msg["values"])] = [int(v) for v in msg["values"]]
                    out = {"ok": True}
                elif op == "get":
                    t = state.tables[msg.get("unit", 1)][msg["table"]]
                    out = {"values": t[msg["address"] : msg["address"] + msg.get("count", 1)]}
                elif op == "delay":
                    state.delay = msg["ms"] / 1000
                    out = {"ok": True}
                elif op == "fault":
                    key = (msg["table"], msg["address"])
                    if msg["code"]:
                        state.faults[key] = msg["code"]
                    else:
                        state.faults.pop(key, None)
                    out = {"ok": True}
                elif op == "writes":
                    out = {"writes": state.writes}
                elif op == "requests":
                    out = {"requests": state.requests}
                else:
                    out = {"error": "unknown op"}
            except Exception as e:  # a bad control line is answered, never the end of the device
                out = {"error": str(e)}
            writer.write((json.dumps(out) + "\n").encode())
            await writer.drain()
    finally:
        writer.close()


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--control", type=int, required=True)
    p.add_argument("--size", type=int, default=2000)
    args = p.parse_args()
    # Exceptions the tests ask for (a missing unit, an address past the end) are no news: errors only.
    pymodbus_apply_logging_config(logging.CRITICAL)
    state = State(args.size)
    context = ModbusServerContext(devices={1: Device(state, 1), 2: Device(state, 2)}, single=False)
    ctl = await asyncio.start_server(lambda r, w: control(state, r, w), "127.0.0.1", args.control)
    server = ModbusTcpServer(context, address=("127.0.0.1", args.port))
    async with ctl:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
