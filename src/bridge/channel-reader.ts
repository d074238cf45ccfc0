// GET /channels (seed 001 §4.1) in a pipeline thread: the Channels as the bridge-host thread has them now, asked on
// CHANNELS_CHANNEL. No answer in time (no bridge host: --bridges names none) is an empty list.
import { BroadcastChannel, threadId } from 'node:worker_threads';
import { CHANNELS_CHANNEL, bridgeChannelName, type ChannelListing, type ChannelsAnswered, type ChannelsAsked } from './wire.js';

const ASK_TIMEOUT_MS = 1000;

export class ChannelReader {
  private readonly channel: BroadcastChannel;
  private readonly waiting = new Map<number, (channels: ChannelListing[] | undefined) => void>();
  private seq = 0;

  constructor(instance: string | undefined) {
    this.channel = new BroadcastChannel(bridgeChannelName(CHANNELS_CHANNEL, instance));
    this.channel.unref();
    this.channel.onmessage = (m: unknown) => {
      const answer = (m as { data?: ChannelsAnswered }).data;
      if (answer?.kind !== 'answer' || answer.asker !== threadId) return;
      this.waiting.get(answer.seq)?.(answer.channels);
    };
  }

  /** The Channels; undefined when the bridge host did not answer in time. */
  read(): Promise<ChannelListing[] | undefined> {
    const seq = ++this.seq;
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(undefined), ASK_TIMEOUT_MS);
      const finish = (channels: ChannelListing[] | undefined): void => {
        clearTimeout(timer);
        this.waiting.delete(seq);
        resolve(channels);
      };
      this.waiting.set(seq, finish);
      this.channel.postMessage({ kind: 'ask', asker: threadId, seq } satisfies ChannelsAsked);
    });
  }

  close(): void {
    this.channel.close();
    for (const done of this.waiting.values()) done(undefined);
    this.waiting.clear();
  }
}
