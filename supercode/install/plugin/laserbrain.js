// laserbrain opencode plugin: written by `laserbrain install opencode`;
// reinstall rather than edit (the install replaces this file whole).
//
// opencode runs no command hooks, so this plugin hands each event to
// laserbrain as one JSON object on its standard input and reads the answer
// from its standard output: {"decision":"deny","reason":…} before a tool
// call is thrown, which opencode turns into the tool error the model reads.
// Anything but a clear answer — the binary gone or not executable, a crash,
// a deadline passed, output that is not laserbrain's JSON — is a denial
// too: the gate never fails open. Observed events (after a call, a new or
// idle session, a permission put to the person) never stop the session; a
// failure there is only logged.
import { spawn } from "node:child_process";

// Filled in at install: the programs that answer each event, and the
// deadline each gets.
const ARGV = /*ARGV*/ {};
const DEADLINE_MS = /*DEADLINE_MS*/ 30000;
const MISSING = /*MISSING*/ "";

function run(argv, payload) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
    } catch (error) {
      resolve({ error });
      return;
    }
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve({ error: new Error(`${argv[0]} gave no answer within ${DEADLINE_MS} ms`) });
    }, DEADLINE_MS);
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ error });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

function refusal(r) {
  if (r.error && (r.error.code === "ENOENT" || r.error.code === "EACCES")) return MISSING;
  if (r.error) return `laserbrain: refused: the gate could not be asked (${r.error.message}); run laserbrain doctor`;
  return `laserbrain: refused: the gate exited ${r.code ?? r.signal} without an answer (${(r.stderr || "").trim()}); run laserbrain doctor`;
}

async function gate(payload) {
  const r = await run(ARGV.pre, payload);
  if (r.error || r.code !== 0) throw new Error(refusal(r));
  let answer;
  try {
    answer = JSON.parse(r.stdout);
  } catch {
    throw new Error(`laserbrain: refused: the gate's answer is not JSON (${r.stdout.trim()}); run laserbrain doctor`);
  }
  if (answer === null || typeof answer !== "object") {
    throw new Error("laserbrain: refused: the gate gave no answer; run laserbrain doctor");
  }
  if (answer.decision === "deny" || answer.decision === "ask") {
    throw new Error(answer.reason || "laserbrain: refused");
  }
}

async function observe(argv, payload) {
  if (!argv) return;
  const r = await run(argv, payload);
  if (r.error || r.code !== 0) console.error(`laserbrain: ${payload.hook_event_name} not recorded: ${refusal(r)}`);
}

function sessionOf(event) {
  const p = event.properties || {};
  return p.sessionID || (p.info && p.info.id) || "";
}

export const LaserbrainPlugin = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    await gate({
      hook_event_name: "tool.execute.before",
      sessionID: input.sessionID,
      callID: input.callID,
      tool: input.tool,
      args: output.args,
      directory,
    });
  },
  "tool.execute.after": async (input, output) => {
    await observe(ARGV.post, {
      hook_event_name: "tool.execute.after",
      sessionID: input.sessionID,
      callID: input.callID,
      tool: input.tool,
      args: input.args,
      directory,
      output: { title: output.title, output: output.output, metadata: output.metadata },
    });
  },
  event: async ({ event }) => {
    if (event.type === "session.created") {
      await observe(ARGV.start, { hook_event_name: "session.created", sessionID: sessionOf(event), directory });
    } else if (event.type === "session.idle") {
      await observe(ARGV.stop, { hook_event_name: "session.idle", sessionID: sessionOf(event), directory });
    } else if (event.type === "permission.asked") {
      // opencode puts a permission to its user: the agent waits for them.
      const p = event.properties || {};
      const patterns = Array.isArray(p.patterns) && p.patterns.length ? ` (${p.patterns.join(", ")})` : "";
      await observe(ARGV.notify, {
        hook_event_name: "permission.asked",
        sessionID: sessionOf(event),
        directory,
        message: `opencode asks permission: ${p.permission || "?"}${patterns}`,
      });
    }
  },
});
