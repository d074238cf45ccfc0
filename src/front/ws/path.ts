// Where the WebSocket transport upgrades (README "WebSocket"): on the NGSI-LD port, beside the API's routes.
export const WS_PATH = '/ngsi-ld/v1/ws';
