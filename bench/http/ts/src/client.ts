// Peer client: the official TypeScript SDK 1.x, @modelcontextprotocol/sdk
// (Client + StreamableHTTPClientTransport), used the way its docs show. The
// 1.x line speaks the `initialize` era only (its newest version is
// 2025-11-25): asked for 2026-07-28 it exits with an error.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { runBench } from './bench.js';

runBench({
  label: 'ts',
  async connect(url: string, modern: boolean) {
    if (modern) throw new Error('@modelcontextprotocol/sdk 1.x has no 2026-07-28');
    const transport = new StreamableHTTPClientTransport(new URL(url));
    const client = new Client({ name: 'client-ts', version: '0.1.0' });
    await client.connect(transport);
    return {
      client,
      async close() {
        // Ends the HTTP session (DELETE) when the server gave one.
        if (transport.sessionId) await transport.terminateSession();
        await client.close();
      },
    };
  },
}).catch((e) => {
  console.error(e);
  process.exit(1);
});
