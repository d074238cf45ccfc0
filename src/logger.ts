// Logs are pino JSON lines on standard output, one logger per thread, named by the thread. A broker run inside
// another program (createBroker with a log destination) has its threads send their lines to it on a channel.
import { BroadcastChannel } from 'node:worker_threads';
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';
export type LogDestination = DestinationStream;

export function createLogger(level: string, thread: string, destination?: LogDestination): Logger {
  const options = { level, base: { thread }, timestamp: pino.stdTimeFunctions.isoTime };
  return destination === undefined ? pino(options) : pino(options, destination);
}

/** A worker thread's logger: standard output, or the broker's log channel when it has one (BrokerConfig.logChannel). */
export function threadLogger(config: { logLevel: string; logChannel?: string }, thread: string): Logger {
  if (config.logChannel === undefined) return createLogger(config.logLevel, thread);
  const channel = new BroadcastChannel(config.logChannel);
  channel.unref();
  return createLogger(config.logLevel, thread, { write: (line: string) => channel.postMessage(line) });
}
