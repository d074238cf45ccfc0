// The messages between the tsdb history's instances (one per thread that serves the temporal API or writes entities)
// and its writer thread, plain data only. The broker instance's channel (channelName) carries the greetings and the
// back-pressure state to every thread; each instance then talks to the writer on a channel of its own (a
// BroadcastChannel only the two of them open), so a thread's rows are read by the writer alone, in the order sent.
import type { FactBatch } from './rows.js';

export const channelName = (instance: string): string => `ldbroker:tsdb:${instance}`;

/** On the broker instance's channel. */
export type Greeting =
  /**
   * An instance opened its own channel: the writer opens it too and answers welcome. `hold`: it holds rows a few ms
   * before it posts them (link.ts FRONT_HOLD_MS), so a sync of another instance, and the writer's close, first ask it
   * for them (flush).
   */
  | { k: 'hello'; name: string; hold?: boolean }
  | { k: 'welcome'; name: string }
  /** The buffer is past --troeBuffer (full) or back under half of it: entity writes wait while it is full. */
  | { k: 'pressure'; full: boolean }
  /**
   * Rows waiting for QuestDB and the age of the oldest (/metrics' history lag), at most every LAG_EVERY_MS, and the
   * rows QuestDB refused since start (dropped: refusals.ts).
   */
  | { k: 'lag'; rows: number; seconds: number; refused: number };

/** On an instance's own channel, to the writer. */
export type ToWriter =
  /**
   * Rows to append, in the order of these messages and of the batches in each (one message per hold of a thread,
   * link.ts, one batch per tenant): their facts as bytes (facts.ts), which cross threads as one copy each and of
   * which the writer makes the lines.
   */
  | { k: 'rows'; b: FactBatch[] }
  /** Answer `synced` once every rows message received before this one is in QuestDB and visible to reads. */
  | { k: 'sync'; id: string }
  /** Every row held when the writer asked (flush `n`) was posted before this. */
  | { k: 'flushed'; n: number }
  /**
   * The instance closes: answer `bye` (every rows message it sent came before this one, so the writer holds them).
   * The primary's close waits for it before it stops the writer, whose close arrives on another port, in no order
   * with this channel's messages.
   */
  | { k: 'bye' };

/** On an instance's own channel, from the writer. */
export type FromWriter =
  | { k: 'synced'; id: string; error?: string }
  /** Post the rows held now, then answer flushed: another thread's read waits for them. */
  | { k: 'flush'; n: number }
  /** Every rows message of this instance before its bye is in the writer's queue. */
  | { k: 'bye' };

/** The writer thread to its parent (the history's primary instance), by its parentPort. */
export type WriterReport =
  { k: 'log'; level: 'info' | 'warn' | 'error'; obj: Record<string, unknown>; msg: string } | { k: 'closed'; lost: number };

export interface WriterData {
  settings: import('./settings.js').TsdbSettings;
  channel: string;
}
