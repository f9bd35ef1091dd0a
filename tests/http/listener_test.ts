/**
 * The accept loop's verdicts on listener errors, with real listeners: a listener that breaks
 * under it is fatal (reported, so the process can exit non-zero); EMFILE-like errors are not.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { ConnectionFront, isTransientAcceptError } from "../../src/http/listener.ts";
import { within } from "../helpers/process.ts";

Deno.test("a listener closed behind the accept loop's back is a fatal error", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const front = new ConnectionFront(listener, {
    maxConnections: 4,
    onConnection: (socket) => socket.destroy(),
  });
  listener.close();
  const error = await within(front.failed, 5000, "the failure was not reported");
  ok(error instanceof Error);
  await front.close();
});

Deno.test("closing the front is not a failure", async () => {
  const front = new ConnectionFront(Deno.listen({ hostname: "127.0.0.1", port: 0 }), {
    maxConnections: 4,
    onConnection: (socket) => socket.destroy(),
  });
  await front.close();
  const settled = await Promise.race([
    front.failed.then(() => "failed"),
    new Promise((resolve) => setTimeout(() => resolve("quiet"), 200)),
  ]);
  assertEquals(settled, "quiet");
});

Deno.test("accept errors: running out of descriptors is transient, a broken listener is not", () => {
  const withCode = (code: string) => Object.assign(new Error(code), { code });
  for (const code of ["EMFILE", "ENFILE", "ENOBUFS", "ECONNABORTED", "EINTR"]) {
    ok(isTransientAcceptError(withCode(code)), code);
  }
  ok(isTransientAcceptError(new Deno.errors.ConnectionAborted("x")));
  ok(!isTransientAcceptError(new Deno.errors.BadResource("x")));
  ok(!isTransientAcceptError(withCode("EBADF")));
  ok(!isTransientAcceptError(withCode("EINVAL")));
});
