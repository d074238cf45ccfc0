// The Modbus TCP Bridge (seed 001 §2.2, §2.4, §3, §6.3, §6.4, §7, §8): one connection to one device or gateway, one
// request at a time, on the bridge-host thread. Each active Channel is polled at its own period; a read is a sample
// only when the value moved by more than the deadband from the last reported one (publishTime: when the read
// completed); a failing read keeps the attribute's value and writes `modbusStatus` once per change. Writes are
// encoded at once (BRIDGE_BAD_INPUT for a value that does not fit), queued (bounded) and sent before the next poll;
// their outcome is logged only.
import type { Bridge, BridgeHost, ChannelDescription, ChannelInfoEntry, ChannelVerdict, PublishRefusal } from '../../../bridge/contract.js';
import { ChannelInfoError, REGISTERS, parseChannelInfo, type ChannelSettings } from './channel-info.js';
import { ModbusEncodeError, decodeRegisters, encodeCoil, encodeRegisters } from './codec.js';
import { DeviceLink } from './device-link.js';
import { ModbusEndpointError, parseModbusEndpoint, type ModbusEndpoint } from './endpoint.js';
import { PollSchedule, type Polled } from './poll-schedule.js';
import type { ModbusServerConfig } from './server-config.js';
import { statusOfError, type ModbusStatus } from './status.js';

/** Writes waiting at most (seed 001 §8: queued, never blocking; the bound is ours). */
export const WRITE_QUEUE_MAX = 1000;
/** Dropped writes logged: the first, then one in this many. */
const DROPPED_LOGGED_EVERY = 1000;

interface ModbusChannel extends Polled {
  endpoint: string;
  at: ModbusEndpoint;
  settings: ChannelSettings | undefined;
  /** The last value reported as a sample (or written to the device), its read time, and the last status written. */
  reported: number | boolean | undefined;
  reportedAt: number;
  status: ModbusStatus | undefined;
  /** Samples sent so far: a write whose value a sample may have overtaken in the broker is not taken as reported. */
  samples: number;
}

interface QueuedWrite {
  channel: ModbusChannel;
  /** Registers, or a coil's state. */
  data: number[] | boolean;
  /** The value as the device will read it back (after the type's rounding). */
  echo: number | boolean;
  /** The Channel's samples when the write was queued. */
  samplesBefore: number;
}

export class ModbusBridge implements Bridge {
  private readonly channels = new Map<string, ModbusChannel>();
  private readonly schedule = new PollSchedule<ModbusChannel>();
  private readonly writes: QueuedWrite[] = [];
  private readonly link: DeviceLink;
  private wake: NodeJS.Timeout | undefined;
  private busy = false;
  private lastWasWrite = false;
  private stopped = false;
  private dropped = 0;

  constructor(
    private readonly server: ModbusServerConfig,
    private readonly host: BridgeHost,
  ) {
    this.link = new DeviceLink(server, host.log, (up) => (up ? this.next() : this.down()));
  }

  channelAdd(endpoint: string, _channel: ChannelDescription): ChannelVerdict {
    let at: ModbusEndpoint;
    try {
      at = parseModbusEndpoint(endpoint, this.server.unit);
    } catch (e) {
      // seed 001 §3: a Modbus Channel that does not fit is dormant, with the reason.
      if (e instanceof ModbusEndpointError) return { state: 'dormant', reason: e.message };
      throw e;
    }
    this.channels.set(endpoint, {
      endpoint,
      at,
      settings: undefined,
      reported: undefined,
      reportedAt: 0,
      status: undefined,
      samples: 0,
      due: 0,
      pollMs: 0,
    });
    return { state: 'active' };
  }

  channelAddInfo(endpoint: string, info: readonly ChannelInfoEntry[]): ChannelVerdict {
    const channel = this.channels.get(endpoint);
    if (channel === undefined) return { state: 'refused', reason: 'not added' };
    try {
      const settings = parseChannelInfo(channel.at.table, info, this.server.pollMs);
      if (channel.at.address + REGISTERS[settings.type] - 1 > 65535)
        throw new ChannelInfoError(`a ${settings.type} at address ${channel.at.address} runs past the table's end (65535)`);
      channel.settings = settings;
      channel.pollMs = settings.pollMs;
      return { state: 'active' };
    } catch (e) {
      this.channels.delete(endpoint);
      if (e instanceof ChannelInfoError) return { state: 'dormant', reason: e.message };
      throw e;
    }
  }

  async start(): Promise<void> {
    const now = Date.now();
    for (const channel of this.channels.values()) {
      // A bridge of an ABI before 9 gets no channelInfo: the defaults.
      channel.settings ??= parseChannelInfo(channel.at.table, [], this.server.pollMs);
      channel.pollMs = channel.settings.pollMs;
      channel.due = now;
      this.schedule.add(channel);
    }
    this.link.open();
    this.next();
  }

  publish(endpoint: string, value: unknown): PublishRefusal | undefined {
    const channel = this.channels.get(endpoint);
    if (channel?.settings === undefined) return undefined;
    const { table } = channel.at;
    let write: QueuedWrite;
    try {
      if (table === 'discrete' || table === 'input')
        throw new ModbusEncodeError(`${table === 'discrete' ? 'discrete inputs' : 'input registers'} are read only`);
      if (table === 'coil') {
        const state = encodeCoil(value);
        write = { channel, data: state, echo: state, samplesBefore: channel.samples };
      } else {
        const regs = encodeRegisters(value, channel.settings);
        write = { channel, data: regs, echo: decodeRegisters(regs, channel.settings), samplesBefore: channel.samples };
      }
    } catch (e) {
      // seed 001 §7: BRIDGE_BAD_INPUT at publish time (the host logs it).
      if (e instanceof ModbusEncodeError) return { code: 'BRIDGE_BAD_INPUT', detail: `${endpoint}: ${e.message}` };
      throw e;
    }
    if (this.writes.length >= WRITE_QUEUE_MAX) {
      // seed 001 §8: the broker thread never blocks; a full queue drops the write, said in the log.
      if (this.dropped++ % DROPPED_LOGGED_EVERY === 0)
        this.host.log.warn(
          { endpoint, queued: WRITE_QUEUE_MAX, dropped: this.dropped },
          'Modbus write queue full (the device is slower than the writes): write dropped',
        );
      return undefined;
    }
    this.writes.push(write);
    if (!this.busy) this.next();
    return undefined;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.wake);
    await this.link.close();
  }

  /**
   * Sends the next request when none is under way and the device is connected: a queued write first, else the
   * Channel whose poll is most overdue; after a write, a poll that is due goes before the next write, so writes
   * faster than the device delay the polls by one request each and never stop them. Not connected: nothing is sent
   * (writes wait in the queue) until it is.
   */
  private next(): void {
    if (this.stopped || this.busy || !this.link.isConnected) return;
    clearTimeout(this.wake);
    this.wake = undefined;
    const now = Date.now();
    const channel = this.schedule.peek();
    const pollDue = channel !== undefined && channel.due <= now;
    if (this.writes.length > 0 && !(this.lastWasWrite && pollDue)) {
      const write = this.writes.shift()!;
      this.busy = true;
      this.lastWasWrite = true;
      void this.write(write).finally(() => this.done());
      return;
    }
    if (channel === undefined) return;
    if (!pollDue) {
      this.wake = setTimeout(() => this.next(), channel.due - now);
      return;
    }
    this.schedule.take(now);
    this.busy = true;
    this.lastWasWrite = false;
    void this.poll(channel).finally(() => this.done());
  }

  private done(): void {
    this.busy = false;
    // The next request on a later turn: a device that answers at once never starves the host's event loop.
    setImmediate(() => this.next());
  }

  private async poll(channel: ModbusChannel): Promise<void> {
    const s = channel.settings!;
    const { unit, table, address } = channel.at;
    let value: number | boolean;
    try {
      if (table === 'coil' || table === 'discrete') {
        const bits = await this.link.request<{ data: boolean[] }>((c, done) =>
          table === 'coil' ? c.writeFC1(unit, address, 1, done) : c.writeFC2(unit, address, 1, done),
        );
        value = bits.data[0] === true;
      } else {
        const count = REGISTERS[s.type];
        const regs = await this.link.request<{ data: number[] }>((c, done) =>
          table === 'holding' ? c.writeFC3(unit, address, count, done) : c.writeFC4(unit, address, count, done),
        );
        if (regs.data.length < count) throw new Error('short answer');
        value = decodeRegisters(regs.data, s);
      }
    } catch (e) {
      this.failed(channel, statusOfError(e));
      return;
    }
    const readAt = Date.now();
    if (typeof value === 'number' && !Number.isFinite(value)) {
      this.failed(channel, 'invalidValue');
      return;
    }
    const changed = channel.reported === undefined || moved(channel.reported, value, s.deadband);
    if (changed) {
      channel.reported = value;
      channel.reportedAt = readAt;
    } else if (channel.status === 'ok') return;
    // A change beyond the deadband, or a status back to ok: the last reported value, with its read time.
    if (channel.status !== undefined && channel.status !== 'ok')
      this.host.log.info({ endpoint: channel.endpoint, modbusStatus: 'ok', was: channel.status }, 'Modbus Channel status changed');
    channel.status = 'ok';
    channel.samples++;
    this.host.sample(channel.endpoint, channel.reported, { publishTime: channel.reportedAt, subProperties: { modbusStatus: 'ok' } });
  }

  /**
   * The connection is down (the device stopped, or unreachable): no poll can be answered, every Channel's status is
   * `timeout` (said once in the log by the link, not per Channel).
   */
  private down(): void {
    clearTimeout(this.wake);
    this.wake = undefined;
    for (const channel of this.channels.values()) if (channel.settings !== undefined) this.failed(channel, 'timeout', false);
  }

  /** seed 001 §3: the attribute keeps its last value; modbusStatus is written once, when the status changes. */
  private failed(channel: ModbusChannel, status: ModbusStatus, said = true): void {
    if (channel.status === status) return;
    channel.status = status;
    if (said) this.host.log.warn({ endpoint: channel.endpoint, modbusStatus: status }, 'Modbus Channel status changed');
    // Before any value was read the attribute does not exist: the status goes with the first value.
    if (channel.reported === undefined) return;
    channel.samples++;
    this.host.sample(channel.endpoint, channel.reported, { publishTime: channel.reportedAt, subProperties: { modbusStatus: status } });
  }

  private async write(w: QueuedWrite): Promise<void> {
    const { unit, address } = w.channel.at;
    const data = w.data;
    try {
      if (typeof data === 'boolean') await this.link.request((c, done) => c.writeFC5(unit, address, data, done));
      else if (data.length === 1) await this.link.request((c, done) => c.writeFC6(unit, address, data[0]!, done));
      else await this.link.request((c, done) => c.writeFC16(unit, address, data, done));
    } catch (e) {
      // seed 001 §6.3, §7: a write's outcome is logged only.
      this.host.log.warn({ endpoint: w.channel.endpoint, modbusStatus: statusOfError(e) }, 'Modbus write failed');
      return;
    }
    // The value the device now holds is the attribute's, unless a sample (a read made while the write waited) went to
    // the broker after it: then the next poll reports the written value again, so broker and device agree.
    if (w.channel.samples === w.samplesBefore) {
      w.channel.reported = w.echo;
      w.channel.reportedAt = Date.now();
    } else w.channel.reported = undefined;
    this.host.log.debug({ endpoint: w.channel.endpoint }, 'Modbus write done');
  }
}

/** seed 001 §6.3: reported when it differs by more than the deadband (any change with a deadband of 0). */
function moved(before: number | boolean, after: number | boolean, deadband: number): boolean {
  if (typeof before !== 'number' || typeof after !== 'number') return before !== after;
  return deadband === 0 ? before !== after : Math.abs(after - before) > deadband;
}
