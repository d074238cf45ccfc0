#!/usr/bin/env node
// The ldbroker command: argv → createBroker (src/broker.ts) → listening; clean shutdown on SIGTERM/SIGINT
// (stop accepting, finish in-flight requests, flush the store, exit 0). A start-up refusal exits 1.
import { readArgs, readConfig, StartError } from './command-line.js';

function fail(error: unknown): never {
  if (!(error instanceof StartError)) throw error;
  if (!error.logged) process.stderr.write(`ldbroker: ${error.message}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  const args = await readArgs(process.argv.slice(2)).catch(fail);
  if (args.values.u === true) {
    process.stdout.write(args.usage);
    process.exit(0);
  }
  // Refused before the broker's modules load: a bad command line answers at once.
  try {
    readConfig(args);
  } catch (e) {
    fail(e);
  }
  // The handlers come before the start: the broker logs 'listening' (a supervisor's cue, and the tests') before
  // createBroker returns, and a SIGTERM in between took Node's default action: killed, nothing flushed. One that
  // comes during the start stops the broker as soon as it is up.
  let stopping: string | undefined;
  let broker: Awaited<ReturnType<typeof import('./broker.js').createBroker>> | undefined;
  const stop = async (signal: string): Promise<void> => {
    if (stopping !== undefined) return;
    stopping = signal;
    if (broker === undefined) return;
    await broker.close(signal);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  const { createBroker } = await import('./broker.js');
  broker = await createBroker(args, { listen: true }).catch(fail);
  if (stopping !== undefined) {
    await broker.close(stopping);
    process.exit(0);
  }
}

void main();
