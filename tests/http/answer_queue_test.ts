/**
 * The answer queue's rules, with stand-ins for node:http's request, response and socket (the
 * real ones are driven end to end in tests/e2e/http_load_test.ts): one answer at a time per
 * connection, in order; a connection pipelining more than the queue holds is closed; answers
 * to requests without valid credentials take a few turns server-wide, and credentials that are
 * merely present earn nothing.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { AnswerQueue, MAX_ANONYMOUS, MAX_WAITING } from "../../src/http/answer_queue.ts";

const TOKEN = "0123456789abcdef0123456789abcdef";

class Connection extends EventEmitter {
  destroyed = false;
  destroy() {
    this.destroyed = true;
    this.emit("close");
  }
}

class Response extends EventEmitter {
  destroyed = false;
  /** Ends the answer, as node:http does once it was handed on. */
  finish() {
    this.emit("close");
  }
}

function request(connection: Connection, name: string, authorization?: string) {
  return {
    name,
    socket: connection,
    complete: true,
    headers: authorization === undefined ? {} : { authorization },
  } as unknown as IncomingMessage & { name: string };
}

/**
 * A queue whose handler records what it was asked to answer, and is making each answer until
 * its response is finished.
 */
function queue() {
  const started: { name: string; response: Response }[] = [];
  const answers = new AnswerQueue(
    (request, response) => {
      const made = response as unknown as Response;
      started.push({ name: (request as IncomingMessage & { name: string }).name, response: made });
      return new Promise((resolve) => made.once("close", resolve));
    },
    { trusted: (request) => request.headers.authorization === `Bearer ${TOKEN}` },
  );
  const admit = (request: IncomingMessage) => {
    const response = new Response();
    answers.admit(request, response as unknown as ServerResponse);
    return response;
  };
  return { started, admit };
}

const laterTurn = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("one answer at a time on a connection, in the order asked", () => {
  const { started, admit } = queue();
  const connection = new Connection();
  for (const name of ["a", "b", "c"]) admit(request(connection, name, `Bearer ${TOKEN}`));
  assertEquals(started.map((s) => s.name), ["a"]);
  started[0].response.finish();
  assertEquals(started.map((s) => s.name), ["a", "b"]);
  started[1].response.finish();
  assertEquals(started.map((s) => s.name), ["a", "b", "c"]);
});

Deno.test("a connection pipelining more than the queue holds is closed", () => {
  const { started, admit } = queue();
  const connection = new Connection();
  for (let i = 0; i <= MAX_WAITING; i++) admit(request(connection, `r${i}`, `Bearer ${TOKEN}`));
  ok(!connection.destroyed);
  admit(request(connection, "one too many", `Bearer ${TOKEN}`));
  ok(connection.destroyed);
  // What waited is dropped with it, never answered.
  started[0].response.finish();
  assertEquals(started.length, 1);
});

Deno.test("anyone's answers take a few turns; the token's never wait; a fake token is anyone", async () => {
  const { started, admit } = queue();
  for (let i = 0; i < MAX_ANONYMOUS; i++) admit(request(new Connection(), `anyone ${i}`));
  assertEquals(started.length, MAX_ANONYMOUS);
  // A request that only names a token, or a cookie, waits for a turn like any other.
  admit(request(new Connection(), "fake token", "Bearer x"));
  admit(request(new Connection(), "nothing"));
  assertEquals(started.length, MAX_ANONYMOUS);
  admit(request(new Connection(), "the token", `Bearer ${TOKEN}`));
  assertEquals(started.at(-1)?.name, "the token");
  // A turn ends once its answer is made; the next begins in a later turn of the event loop.
  started[0].response.finish();
  await laterTurn();
  await laterTurn();
  ok(started.some((s) => s.name === "fake token"));
  ok(!started.some((s) => s.name === "nothing"));
});
