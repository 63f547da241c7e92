// An agent for the e2e tests, built on the official MCP TypeScript SDK
// (@modelcontextprotocol/sdk, installed by npm ci): it starts the command
// line it is given (termhost mcp …) on stdio, as Claude Code or VS Code
// would, and calls tools for the test. Protocol with the test, one JSON
// object per line: on stdin {"id", "name", "arguments"}; on stdout first
// {"ready": true}, then {"id", "result"} or {"id", "error"} per call, in the
// order they end (calls run at once). It closes the session when stdin ends.
import readline from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [command, ...args] = process.argv.slice(2);
const write = (v) => process.stdout.write(JSON.stringify(v) + '\n');

const client = new Client({ name: 'e2e agent (TypeScript SDK)', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' }));
write({ ready: true });

const calls = new Set();
for await (const line of readline.createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const { id, name, arguments: a } = JSON.parse(line);
  // A call may wait for a person's approval: no SDK timeout of its own (the test has one).
  const call = client
    .callTool({ name, arguments: a }, undefined, { timeout: 30 * 60 * 1000 })
    .then((result) => write({ id, result }), (e) => write({ id, error: String(e?.message ?? e) }));
  calls.add(call);
  call.finally(() => calls.delete(call));
}
await Promise.all(calls);
await client.close();
