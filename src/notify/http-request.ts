// One notification POST through undici's dispatch API (CIM 009 v1.8 §5.3.2), for delivery.ts: a handler object per
// request instead of undici's `request()`, which made an AbortSignal, its listeners and a body stream per notification.
import type { Dispatcher } from 'undici';

/** Why a request in flight was ended early; the outcome's reason is this text. */
export type AbortReason = string;

/**
 * A notification request in flight: `done` resolves once with undefined (2xx answered), `HTTP <status>`, or why it
 * failed. `abort` ends it early (its timeout, its subscription deleted); before undici starts it, as soon as it does.
 */
export class NotificationRequest implements Dispatcher.DispatchHandler {
  readonly done: Promise<string | undefined>;
  private resolve!: (reason: string | undefined) => void;
  private controller: Dispatcher.DispatchController | undefined = undefined;
  private aborted: AbortReason | undefined = undefined;
  private status = 0;
  private settled = false;

  constructor() {
    this.done = new Promise((r) => (this.resolve = r));
  }

  abort(reason: AbortReason): void {
    if (this.settled || this.aborted !== undefined) return;
    this.aborted = reason;
    this.controller?.abort(new Error(reason));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.aborted !== undefined) controller.abort(new Error(this.aborted));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    this.status = statusCode;
  }

  /** The body is read and dropped: a receiver's answer says nothing the broker keeps. */
  onResponseData(): void {}

  onResponseEnd(): void {
    this.finish(this.status >= 200 && this.status < 300 ? undefined : `HTTP ${this.status}`);
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, e: Error): void {
    this.finish(this.aborted ?? `${(e as { code?: string }).code ?? e.name}: ${e.message}`);
  }

  private finish(reason: string | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve(reason);
  }
}
