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
  const { createBroker } = await import('./broker.js');
  const broker = await createBroker(args, { listen: true }).catch(fail);
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    await broker.close(signal);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

void main();
