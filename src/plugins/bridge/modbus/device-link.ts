// The one connection of a Modbus Bridge (seed 001 §2.2, §8): a modbus-serial client over TCP, opened in the
// background and opened again a second after it closes or fails, so a device that is down stops nothing. Requests are
// callbacks with a guard: each ends (answer, exception or timeout) in timeoutMs plus a margin whatever the library does.
import modbusSerial from 'modbus-serial';
import type { ModbusRTU } from 'modbus-serial/ModbusRTU.js';
import type { PluginLogger } from '../../../plugin/contract.js';
import type { ModbusServerConfig } from './server-config.js';

const RECONNECT_MS = 1000;
/** A connection not open in timeoutMs, or this long at least, is given up and tried again (no OS-long wait). */
const CONNECT_MIN_MS = 1000;
/** Past the library's own timeout: the guard that ends a request the library never called back. */
const GUARD_MARGIN_MS = 250;
const REPEAT_LOG_MS = 60_000;

/** A request made on the client: calls `done` once with an error or the answer. */
export type LinkRequest<T> = (client: ModbusRTU, done: (err: unknown, answer?: T) => void) => void;

/** The error of a request the link could not send: the device is not connected (a status of `timeout`). */
const NOT_CONNECTED = Object.freeze({ errno: 'ECONNREFUSED', message: 'not connected to the device' });
const GUARD_TIMEOUT = Object.freeze({ errno: 'ETIMEDOUT', message: 'no answer' });
/** The package is CommonJS whose module.exports is the class: its typings say an ES default export. */
const ModbusClient = modbusSerial as unknown as new () => ModbusRTU;

export class DeviceLink {
  private client: ModbusRTU | undefined;
  private connected = false;
  private reconnect: NodeJS.Timeout | undefined;
  private stopped = false;
  private said = '';
  private saidAt = 0;

  constructor(
    private readonly server: ModbusServerConfig,
    private readonly log: PluginLogger,
    /** The connection opened (up) or closed or could not open (down). */
    private readonly changed: (up: boolean) => void,
  ) {}

  open(): void {
    if (this.stopped) return;
    const client = new ModbusClient();
    this.client = client;
    client.setTimeout(this.server.timeoutMs);
    client.on('error', (e: unknown) => this.lost(client, e));
    client.on('close', () => this.lost(client, new Error('connection closed')));
    const giveUp = setTimeout(
      () => {
        if (this.client === client && !this.connected) this.lost(client, new Error('connection not open in time'));
      },
      Math.max(this.server.timeoutMs, CONNECT_MIN_MS),
    );
    client.connectTCP(this.server.host, { port: this.server.port }, (err: unknown) => {
      clearTimeout(giveUp);
      if (this.client !== client) return;
      if (err) {
        this.lost(client, err);
        return;
      }
      this.connected = true;
      this.said = '';
      this.log.info({ host: this.server.host, port: this.server.port }, 'Modbus bridge connected');
      this.changed(true);
    });
  }

  get isConnected(): boolean {
    return this.connected;
  }

  /** Runs one request; the caller sends the next only when this one ended (one at a time per Bridge, seed 001 §8). */
  request<T>(run: LinkRequest<T>): Promise<T> {
    const client = this.client;
    if (!this.connected || client === undefined) return Promise.reject(NOT_CONNECTED);
    // A connection reset by the device (an error before the close) closes the port without a 'close' event from
    // modbus-serial: seen here, before the request, or the Bridge would stay 'connected' to nothing.
    if (!client.isOpen) {
      this.lost(client, new Error('connection reset'));
      return Promise.reject(NOT_CONNECTED);
    }
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const guard = setTimeout(() => settle(GUARD_TIMEOUT), this.server.timeoutMs + GUARD_MARGIN_MS);
      const settle = (err: unknown, answer?: T): void => {
        if (settled) return;
        settled = true;
        clearTimeout(guard);
        if (err) reject(err);
        else resolve(answer as T);
      };
      try {
        run(client, settle);
      } catch (e) {
        settle(e);
      }
    });
  }

  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnect);
    const client = this.client;
    this.client = undefined;
    this.connected = false;
    if (client !== undefined) await new Promise<void>((resolve) => client.destroy(() => resolve()));
  }

  /** The connection closed or could not open: said when the reason changes (else once a minute), opened again later. */
  private lost(client: ModbusRTU, err: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.connected = false;
    const message = String((err as { message?: unknown } | null)?.message ?? err).slice(0, 200);
    const now = Date.now();
    if (message !== this.said || now - this.saidAt >= REPEAT_LOG_MS) {
      this.said = message;
      this.saidAt = now;
      this.log.warn({ host: this.server.host, port: this.server.port, err: message }, 'Modbus bridge connection failed');
    }
    // The abandoned client's later events find `this.client` changed and do nothing.
    client.destroy(() => undefined);
    if (this.stopped) return;
    this.changed(false);
    if (this.reconnect !== undefined) return;
    this.reconnect = setTimeout(() => {
      this.reconnect = undefined;
      this.open();
    }, RECONNECT_MS);
  }
}
