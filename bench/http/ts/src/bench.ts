// The workloads of the HTTP benchmark for the TypeScript SDK clients. The SDK
// is passed in (client.ts: @modelcontextprotocol/sdk 1.x; client_v2.ts:
// @modelcontextprotocol/client 2.x), so both run the same code around it.
//
// Usage: node dist/<client>.js <cold|seq|conc|big|list> <N> <URL> [legacy|2026]
// Prints one JSON line.
import { readFileSync } from 'node:fs';

/* eslint-disable @typescript-eslint/no-explicit-any */
export interface Connected {
  client: any;
  close(): Promise<void>;
}

export interface Sdk {
  label: string;
  connect(url: string, modern: boolean): Promise<Connected>;
}

const ECHO_TEXT = 'hello from the MCP peer benchmark';

const peakRssKb = (): number => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);
const nowUs = (): number => Number(process.hrtime.bigint()) / 1e3;
const cpuSince = (c0: NodeJS.CpuUsage): number => {
  const d = process.cpuUsage(c0);
  return (d.user + d.system) / 1e6;
};

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(Math.max(rank, 1), sorted.length) - 1];
}

function checkText(r: any, wantLen: number): void {
  if (r.isError || r.content?.length !== 1 || r.content[0].type !== 'text') throw new Error('unexpected tool result');
  if (r.content[0].text.length !== wantLen) throw new Error(`text length ${r.content[0].text.length} != ${wantLen}`);
}

export async function runBench(sdk: Sdk): Promise<void> {
  const [workload = 'seq', nArg = '1', url, era = 'legacy'] = process.argv.slice(2);
  if (!url) throw new Error('usage: <workload> <N> <URL> [legacy|2026]');
  const n = Number(nArg);
  const modern = era === '2026' || era === '2026-07-28';
  const conc = Number(process.env.MCP_BENCH_CONC ?? '64');
  const kb = Number(process.env.MCP_BENCH_KB ?? '1024');

  const t0 = nowUs();
  const { client, close } = await sdk.connect(url, modern);
  const out: Record<string, unknown> = {
    client: sdk.label, workload, n, protocol: modern ? '2026-07-28' : '2025-11-25', init_ms: (nowUs() - t0) / 1e3,
  };
  const echo = async () => checkText(await client.callTool({ name: 'echo', arguments: { text: ECHO_TEXT } }), ECHO_TEXT.length);
  const blob = async () => checkText(await client.callTool({ name: 'blob', arguments: { kb } }), kb * 1024);
  const list = async () => {
    const r = await client.listTools();
    if (r.tools.length !== 50) throw new Error(`expected 50 tools, got ${r.tools.length}`);
  };

  if (workload === 'cold') {
    await list();
  } else if (workload === 'seq' || workload === 'big' || workload === 'list') {
    const [one, warm] = workload === 'seq' ? [echo, 200] : workload === 'big' ? [blob, 2] : [list, 20];
    for (let i = 0; i < warm; i++) await one();
    const lat: number[] = new Array(n);
    const t = nowUs();
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      const s = nowUs();
      await one();
      lat[i] = nowUs() - s;
    }
    const el = (nowUs() - t) / 1e6;
    out.cpu_s = cpuSince(cpu0);
    lat.sort((a, b) => a - b);
    Object.assign(out, { elapsed_s: el, ops_per_s: n / el, p50_us: percentile(lat, 50), p99_us: percentile(lat, 99) });
    if (workload === 'big') out.mb_per_s = (n * kb * 1024) / 1e6 / el;
  } else if (workload === 'conc') {
    for (let i = 0; i < 200; i++) await echo();
    let next = 0;
    const t = nowUs();
    const cpu0 = process.cpuUsage();
    const worker = async () => {
      while (next < n) {
        next++;
        await echo();
      }
    };
    await Promise.all(Array.from({ length: Math.min(conc, n) }, worker));
    const el = (nowUs() - t) / 1e6;
    out.cpu_s = cpuSince(cpu0);
    Object.assign(out, { elapsed_s: el, ops_per_s: n / el, concurrency: conc });
  } else {
    throw new Error(`unknown workload ${workload}`);
  }
  await close();
  out.total_ms = (nowUs() - t0) / 1e3;
  out.peak_rss_kb = peakRssKb();
  process.stdout.write(JSON.stringify(out) + '\n');
}
