// Logs are pino JSON lines on standard output, one logger per thread, named by the thread.
import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

export function createLogger(level: string, thread: string): Logger {
  return pino({ level, base: { thread }, timestamp: pino.stdTimeFunctions.isoTime });
}
