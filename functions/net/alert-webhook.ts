/**
 * An alert to a Teams/Slack-style incoming webhook (issue 30 item 3): one POST of
 * `{"text": "<subject>\n\n<text>"}`, the one shape both kinds take, through the outbound HTTP
 * guard (no private addresses, the allowed ports only, no redirects followed). Anything but a 2xx
 * throws, so the alert's signals come back and it is tried again.
 */
import type { AlertWebhookPost } from '../core/alerts/send-alerts.js';
import type { SafeHttpClient } from './safe-http-client.js';

export function alertWebhookPost(http: SafeHttpClient): AlertWebhookPost {
  return async (url, message) => {
    const response = await http.request({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', 'user-agent': 'Koerier-Alerts' },
      body: JSON.stringify({ text: `${message.subject}\n\n${message.text}` }),
    });
    if (response.status < 200 || response.status >= 300)
      throw new Error(`the alert webhook answered ${response.status}`);
  };
}
