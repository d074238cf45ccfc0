// Notification transports by URI scheme. HTTP is built in; the MQTT bridge (seed 001 §2.1) adds `mqtt` and
// `mqtts` when it is loaded (--bridges mqtt), and until then such endpoints are refused at create and update (§7).

const HTTP_ONLY: ReadonlySet<string> = new Set(['http', 'https']);
const WITH_MQTT: ReadonlySet<string> = new Set(['http', 'https', 'mqtt', 'mqtts']);

/** The schemes a notification endpoint may use with these bridges loaded (BrokerConfig.bridges). */
export function notificationSchemes(bridges: readonly string[]): ReadonlySet<string> {
  return bridges.includes('mqtt') ? WITH_MQTT : HTTP_ONLY;
}
