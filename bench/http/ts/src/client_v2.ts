// Peer client: the TypeScript SDK's 2.x client package,
// @modelcontextprotocol/client (Client + StreamableHTTPClientTransport),
// default options; for 2026-07-28 the era is pinned with
// `versionNegotiation: { mode: { pin: '2026-07-28' } }` (connect sends
// `server/discover`), otherwise the default legacy `initialize`.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { runBench } from './bench.js';

runBench({
  label: 'ts-v2',
  async connect(url: string, modern: boolean) {
    const transport = new StreamableHTTPClientTransport(new URL(url));
    const client = new Client(
      { name: 'client-ts-v2', version: '0.1.0' },
      modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
    );
    await client.connect(transport);
    return {
      client,
      async close() {
        if (transport.sessionId) await transport.terminateSession();
        await client.close();
      },
    };
  },
}).catch((e) => {
  console.error(e);
  process.exit(1);
});
