// Notification transports by URI scheme. HTTP is built in; the MQTT bridge (seed 001 §2.1) adds `mqtt` and
// `mqtts` in each thread where it is loaded, and until then such endpoints are refused at create and update (§7).

const schemes = new Set<string>(['http', 'https']);

export function notificationSchemes(): ReadonlySet<string> {
  return schemes;
}

/** Called by a transport plugin when it loads in this thread. */
export function addNotificationScheme(scheme: string): void {
  schemes.add(scheme.toLowerCase());
}
