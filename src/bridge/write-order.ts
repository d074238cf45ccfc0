// Device writes in the store's commit order (seed 001 §4.2, §8; issue 20). Each pipeline thread posts a bound
// attribute's write to the bridge host after its own commit, so of two writes committed A then B on two threads, B's
// message can arrive first. The host keeps, per Channel, the greatest store sequence it has seen (WriteEvent.seq:
// of two committed writes of one entity, the later has the greater, on embdb and docdb alike) and drops a write older
// than it: the later write is already on its way to the device, and for a register or a topic the last committed
// value is the one that must stay. Writes of one call share their sequence and arrive in one message, in order.

/** What the host keeps per Channel. */
export interface WriteOrder {
  /** The greatest sequence seen for this Channel (published, refused by the bridge, or a sample's own write). */
  lastSeq: number;
}

export const newWriteOrder = (): WriteOrder => ({ lastSeq: -Infinity });

/**
 * Notes a write of sequence `seq` for the Channel; false when it is older than one already seen (it must not reach
 * the device after it).
 */
export function admitWrite(order: WriteOrder, seq: number): boolean {
  if (seq < order.lastSeq) return false;
  order.lastSeq = seq;
  return true;
}
