// An ACP client made with the official SDK's ClientSideConnection, for tests/test_acp.py.
// node client.mjs '<agent command as a JSON array>' '<steps as a JSON array>'
// Each step is one request (initialize, new, load, mode, prompt); what the agent sent and
// answered is printed as JSON lines: {kind: "update" | "permission" | <step op>, ...}.
// A prompt step may carry `answers` (the optionIds to pick, in order, or "cancelled") and
// `cancelOn` (send session/cancel when the first update of that kind arrives).
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [command, steps] = process.argv.slice(2).map((a) => JSON.parse(a));
const agent = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
// Listened for from the start: an agent that ends before the steps are done is still seen.
const exited = new Promise((resolve) => agent.on("exit", (code, signal) => resolve({ code, signal })));
const log = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

let sessionId = null;
let answers = [];
let cancelOn = null;
let cancelledAt = null;
let conn = null;

const client = {
  async requestPermission(params) {
    const answer = answers.shift() ?? "cancelled";
    log({ kind: "permission", params, answer });
    if (answer === "cancelled") return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: answer } };
  },
  async sessionUpdate(params) {
    log({ kind: "update", sessionId: params.sessionId, update: params.update });
    if (cancelOn !== null && params.update.sessionUpdate === cancelOn) {
      cancelOn = null;
      cancelledAt = Date.now();
      await conn.cancel({ sessionId: params.sessionId });
    }
  },
  async readTextFile() {
    throw acp.RequestError.methodNotFound("fs/read_text_file");
  },
  async writeTextFile() {
    throw acp.RequestError.methodNotFound("fs/write_text_file");
  },
};

const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
conn = new acp.ClientSideConnection(() => client, stream);

async function run(step) {
  switch (step.op) {
    case "initialize":
      return conn.initialize({
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      });
    case "new": {
      const result = await conn.newSession({ cwd: step.cwd, mcpServers: step.mcpServers ?? [] });
      sessionId = result.sessionId;
      return result;
    }
    case "load": {
      const result = await conn.loadSession({ sessionId: step.sessionId, cwd: step.cwd, mcpServers: [] });
      sessionId = step.sessionId;
      return result;
    }
    case "mode":
      return conn.setSessionMode({ sessionId, modeId: step.mode });
    case "prompt": {
      answers = [...(step.answers ?? [])];
      cancelOn = step.cancelOn ?? null;
      cancelledAt = null;
      const prompt = step.prompt ?? [{ type: "text", text: step.text }];
      const result = await conn.prompt({ sessionId, prompt });
      return { ...result, msAfterCancel: cancelledAt === null ? null : Date.now() - cancelledAt };
    }
    default:
      throw new Error(`unknown step ${step.op}`);
  }
}

for (const step of steps) {
  try {
    log({ kind: step.op, result: (await run(step)) ?? null });
  } catch (e) {
    log({ kind: step.op, error: { code: e.code ?? null, message: e.message ?? String(e), data: e.data ?? null } });
  }
}
agent.stdin.end();
const { code, signal } = await exited;
// Exit once the last line is written (a pending write is lost by an exit).
process.stdout.write(JSON.stringify({ kind: "exit", code, ...(signal ? { signal } : {}) }) + "\n", () => process.exit(0));
