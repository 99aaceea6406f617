// A host on the official TypeScript SDK (npm `@modelcontextprotocol/sdk`)
// in front of `mcp serve --stdio`, for `cargo xtask interop`: it lists the
// merged tools of the servers behind the gateway, calls one tool of each,
// reads a resource, gets a prompt, answers a server's sampling request, and
// sees `list_changed` only after the operator adopted a changed tool list
// (it plays the operator too, with `mcp serve --control SOCKET`).
//
// Usage:
//   node gateway_host.mjs check MCP CONFIG SOCKET
//     one JSON line per check: {"check", "status": "pass"|"fail", "detail"}
//   node gateway_host.mjs check-url MCP URL SOCKET
//     the same checks against a running `mcp serve --http` at URL
//     (Streamable HTTP), whose control socket is SOCKET
//   node gateway_host.mjs bench N TOOL -- COMMAND [ARGS…]
//   node gateway_host.mjs bench N TOOL -- URL
//     N sequential calls of TOOL (arguments {"text": "…"}) on the server
//     COMMAND starts (or the Streamable HTTP server at URL), after a
//     warm-up; one JSON line with calls/s and the median latency.

import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
    CreateMessageRequestSchema,
    ToolListChangedNotificationSchema
} from '@modelcontextprotocol/sdk/types.js';

const emit = (check, ok, detail) =>
    console.log(JSON.stringify({ check, status: ok ? 'pass' : 'fail', detail: String(detail) }));

const text = result =>
    (result.content ?? [])
        .filter(c => c.type === 'text')
        .map(c => c.text)
        .join('\n');

async function connect(command, args, capabilities) {
    const client = new Client({ name: 'ts-sdk-host', version: '1.0.0' }, { capabilities });
    const transport = /^https?:\/\//.test(command)
        ? new StreamableHTTPClientTransport(new URL(command))
        : new StdioClientTransport({ command, args, stderr: 'ignore' });
    await client.connect(transport);
    return client;
}

async function allTools(client) {
    const names = [];
    let cursor;
    do {
        const page = await client.listTools(cursor ? { cursor } : {});
        names.push(...page.tools.map(t => t.name));
        cursor = page.nextCursor;
    } while (cursor);
    return names;
}

// One named step; a throw is that step's failure, not the run's.
async function step(check, body) {
    try {
        const [ok, detail] = await body();
        emit(check, ok, detail);
    } catch (e) {
        emit(check, false, e?.message ?? e);
    }
}

async function check(mcp, config, socket, url) {
    let changed = 0;
    let onChange = () => {};
    const [command, args] = url ? [url, []] : [mcp, ['--config', config, 'serve', '--stdio', '--control', socket]];
    const client = await connect(command, args, {
        sampling: {}
    });
    client.setRequestHandler(CreateMessageRequestSchema, async request => ({
        model: 'ts-sdk-host',
        role: 'assistant',
        content: { type: 'text', text: `four (asked by ${request.params._meta?.['mcp-gateway/server']})` }
    }));
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        changed += 1;
        onChange();
    });
    await step('initialize', async () => {
        const info = client.getServerVersion();
        return [info?.name === 'mcp-gateway', `${info?.name} ${client.getServerCapabilities()?.tools ? 'tools' : ''}`];
    });
    await step('tools/list (merged)', async () => {
        const names = await allTools(client);
        const want = ['legacy_echo', 'modern_add', 'remote_text'];
        return [want.every(n => names.includes(n)), names.join(',')];
    });
    await step('call (legacy stdio)', async () => {
        const r = await client.callTool({ name: 'legacy_echo', arguments: { text: 'hi' } });
        return [text(r) === 'hi' && !r.isError, text(r)];
    });
    await step('call (2026 stdio)', async () => {
        const r = await client.callTool({ name: 'modern_add', arguments: { a: 2, b: 3 } });
        return [text(r) === '5' && !r.isError, text(r)];
    });
    await step('call (http)', async () => {
        const r = await client.callTool({ name: 'remote_text', arguments: {} });
        return [text(r) === 'remote says hi' && !r.isError, text(r)];
    });
    await step('resources/read', async () => {
        const r = await client.readResource({ uri: 'mcp-gateway://legacy/file:///readme.txt' });
        return [r.contents[0]?.text === 'read me', r.contents[0]?.uri];
    });
    await step('prompts/get', async () => {
        const r = await client.getPrompt({ name: 'modern/greet', arguments: { who: 'ts' } });
        const said = r.messages[0]?.content?.text;
        return [said === 'hello ts', said];
    });
    await step('sampling (server asks host)', async () => {
        const r = await client.callTool({ name: 'ask', arguments: {} });
        return [text(r).includes('four (asked by legacy)') && !r.isError, text(r).slice(0, 80)];
    });
    await step('list_changed after approval', async () => {
        await client.callTool({ name: 'change', arguments: {} });
        const control = (...words) =>
            execFileSync(mcp, ['serve', '--control', socket, ...words], { encoding: 'utf8' });
        let pending = '';
        for (let i = 0; i < 200 && !pending.includes('+fresh'); i++) {
            pending = control('pending');
        }
        if (!pending.includes('+fresh')) return [false, `nothing pending: ${pending}`];
        if (changed !== 0) return [false, 'list_changed came before the approval'];
        const generation = pending.match(/generation (\d+)/)[1];
        const heard = new Promise(resolve => {
            onChange = resolve;
        });
        control('adopt', 'legacy', generation);
        let timer;
        await Promise.race([heard, new Promise(resolve => (timer = setTimeout(resolve, 20000)))]);
        clearTimeout(timer);
        const names = await allTools(client);
        return [changed > 0 && names.includes('fresh'), `heard ${changed}, fresh listed: ${names.includes('fresh')}`];
    });
    await client.close();
}

async function bench(n, tool, command, args) {
    const client = await connect(command, args, {});
    const call = () => client.callTool({ name: tool, arguments: { text: 'hello from the gateway bench' } });
    for (let i = 0; i < Math.min(200, n); i++) await call();
    const latencies = [];
    const start = performance.now();
    for (let i = 0; i < n; i++) {
        const t = performance.now();
        await call();
        latencies.push(performance.now() - t);
    }
    const seconds = (performance.now() - start) / 1000;
    latencies.sort((a, b) => a - b);
    console.log(
        JSON.stringify({ client: 'ts', calls: n, calls_per_s: n / seconds, p50_ms: latencies[Math.floor(n / 2)] })
    );
    await client.close();
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === 'check') {
    const [mcp, config, socket] = rest;
    await check(mcp, config, socket).catch(e => emit('connect', false, e?.message ?? e));
} else if (mode === 'check-url') {
    const [mcp, url, socket] = rest;
    await check(mcp, '', socket, url).catch(e => emit('connect', false, e?.message ?? e));
} else if (mode === 'bench') {
    const dash = rest.indexOf('--');
    await bench(Number(rest[0]), rest[1], rest[dash + 1], rest.slice(dash + 2));
} else {
    console.error(
        'usage: gateway_host.mjs check MCP CONFIG SOCKET | check-url MCP URL SOCKET | bench N TOOL -- COMMAND [ARGS…] | bench N TOOL -- URL'
    );
    process.exit(2);
}
