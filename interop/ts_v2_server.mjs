// A small dual-era server on the official TypeScript SDK v2 (@modelcontextprotocol/server 2.4.0),
// to run our client against in revision 2026-07-28. The same tools as py_modern_server.py:
//   add(a, b)        the sum as text
//   greet()          asks for a name (an input-required round, key "who"), answers "Hello, NAME!"
//   count_roots()    asks for the client's roots (key "roots"), answers "N roots"
//   regional(region) region carries x-mcp-header: Region; answers "region=REGION"
//
//   node interop/ts_v2_server.mjs --stdio        newline-delimited JSON-RPC on stdio
//   node interop/ts_v2_server.mjs --http PORT    http://127.0.0.1:PORT/mcp (0 picks a port); prints
//                                                `listening on URL` on stderr once it accepts
import http from "node:http";
import {
  McpServer,
  createMcpHandler,
  fromJsonSchema,
  inputRequired,
  inputResponse,
  acceptedContent,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";

const object = (properties, required = []) => fromJsonSchema({ type: "object", properties, required });
const text = (t) => ({ content: [{ type: "text", text: t }] });

function build() {
  const server = new McpServer({ name: "ts-v2-server", version: "2.4.0" });
  server.registerTool(
    "add",
    { description: "Adds two integers", inputSchema: object({ a: { type: "integer" }, b: { type: "integer" } }, ["a", "b"]) },
    async ({ a, b }) => text(String(a + b)),
  );
  server.registerTool("greet", { description: "Greets whoever the client names", inputSchema: object({}) }, async (_args, ctx) => {
    const answer = acceptedContent(ctx.mcpReq.inputResponses, "who");
    if (!answer) {
      return inputRequired({
        inputRequests: {
          who: inputRequired.elicit({
            message: "What is your name?",
            requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
          }),
        },
      });
    }
    return text(`Hello, ${answer.name}!`);
  });
  server.registerTool("count_roots", { description: "Counts the client's roots", inputSchema: object({}) }, async (_args, ctx) => {
    const r = inputResponse(ctx.mcpReq.inputResponses, "roots");
    if (r.kind !== "roots") {
      return inputRequired({ inputRequests: { roots: inputRequired.listRoots() } });
    }
    return text(`${r.roots.length} roots`);
  });
  server.registerTool(
    "regional",
    {
      description: "Answers with its region (mirrored into Mcp-Param-Region on HTTP)",
      inputSchema: object({ region: { type: "string", "x-mcp-header": "Region" }, query: { type: "string" } }, ["region"]),
    },
    async ({ region }) => text(`region=${region}`),
  );
  return server;
}

const args = process.argv.slice(2);
if (args[0] === "--http") {
  const handler = createMcpHandler(() => build());
  const web = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
      else if (v !== undefined) headers.set(k, v);
    }
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers,
      body: req.method === "GET" || req.method === "HEAD" ? undefined : body,
      signal: abort.signal,
    });
    try {
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
      if (response.body) {
        for await (const chunk of response.body) res.write(chunk);
      }
      res.end();
    } catch (e) {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  web.listen(Number(args[1] ?? 0), "127.0.0.1", () => {
    console.error(`listening on http://127.0.0.1:${web.address().port}/mcp`);
  });
} else {
  serveStdio(() => build());
}
